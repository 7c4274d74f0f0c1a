"""Each column of the table for one runnable script: what is run, in which fresh tree, and how
its outcome becomes a cell.

    run            the original under `tf1clip run --steps N` (the TF 1.x face)
    compat         `tf1clip migrate --to compat` of the script's working folder: the file's status
    compat.run     the compat output under plain python, cut after N updates
    compat.parity  `tf1clip parity ORIGINAL COMPAT --steps N`
    tf2.tier       `tf1clip migrate --to tf2`: the tier the file reached (tf2, or compat with why)
    tf2.run        that output under plain python, cut after N updates
    tf2.parity     `tf1clip parity ORIGINAL TF2OUT --steps N`: dropout on (keyed draws, parity's default
                   for TF 2 code)
    tf2.parity.nodrop  the same with `--no-dropout` (dropout the identity), for comparison
    upgrade.run    TensorFlow's own `tf_upgrade_v2` output under plain python (the baseline)

"Plain python, cut after N updates" is `python -m tf1clip.parity.record --side new --steps N`:
the recorder's hooks count updates without putting the TF 1.x face in front of the script.
A column whose input failed is `skip` (parity needs both runs); parity of a script that
changes no variable is `n/a`.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from realworld import proc
from realworld.manifest import Entry
from realworld.workspace import Tree, Workspace

SEEDED = Path(__file__).resolve().parent / "seeded.py"  # runs a setup script with its generators seeded

COLUMNS = ("run", "compat", "compat.run", "compat.parity", "tf2.tier", "tf2.run", "tf2.parity", "tf2.parity.nodrop",
           "upgrade.run")
PASSING = {"ok", "tf2"}          # what the counts count; tf2.tier's "compat" is a fallback, not a pass
ROOT = Path(__file__).resolve().parents[2]


class SetupFailed(Exception):
    """A setup command of the entry failed: (one line, evidence)."""


@dataclass
class Cell:
    status: str                  # ok | fail | timeout | skip | n/a; tf2.tier: tf2 | compat | fail | timeout
    seconds: float | None = None
    reason: str = ""             # one line: why it failed (or, for tf2.tier "compat", why not tf2)
    evidence: str = ""           # the output's last lines
    detail: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"status": self.status, "seconds": None if self.seconds is None else round(self.seconds, 1),
                "reason": self.reason, "evidence": self.evidence, "detail": self.detail}


@dataclass
class Tools:
    """How to run each tool, and what the installed tf1clip can do (found once, at start)."""
    python: str = sys.executable
    upgrade: str = str(Path(sys.executable).with_name("tf_upgrade_v2"))
    run_steps: bool = False      # `tf1clip run --steps N` exists
    no_dropout: bool = False     # `tf1clip parity --no-dropout` exists
    root: bool = False           # `tf1clip parity --root DIR` exists
    env: dict = field(default_factory=dict)


def job_env(extra_path: Path = ROOT) -> dict:
    """What every step runs with: this checkout's tf1clip first on the path, quiet TensorFlow,
    no display, fixed hashing, and no way out to the network (downloads fail at once)."""
    env = dict(os.environ)
    env.pop("TF_USE_LEGACY_KERAS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(extra_path), env.get("PYTHONPATH", "")) if p)
    dead = "http://127.0.0.1:9"
    env.update({"MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONHASHSEED": "0",
                "PYTHONWARNINGS": "ignore", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
                "http_proxy": dead, "https_proxy": dead, "HTTP_PROXY": dead, "HTTPS_PROXY": dead,
                "no_proxy": "", "NO_PROXY": ""})
    return env


class ScriptRun:
    """All columns for one entry, in its own scratch folder."""

    def __init__(self, entry: Entry, ws: Workspace, tools: Tools, steps: int, progress=None):
        self.entry, self.ws, self.tools, self.steps = entry, ws, tools, steps
        self.home = ws.scratch / "scripts" / re.sub(r"[^\w.-]+", "_", entry.name)
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir(parents=True)
        self.logs = self.home / "logs"
        self.progress = progress or (lambda column, cell: None)

    def all_columns(self) -> dict[str, Cell]:
        cells: dict[str, Cell] = {}

        def put(column, make):
            try:
                cells[column] = make()
            except SetupFailed as exc:
                cells[column] = Cell("fail", reason=exc.args[0], evidence=exc.args[1])
            except Exception as exc:  # noqa: BLE001 - a harness problem is shown, never hidden
                cells[column] = Cell("fail", reason=f"harness: {type(exc).__name__}: {exc}")
            self.progress(column, cells[column])

        put("run", self.original)
        put("compat", lambda: self.migration_cell("compat"))
        put("compat.run", lambda: self.output_run("compat", cells["compat"]))
        put("compat.parity", lambda: self.parity("compat", cells["run"], cells["compat.run"]))
        put("tf2.tier", lambda: self.migration_cell("tf2"))
        put("tf2.run", lambda: self.output_run("tf2", cells["tf2.tier"]))
        put("tf2.parity", lambda: self.parity("tf2", cells["run"], cells["tf2.run"]))
        put("tf2.parity.nodrop", lambda: self.parity("tf2", cells["run"], cells["tf2.run"], no_dropout=True))
        put("upgrade.run", self.upgrade_run)
        return cells

    def fresh(self, label: str, overlay: Path | None = None) -> Tree:
        """A fresh tree for one step, after the entry's setup commands (plain python, in its
        working folder: what the project's README says to run first), with Python's and NumPy's
        generators seeded, so that every tree gets the same prepared data (`seeded.py`)."""
        tree = self.ws.tree(self.entry, self.home / label, overlay=overlay)
        for number, script in enumerate(self.entry.setup):
            done = proc.run([self.tools.python, str(SEEDED), *shlex.split(script)], tree.cwd, self.tools.env,
                            self.entry.timeout,
                            self.logs, f"{label.replace('/', '-')}.setup{number}")
            if done.returncode != 0:
                raise SetupFailed(f"setup `python {script}` failed: {proc.failure_line(done.stderr, done.stdout)}",
                                  proc.tail(done.stderr))
        return tree

    # ---- the original -----------------------------------------------------------------------
    def original(self) -> Cell:
        tree = self.fresh("run")
        if self.tools.run_steps:
            cmd = [self.tools.python, "-m", "tf1clip", "run", "--steps", str(self.steps), tree.script]
            record = None
        else:  # before `run --steps`: the recorder's OLD side is the same face with a step cut
            record = self.home / "run-record"
            cmd = [self.tools.python, "-m", "tf1clip.parity.record", "--side", "old", "--out", record,
                   "--steps", str(self.steps), "--", tree.script]
        env = dict(self.tools.env, TF_USE_LEGACY_KERAS="1") if record else self.tools.env
        done = proc.run([*cmd, *self.entry.args], tree.cwd, env, self.entry.timeout, self.logs, "run")
        cell = _process_cell(done)
        cell.detail["command"] = "tf1clip run --steps" if record is None else "tf1clip.parity.record --side old"
        if record is None:  # its one line when the cut stopped the script; none when it ran to its end
            cell.detail["stopped"] = f"stopped after {self.steps} updates" in done.stderr
        _add_record(cell, record)
        return cell

    # ---- migrations -------------------------------------------------------------------------
    def migration(self, to: str) -> tuple[Path, dict | None, proc.Finished]:
        """`tf1clip migrate WORKDIR --to TO --outtree OUT`, once per working folder."""
        entry = self.entry

        def make():
            source = self.ws.pristine(entry) / entry.workdir
            base = self.ws.cache / "migrate" / to / f"{entry.repo.replace('/', '+')}-{entry.commit[:12]}" / \
                (entry.workdir.replace("/", "+") or "_root")
            shutil.rmtree(base, ignore_errors=True)
            base.mkdir(parents=True)
            out, report = base / "out", base / "report.json"
            done = proc.run([self.tools.python, "-m", "tf1clip", "migrate", source, "--to", to, "--outtree", out,
                             "--report", report], base, self.tools.env, max(self.entry.timeout, 600), base, "migrate")
            data = json.loads(report.read_text()) if report.is_file() else None
            return out, data, done
        return self.ws.once(("migrate", to, entry.repo, entry.commit, entry.workdir), make)

    def migration_cell(self, to: str) -> Cell:
        out, report, done = self.migration(to)
        if report is None:
            cell = _process_cell(done)
            cell.status = "timeout" if done.timed_out else "fail"
            return cell
        target = str(self.ws.pristine(self.entry) / self.entry.path)
        item = next((f for f in report.get("files", []) if os.path.abspath(f.get("path", "")) == target), None)
        if item is None:
            return Cell("fail", done.seconds, reason=f"migrate: {self.entry.path} is not in the report")
        status = item.get("status")
        detail = {"status": status, "changes": len(item.get("changes", [])),
                  "left_for_human": [f"{n.get('line')}: {n.get('message')}" for n in item.get("left_for_human", [])],
                  "runtime": item.get("runtime", [])}
        if status not in ("changed", "unchanged"):
            why = item.get("error") or item.get("reason") or item.get("message") or json.dumps(item)[:300]
            return Cell("fail", done.seconds, reason=f"migrate {status}: {why}", detail=detail)
        if to == "compat":
            return Cell("ok", done.seconds, detail=detail)
        tier = item.get("tier", "compat")
        reason = ""
        if tier != "tf2" and item.get("left_for_human"):
            first = item["left_for_human"][0]
            reason = f"line {first.get('line')}: {first.get('message')}"
        return Cell("tf2" if tier == "tf2" else "compat", done.seconds, reason=reason, detail=detail)

    def output_run(self, to: str, migrated: Cell) -> Cell:
        if migrated.status not in ("ok", "tf2", "compat"):
            return Cell("skip", reason=f"migrate --to {to} failed")
        out, _, _ = self.migration(to)
        tree = self.fresh(to, overlay=out)
        return self._record_new(tree, f"{to}.run")

    def _record_new(self, tree, label: str) -> Cell:
        record = self.home / f"{label}-record"
        cmd = [self.tools.python, "-m", "tf1clip.parity.record", "--side", "new", "--out", record,
               "--steps", str(self.steps), "--", tree.script, *self.entry.args]
        cell = _process_cell(proc.run(cmd, tree.cwd, self.tools.env, self.entry.timeout, self.logs, label))
        _add_record(cell, record)
        return cell

    # ---- parity -----------------------------------------------------------------------------
    def parity(self, to: str, original: Cell, output: Cell, no_dropout: bool = False) -> Cell:
        if not self.entry.trains:
            return Cell("n/a", reason="changes no variable: nothing to compare")
        if original.status != "ok" or output.status != "ok":
            which = "the original" if original.status != "ok" else f"the {to} output"
            return Cell("skip", reason=f"{which} did not run")
        out, _, _ = self.migration(to)
        if no_dropout and not self.tools.no_dropout:
            return Cell("n/a", reason="this tf1clip's parity has no --no-dropout")
        label = f"{to}.nodrop" if no_dropout else to
        old = self.fresh(f"parity-{label}/old")
        new = self.fresh(f"parity-{label}/new", overlay=out)
        result = self.home / f"parity-{label}.json"
        cmd = [self.tools.python, "-m", "tf1clip", "parity", old.script, new.script, "--steps", str(self.steps),
               "--json", result, "--timeout", str(self.entry.timeout)]
        if no_dropout:
            cmd.append("--no-dropout")
        if self.tools.root:  # each side in a copy of the whole repository, as in a user's checkout
            cmd += ["--root", str(old.root)]
        if self.entry.args:
            cmd += ["--", *self.entry.args]
        done = proc.run(cmd, old.cwd, self.tools.env, 2 * self.entry.timeout + 60, self.logs, f"{label}.parity")
        cell = _process_cell(done)
        cell.detail["no_dropout"] = "--no-dropout" in cmd
        if done.returncode == 1 and result.is_file():
            data = json.loads(result.read_text())
            problems = data.get("problems") or ["diverged"]
            cell.reason = f"diverged: {_divergence(data) or problems[0]}"
            cell.detail["problems"] = problems
        return cell

    # ---- the baseline -----------------------------------------------------------------------
    def upgrade(self) -> tuple[Path, proc.Finished]:
        """`tf_upgrade_v2 --intree WORKDIR --outtree OUT`, once per working folder."""
        entry = self.entry

        def make():
            source = self.ws.pristine(entry) / entry.workdir
            base = self.ws.cache / "upgrade" / f"{entry.repo.replace('/', '+')}-{entry.commit[:12]}" / \
                (entry.workdir.replace("/", "+") or "_root")
            shutil.rmtree(base, ignore_errors=True)
            base.mkdir(parents=True)
            out = base / "out"
            done = proc.run([self.tools.upgrade, "--intree", source, "--outtree", out, "--reportfile",
                             base / "report.txt"], base, self.tools.env, max(entry.timeout, 600), base, "upgrade")
            return out, done
        return self.ws.once(("upgrade", entry.repo, entry.commit, entry.workdir), make)

    def upgrade_run(self) -> Cell:
        out, done = self.upgrade()
        rel = os.path.relpath(self.entry.path, self.entry.workdir or ".")
        converted = out / rel
        detail = {}
        if self.entry.notebook or not converted.is_file():
            # notebooks are skipped in tree mode; a tree run that aborted converts nothing: one file then
            detail["tree_mode"] = "notebook" if self.entry.notebook else "aborted: " + proc.failure_line(done.stderr)
            single = self.home / "upgrade-single" / Path(rel).name
            single.parent.mkdir(parents=True, exist_ok=True)
            one = proc.run([self.tools.upgrade, "--infile", self.ws.pristine(self.entry) / self.entry.path,
                            "--outfile", single, "--reportfile", single.with_suffix(".report.txt")],
                           single.parent, self.tools.env, self.entry.timeout, self.logs, "upgrade.convert")
            if not single.is_file() or single.stat().st_size == 0:
                cell = _process_cell(one)
                cell.status = "fail" if not one.timed_out else "timeout"
                cell.reason = f"tf_upgrade_v2 wrote no output: {cell.reason}"
                return cell
            overlay = self.home / "upgrade-overlay"
            if out.is_dir():
                shutil.copytree(out, overlay, dirs_exist_ok=True)
            (overlay / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(single, overlay / rel)
            out = overlay
        tree = self.fresh("upgrade", overlay=out)
        cell = self._record_new(tree, "upgrade.run")
        cell.detail.update(detail)
        return cell


def _process_cell(done: proc.Finished) -> Cell:
    if done.timed_out:
        return Cell("timeout", done.seconds, reason=f"no end within {done.seconds:.0f} s",
                    evidence=proc.tail(done.stderr) or proc.tail(done.stdout))
    if done.returncode == 0:
        return Cell("ok", done.seconds)
    return Cell("fail", done.seconds, reason=proc.failure_line(done.stderr, done.stdout),
                evidence=proc.tail(done.stderr + "\n--- stdout ---\n" + proc.tail(done.stdout, 8)),
                detail={"exit": done.returncode})


def _divergence(result: dict) -> str:
    """Which quantities left tolerance at the first divergent step: `step 1: grad_norm_pre`
    (equal losses with different gradient norms point at different batches; a different first
    loss at different data or starting weights)."""
    rtol, atol = result.get("rtol", 0.0), result.get("atol", 0.0)
    for opt in result.get("optimizers", []):
        step = opt.get("first_divergent_step")
        row = next((r for r in opt.get("rows", []) if r.get("step") == step), None)
        if row is None:
            continue
        fields = [name for name in ("loss", "grad_norm_pre", "grad_norm_post")
                  if row.get(f"{name}_abs") is not None and row.get(f"{name}_new") is not None
                  and not row[f"{name}_abs"] <= atol + rtol * abs(row[f"{name}_new"])]
        return f"optimizer {opt.get('index')} step {step}: {', '.join(fields) or 'values'} out of tolerance"
    return ""


def _add_record(cell: Cell, record: Path | None) -> None:
    """Updates the recorder saw (per optimizer), and whether the step cut stopped the run."""
    if record is None or not (record / "record.json").is_file():
        return
    try:
        data = json.loads((record / "record.json").read_text())
    except (OSError, ValueError):
        return
    cell.detail["updates"] = [len(o.get("steps", [])) for o in data.get("optimizers", [])]
    cell.detail["record_status"] = data.get("status")

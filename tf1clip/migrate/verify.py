"""`tf1clip migrate --to tf2 --verify [--verify-steps N]`: keep a TF2 output only if it passes parity.

For each file the TF2 tier converted (a script with a training loop), `tf1clip parity ORIGINAL
CONVERTED --steps N` runs in a scratch copy of the file's directory (the scripts may write
checkpoints or read data beside them; the user's tree is never touched), with dropout on: parity
keys each dropout mask by what the dropout is on both sides, so a wrong rate fails.
Parity passes: the TF2 output is kept. It diverges, crashes or times out: the file gets its
compat-tier output, and the report says why. Either way the file's report carries the parity
table (the per-step losses of both sides).

Runs each parity in a subprocess (it imports TensorFlow; `migrate` itself never does).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Optional

# Directory entries not copied into the scratch tree; files above this size are linked, not copied.
SKIP = shutil.ignore_patterns(".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".pytest_cache",
                              ".mypy_cache", ".tox", "node_modules")
LINK_ABOVE = 32 * 1024 * 1024
DEFAULT_STEPS = 10


def _env() -> dict:
    """The parity subprocess imports the same tf1clip as this process."""
    env = dict(os.environ)
    env.pop("TF_USE_LEGACY_KERAS", None)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def parity_options() -> list:
    """Options for verification's parity runs: none, parity's own policy (keyed dropout draws for a
    TF 2 NEW) judges dropout too."""
    return []


def _copy(source_dir: str, scratch: str) -> str:
    def copy(src, dst, *, follow_symlinks=True):
        if os.path.getsize(src) > LINK_ABOVE:
            os.symlink(os.path.abspath(src), dst)  # large data is read, not rewritten: link it
            return dst
        return shutil.copy2(src, dst, follow_symlinks=follow_symlinks)

    tree = os.path.join(scratch, "tree")
    shutil.copytree(source_dir, tree, symlinks=True, ignore=SKIP, copy_function=copy)
    return tree


def verify(source: str, converted: str, steps: int = DEFAULT_STEPS, options: Optional[list] = None,
           timeout: float = 900.0) -> dict:
    """Run parity between the file at `source` and its TF2 text `converted`; the parity entry of the report."""
    options = parity_options() if options is None else options
    started = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="tf1clip-verify-")
    entry = {"steps": steps, "passed": False, "options": list(options)}
    try:
        tree = _copy(os.path.dirname(os.path.abspath(source)), scratch)
        name = os.path.basename(source)
        old = os.path.join(tree, name)
        new = os.path.join(tree, os.path.splitext(name)[0] + "_tf2_verify.py")
        with open(new, "w", encoding="utf-8") as handle:
            handle.write(converted)
        report = os.path.join(scratch, "parity.json")
        command = [sys.executable, "-m", "tf1clip", "parity", old, new, "--steps", str(steps), "--json", report,
                   *options]
        try:
            proc = subprocess.run(command, cwd=tree, capture_output=True, text=True, timeout=timeout, env=_env())
        except subprocess.TimeoutExpired:
            entry.update(exit=None, error=f"parity did not finish within {timeout:g} s")
            return entry
        entry["exit"] = proc.returncode
        if os.path.isfile(report):
            with open(report, encoding="utf-8") as handle:
                entry.update(_table(json.load(handle)))
        entry["passed"] = proc.returncode == 0 and bool(entry.get("optimizers"))
        if proc.returncode not in (0, 1):
            entry["error"] = _last_line(proc.stderr)
    except OSError as exc:
        entry.update(exit=None, error=f"cannot prepare the scratch copy: {exc.strerror or exc}")
    finally:
        entry["seconds"] = round(time.monotonic() - started, 1)
        shutil.rmtree(scratch, ignore_errors=True)
    return entry


def _table(result: dict) -> dict:
    """The parity JSON, reduced to what the migrate report shows: per optimizer the per-step losses."""
    optimizers = []
    for opt in result.get("optimizers", []):
        rows = [{"step": r["step"], "loss_old": r.get("loss_old"), "loss_new": r.get("loss_new"), "ok": r["ok"]}
                for r in opt.get("rows", [])]
        weights = opt.get("weights", [])
        optimizers.append({"old": opt.get("old_name"), "new": opt.get("new_name"), "rows": rows,
                           "first_divergent_step": opt.get("first_divergent_step"),
                           "weights_equal": sum(1 for w in weights if w.get("ok")), "weights": len(weights)})
    return {"optimizers": optimizers, "problems": list(result.get("problems", [])),
            "rtol": result.get("rtol"), "atol": result.get("atol")}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines()
             if line.strip() and not line.startswith(("I0000", "W0000", "E0000", "WARNING: All log"))]
    return lines[-1] if lines else "(no output)"


def why_not(entry: dict) -> str:
    """One line: why the TF2 output was not kept."""
    if entry.get("error"):
        return f"parity could not compare it ({entry['error']})"
    if entry.get("problems"):
        return "parity diverged: " + "; ".join(entry["problems"][:2])
    return f"parity failed (exit {entry.get('exit')})"


def text_lines(path: str, entry: dict, max_rows: int = 12) -> list:
    """The parity table for the text report."""
    verdict = "PASS" if entry["passed"] else "FAIL"
    out = [f"  {path}: parity ({entry['steps']} steps{', ' + ' '.join(entry['options']) if entry['options'] else ''}"
           f", {entry.get('seconds', 0):g} s): {verdict}"]
    for opt in entry.get("optimizers", []):
        out.append(f"    {opt['old']} -> {opt['new']}: final weights {opt['weights_equal']}/{opt['weights']} equal"
                   + (f", first divergent step {opt['first_divergent_step']}"
                      if opt["first_divergent_step"] is not None else ""))
        out.append(f"    {'step':>6} {'loss OLD':>14} {'loss NEW':>14}")
        for row in opt["rows"][:max_rows]:
            old, new = row["loss_old"], row["loss_new"]
            out.append(f"    {row['step']:>6} {_num(old):>14} {_num(new):>14}{'' if row['ok'] else '  <-'}")
    if entry.get("error"):
        out.append(f"    {entry['error']}")
    return out


def _num(value) -> str:
    return "-" if value is None else f"{value:.7g}"

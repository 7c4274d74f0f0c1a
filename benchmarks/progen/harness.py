"""One seed through the three jobs, in a scratch folder of its own:

    run      the generated TF 1.x program under `tf1clip run --steps N` (it must run: a program
             that does not is a generator bug)
    migrate  `tf1clip migrate train.py --to tf2 --outtree out --report report.json`: the tier
             the file reached, and for the compat tier the report's first reason
    parity   for a TF2-tier output, `tf1clip parity train.py out/train.py --steps N --json P`
             (parity's default policy for TF 2 code: dropout keyed): PASS, FAIL (the TF2 output
             trains differently: a wrong conversion), ERROR (the two could not be compared)

The processes are run by the proving ground's `realworld.proc` (own session, timeout, output
kept in files) with its environment (`realworld.jobs.job_env`: this checkout's tf1clip first
on the path, quiet TensorFlow, no network).
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from progen import generate
from realworld import proc

PROGRAM = "train.py"


@dataclass
class Settings:
    scratch: Path
    env: dict
    steps: int | None = None        # None: the program's own step count (it runs to its end)
    parity: bool = True
    timeout: float = 300.0
    keep: bool = False
    python: str = sys.executable
    where: dict | None = None       # dimensions narrowed to some values (choices.parse_where)


@dataclass
class Outcome:
    seed: int
    dims: dict
    run: str = ""                   # ok | fail | timeout
    run_reason: str = ""
    tier: str = ""                  # tf2 | compat | error
    reason: str = ""                # compat: the report's first reason; error: why migrate failed
    reasons: list = field(default_factory=list)   # every reason the report gave for the compat tier
    parity: str = ""                # PASS | FAIL | ERROR | "" (not run)
    parity_reason: str = ""
    seconds: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"seed": self.seed, "dims": self.dims, "run": self.run, "run_reason": self.run_reason,
                "tier": self.tier, "reason": self.reason, "reasons": self.reasons, "parity": self.parity,
                "parity_reason": self.parity_reason, "seconds": self.seconds}


def _tail(done: proc.Finished) -> str:
    if done.timed_out:
        return f"no end within {done.seconds:.0f} s"
    return proc.failure_line(done.stderr, done.stdout)


def one_seed(seed: int, s: Settings) -> Outcome:
    source, ch = generate(seed, s.where)
    out = Outcome(seed, {**ch.dims, "layout": ch.details["layout"]})
    home = s.scratch / f"seed-{seed}"
    shutil.rmtree(home, ignore_errors=True)
    (home / "src").mkdir(parents=True)
    script = home / "src" / PROGRAM
    script.write_text(source)
    logs = home / "logs"
    steps = s.steps or program_steps(source)
    try:
        _run(out, s, home, script, steps, logs)
        _migrate(out, s, home, script, logs)
        if s.parity and out.tier == "tf2" and out.run == "ok":
            _parity(out, s, home, script, steps, logs)
    finally:
        if not s.keep:
            shutil.rmtree(home, ignore_errors=True)
    return out


def program_steps(source: str) -> int:
    """The `n_steps = N` a generated program trains for."""
    for line in source.splitlines():
        if line.startswith("n_steps = "):
            return int(line.split("=")[1])
    raise ValueError("a generated program without n_steps")


def _run(out: Outcome, s: Settings, home: Path, script: Path, steps: int, logs: Path) -> None:
    done = proc.run([s.python, "-m", "tf1clip", "run", "--steps", str(steps), script], script.parent, s.env,
                    s.timeout, logs, "run")
    out.seconds["run"] = round(done.seconds, 1)
    out.run = "timeout" if done.timed_out else ("ok" if done.returncode == 0 else "fail")
    if out.run != "ok":
        out.run_reason = _tail(done)


def _migrate(out: Outcome, s: Settings, home: Path, script: Path, logs: Path) -> None:
    report = home / "report.json"
    start = time.monotonic()
    done = proc.run([s.python, "-m", "tf1clip", "migrate", script, "--to", "tf2", "--outtree", home / "out",
                     "--report", report], script.parent, s.env, s.timeout, logs, "migrate")
    out.seconds["migrate"] = round(time.monotonic() - start, 1)
    data = json.loads(report.read_text()) if report.is_file() else None
    item = (data or {}).get("files", [{}])[0] if data and data.get("files") else None
    if item is None or item.get("status") not in ("changed", "unchanged"):
        out.tier = "error"
        why = (item or {}).get("error") or (item or {}).get("reason") or _tail(done)
        out.reason = f"migrate {(item or {}).get('status', 'failed')}: {why}"
        return
    out.tier = "tf2" if item.get("tier") == "tf2" else "compat"
    if out.tier == "compat":
        out.reasons = [f"line {n.get('line')}: {n.get('message')}" for n in item.get("left_for_human", [])]
        out.reason = out.reasons[0] if out.reasons else "(compat tier, no reason given)"


def _parity(out: Outcome, s: Settings, home: Path, script: Path, steps: int, logs: Path) -> None:
    migrated = home / "out" / PROGRAM
    result = home / "parity.json"
    done = proc.run([s.python, "-m", "tf1clip", "parity", script, migrated, "--steps", str(steps), "--json", result,
                     "--timeout", str(int(s.timeout)), "--root", home], home, s.env, 2 * s.timeout + 60, logs,
                    "parity")
    out.seconds["parity"] = round(done.seconds, 1)
    if done.returncode == 0:
        out.parity = "PASS"
    elif done.returncode == 1:
        out.parity = "FAIL"
        out.parity_reason = _divergence(result) or _tail(done)
    else:
        out.parity = "ERROR"
        out.parity_reason = _tail(done)


def _divergence(result: Path) -> str:
    """parity's problems (what differed), joined: `final weights differ: ...; step 2 loss ...`."""
    if not result.is_file():
        return ""
    try:
        data = json.loads(result.read_text())
    except ValueError:
        return ""
    problems = data.get("problems") or []
    return "; ".join(str(p) for p in problems)[:400]

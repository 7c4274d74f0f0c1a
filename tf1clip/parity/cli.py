"""`tf1clip parity OLD NEW`: run both scripts in subprocesses, compare, report.

OLD runs under the compat runtime (graph mode, TF_USE_LEGACY_KERAS=1), NEW under plain
TensorFlow 2.21; each in its own process with a timeout, in the current directory, with
PYTHONHASHSEED=0 and Python/NumPy/TF seeds fixed. Neither script is edited.
Exit: 0 pass, 1 diverged, 2 error (a script crashed, timed out, or its variables don't match).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from tf1clip._source import check_source
from tf1clip.arguments import UsageError, make_parser
from tf1clip.parity import compare as cmp
from tf1clip.parity.record import EXIT_CRASH, EXIT_MISMATCH, EXIT_NO_STRATEGY


class ParityError(Exception):
    """A run that could not be compared (crash, timeout, variable mismatch): exit 2."""


@dataclass
class ParityOutcome:
    result: dict
    report: str
    old_record: dict = field(repr=False, default=None)
    new_record: dict = field(repr=False, default=None)

    @property
    def passed(self) -> bool:
        return self.result["passed"]


def run_parity(old: str, new: str, steps: int | None = None, rtol: float = cmp.DEFAULT_RTOL,
               atol: float = cmp.DEFAULT_ATOL, args=(), deterministic: bool = False,
               timeout: float = 600.0, cwd: str | None = None, progress=None,
               new_env: dict | None = None, replicas: int | None = None) -> ParityOutcome:
    """Record OLD then NEW and compare. Raises ParityError when they cannot be compared."""
    for path in (old, new):
        if not os.path.isfile(path):
            raise ParityError(f"{path}: no such file")
        with open(path, "rb") as handle:
            problem = check_source(path, handle.read())
        if problem is not None:
            raise ParityError(problem.one_line())
    with tempfile.TemporaryDirectory(prefix="tf1clip-parity-") as tmp:
        old_dir, new_dir = os.path.join(tmp, "old"), os.path.join(tmp, "new")
        common = [f"--steps={steps}"] if steps else []
        if deterministic:
            common.append("--deterministic")
        _record("OLD", old, ["--side=old", f"--out={old_dir}", *common], args, timeout, cwd, progress,
                env={"TF_USE_LEGACY_KERAS": "1"})
        old_record = cmp.load_record(old_dir)
        if not old_record["optimizers"] or not old_record.get("initial"):
            raise ParityError(f"{old}: made no optimizer update under the compat runtime; nothing to compare")
        init = os.path.join(old_dir, "initial.npz")
        new_options = [f"--replicas={replicas}"] if replicas else []
        _record("NEW", new, ["--side=new", f"--out={new_dir}", f"--init={init}", *common, *new_options], args,
                timeout, cwd,
                progress, env=new_env or {}, mismatch_dir=new_dir)
        new_record = cmp.load_record(new_dir)
    result = cmp.compare(old_record, new_record, rtol=rtol, atol=atol)
    result["old"], result["new"] = os.path.abspath(old), os.path.abspath(new)
    result["steps_requested"] = steps
    return ParityOutcome(result, cmp.format_report(result, os.path.basename(old), os.path.basename(new)),
                         old_record, new_record)


def _record(label, script, options, args, timeout, cwd, progress, env, mismatch_dir=None):
    full_env = dict(os.environ)
    full_env.pop("TF_USE_LEGACY_KERAS", None)
    full_env.update({"PYTHONHASHSEED": "0", "TF_CPP_MIN_LOG_LEVEL": full_env.get("TF_CPP_MIN_LOG_LEVEL", "2")})
    full_env.update(env)
    command = [sys.executable, "-m", "tf1clip.parity.record", *options, "--", os.path.abspath(script), *args]
    if progress:
        progress(f"running {label}: {script}")
    try:
        proc = subprocess.run(command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ParityError(f"{script}: {label} did not finish within {timeout:g} s (raise --timeout or lower --steps)")
    if proc.returncode == 0:
        return
    if proc.returncode == EXIT_MISMATCH and mismatch_dir:
        with open(os.path.join(mismatch_dir, "record.json")) as handle:
            mismatch = json.load(handle)["mismatch"]
        raise ParityError(_mismatch_message(script, mismatch))
    tail = _last_lines(proc.stderr)
    if proc.returncode == EXIT_CRASH:
        raise ParityError(f"{script}: {label} crashed: {tail}")
    if proc.returncode == EXIT_NO_STRATEGY and mismatch_dir:
        with open(os.path.join(mismatch_dir, "record.json")) as handle:
            raise ParityError(f"{script}: {json.load(handle)['error']}")
    raise ParityError(f"{script}: {label} failed (exit {proc.returncode}): {tail}")


def _last_lines(text: str, n: int = 1) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip() and not line.startswith(("I0000", "W0000", "E0000"))]
    return " | ".join(lines[-n:]) if lines else "(no output)"


def _mismatch_message(script, mismatch) -> str:
    old = mismatch.get("old", [])
    new = mismatch.get("new", [])
    width = max([len(_describe(o)) for o in old] + [10])
    lines = [f"{script}: variables of optimizer {mismatch.get('optimizer')} do not match OLD's "
             "(matched by creation order within each shape):",
             f"    {'OLD'.ljust(width)}   NEW"]
    for i in range(max(len(old), len(new))):
        left = _describe(old[i]) if i < len(old) else ""
        right = new[i] if i < len(new) else None
        right_text = "" if right is None else f"{right['name']} {tuple(right['shape'])}" + (
            "" if right.get("matched") else "  (no OLD variable of this shape left)")
        lines.append(f"    {left.ljust(width)}   {right_text}")
    return "\n".join(lines)


def _describe(entry) -> str:
    return f"{entry.get('key')} {tuple(entry.get('shape', ()))}"


def main(argv: list[str], debug: bool = False) -> int:
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    parser = make_parser("parity", "Prove that NEW (TF2) trains like OLD (TF1) from the same start.")
    parser.add_argument("old", help="the TF 1.x script (run under the compat runtime)")
    parser.add_argument("new", help="the migrated TF 2 script (run under plain TensorFlow)")
    parser.add_argument("--steps", type=int, help="compare the first N updates (default: all)")
    parser.add_argument("--rtol", type=float, default=cmp.DEFAULT_RTOL)
    parser.add_argument("--atol", type=float, default=cmp.DEFAULT_ATOL)
    parser.add_argument("--json", metavar="FILE", help="write the full comparison as JSON")
    parser.add_argument("--plot", metavar="FILE.png", help="write a PNG of both loss curves and their difference")
    parser.add_argument("--deterministic", action="store_true", help="turn on TF op determinism in both runs")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    parser.add_argument("--replicas", type=int, metavar="N",
                        help="run NEW under a MirroredStrategy over N logical CPU devices (same global batch)")
    opts = parser.parse_args(argv)
    if opts.steps is not None and opts.steps < 1:
        raise UsageError("parity: --steps must be >= 1")
    if opts.replicas is not None and opts.replicas < 1:
        raise UsageError("parity: --replicas must be >= 1")
    try:
        outcome = run_parity(opts.old, opts.new, steps=opts.steps, rtol=opts.rtol, atol=opts.atol,
                             args=script_args, deterministic=opts.deterministic, timeout=opts.timeout,
                             replicas=opts.replicas,
                             progress=lambda msg: print(f"tf1clip parity: {msg}", file=sys.stderr, flush=True))
    except ParityError as exc:
        print(f"tf1clip parity: error: {exc}", file=sys.stderr)
        return 2
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        print(cmp.format_report(outcome.result, os.path.basename(opts.old), os.path.basename(opts.new), color=True))
    else:
        print(outcome.report)
    if opts.json:
        with open(opts.json, "w") as handle:
            json.dump(outcome.result, handle, indent=1, default=str)
    if opts.plot:
        cmp.plot(outcome.result, opts.plot)
    return 0 if outcome.passed else 1

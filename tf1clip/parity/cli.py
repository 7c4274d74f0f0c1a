"""`tf1clip parity OLD NEW`: run both scripts in subprocesses, compare, report.

OLD runs under the compat runtime (graph mode, TF_USE_LEGACY_KERAS=1), NEW under plain
TensorFlow 2.21 (under the compat runtime too when it is an identical copy of OLD: the
harness checking itself). Each runs in its own process with a timeout, in its own fresh copy
of the root its scripts can reach (workdir.py, layout.py), with PYTHONHASHSEED=0 and the randomness policy of
randomness.py. Neither script nor any file of the user's is edited.
Exit: 0 pass, 1 diverged, 2 error (a script crashed, timed out, or its variables don't match).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from tf1clip._source import check_source
from tf1clip.arguments import UsageError, make_parser
from tf1clip.parity import compare as cmp
from tf1clip.parity import layout, printed, workdir
from tf1clip.parity import randomness
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
               new_env: dict | None = None, replicas: int | None = None, transfer: bool = True,
               no_dropout: bool = False, keep: bool = False, root: str | None = None,
               same_seeds: bool = False) -> ParityOutcome:
    """Record OLD then NEW, each in a fresh copy of `root` (default: workdir.find_root, the
    work tree holding `cwd`), from `cwd`'s place inside it, and compare.

    Raises ParityError when they cannot be compared. With keep=True the copies stay and the
    result says where (result["kept"]); otherwise they are removed.
    """
    sources = []
    for path in (old, new):
        if not os.path.isfile(path):
            raise ParityError(f"{path}: no such file")
        with open(path, "rb") as handle:
            sources.append(handle.read())
        problem = check_source(path, sources[-1])
        if problem is not None:
            raise ParityError(problem.one_line())
    same_program = sources[0] == sources[1]
    chosen = randomness.choose(no_dropout, same_program, sources[1], same_seeds)
    base = os.path.abspath(cwd or os.getcwd())
    try:
        root = layout.choose_root(base, root, (old, new))
    except layout.LayoutError as exc:
        raise ParityError(str(exc)) from None
    tmp = tempfile.mkdtemp(prefix="tf1clip-parity-")
    sides, places, mirrors = {}, {}, {}
    try:
        try:
            plan = workdir.survey(root, exclude=(tmp,), within=(base,))
            for side in ("old", "new"):
                mirrors[side] = workdir.build(plan, os.path.join(tmp, side, "work"), hard_links=True,
                                              copy_under=layout.copied(base, root, (old, new)))
                sides[side] = mirrors[side].target
                places[side] = layout.place(base, root, sides[side])
        except (workdir.WorkdirError, OSError) as exc:
            raise ParityError(str(exc)) from None
        old_dir, new_dir = os.path.join(tmp, "old", "record"), os.path.join(tmp, "new", "record")
        common = [f"--steps={steps}"] if steps else []
        if deterministic:
            common.append("--deterministic")
        if chosen == randomness.NO_DROPOUT:
            common.append("--no-dropout")
        elif chosen == randomness.KEYED:
            common.append("--keyed-dropout")
        common.append(f"--protect={root}")
        old_printed = _record("OLD", _in_copy(old, root, sides["old"]),
                ["--side=old", f"--out={old_dir}", f"--copy={sides['old']}", *common], args,
                timeout, places["old"], progress, env={"TF_USE_LEGACY_KERAS": "1"}, shown=old,
                paths=layout.UserPaths(root, sides["old"], base))
        old_record = cmp.load_record(old_dir)
        if not old_record["optimizers"] or not old_record.get("initial"):
            raise ParityError(f"{old}: made no update under the compat runtime (no optimizer update and no "
                              "Session.run that writes a model variable); nothing to compare")
        init = os.path.join(old_dir, "initial.npz")
        new_options = [f"--replicas={replicas}"] if replicas else []
        if not transfer:
            new_options.append("--no-transfer")
        env = dict(new_env or {})
        if same_program:
            new_options.append("--face")
            env["TF_USE_LEGACY_KERAS"] = "1"
        new_printed = _record("NEW", _in_copy(new, root, sides["new"]),
                ["--side=new", f"--out={new_dir}", f"--copy={sides['new']}", f"--init={init}", *common, *new_options],
                args,
                timeout, places["new"], progress, env=env, mismatch_dir=new_dir, shown=new,
                paths=layout.UserPaths(root, sides["new"], base))
        new_record = cmp.load_record(new_dir)
    except ParityError as exc:
        if keep:
            raise ParityError(f"{exc}\n(working copies kept: OLD {sides.get('old')}, NEW {sides.get('new')})") from None
        raise
    finally:
        if keep:
            for made in mirrors.values():
                workdir.show_links(made)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    result = cmp.compare(old_record, new_record, rtol=rtol, atol=atol, initial=not transfer)
    result["old"], result["new"] = os.path.abspath(old), os.path.abspath(new)
    result["steps_requested"] = steps
    result["randomness"] = randomness.policy(chosen)
    result["transfer"] = transfer
    result["old_runtime"] = "TF 1.x eager, compat runtime" if old_record.get("eager") else "TF1 graph, compat runtime"
    result["new_runtime"] = "TF 1.x face (an identical copy of OLD)" if same_program else "plain TensorFlow 2"
    result["kept"] = {"old": sides["old"], "new": sides["new"]} if keep else None
    result["root"] = root
    result["printed"] = printed.compare(old_printed, new_printed)
    return ParityOutcome(result, cmp.format_report(result, os.path.basename(old), os.path.basename(new)),
                         old_record, new_record)


def _in_copy(script: str, base: str, copy: str) -> str:
    """The script a side runs: its copy when it lies in the root, else itself."""
    path = os.path.abspath(script)
    if workdir.inside(path, base):
        return os.path.join(copy, os.path.relpath(path, base))
    return path


def _record(label, script, options, args, timeout, cwd, progress, env, mismatch_dir=None, shown=None, paths=None):
    """Run one side under the recorder; what it printed."""
    shown = shown or script
    full_env = dict(os.environ)
    full_env.pop("TF_USE_LEGACY_KERAS", None)
    full_env.update({"PYTHONHASHSEED": "0", "TF_CPP_MIN_LOG_LEVEL": full_env.get("TF_CPP_MIN_LOG_LEVEL", "2")})
    full_env.update(env)
    command = [sys.executable, "-m", "tf1clip.parity.record", *options, "--", script, *args]
    if progress:
        progress(f"running {label}: {shown}")
    try:
        proc = subprocess.run(command, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ParityError(f"{shown}: {label} did not finish within {timeout:g} s (raise --timeout or lower --steps)")
    if proc.returncode == 0:
        return proc.stdout
    if proc.returncode == EXIT_MISMATCH and mismatch_dir:
        with open(os.path.join(mismatch_dir, "record.json")) as handle:
            mismatch = json.load(handle)["mismatch"]
        raise ParityError(_mismatch_message(shown, mismatch))
    tail = _last_lines(proc.stderr)
    if paths is not None:
        tail = paths.told(tail)
    if proc.returncode == EXIT_CRASH:
        raise ParityError(f"{shown}: {label} crashed: {tail}")
    if proc.returncode == EXIT_NO_STRATEGY and mismatch_dir:
        with open(os.path.join(mismatch_dir, "record.json")) as handle:
            raise ParityError(f"{shown}: {json.load(handle)['error']}")
    raise ParityError(f"{shown}: {label} failed (exit {proc.returncode}): {tail}")


def _last_lines(text: str, n: int = 1) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip() and not line.startswith(("I0000", "W0000", "E0000"))]
    return " | ".join(lines[-n:]) if lines else "(no output)"


def _mismatch_message(script, mismatch) -> str:
    old = mismatch.get("old", [])
    new = mismatch.get("new", [])
    width = max([len(_describe(o)) for o in old] + [10])
    index = mismatch.get("optimizer")
    head = (f"{script}: variables of optimizer {index} do not match OLD's (matched by creation order within "
            "each shape):" if old else
            f"{script}: optimizer {index} of NEW updates variables that no optimizer of OLD that ran updated "
            "(matched by creation order within each shape):")
    lines = [head, f"    {'OLD'.ljust(width)}   NEW"]
    for i in range(max(len(old), len(new))):
        left = _describe(old[i]) if i < len(old) else ""
        right = new[i] if i < len(new) else None
        right_text = "" if right is None else f"{right['name']} {tuple(right['shape'])}" + (
            "" if right.get("matched") else "  (no OLD variable of this shape left)")
        lines.append(f"    {left.ljust(width)}   {right_text}")
    return "\n".join(lines)


def _describe(entry) -> str:
    name = f"{entry['name']} " if entry.get("name") else ""
    return f"{name}{entry.get('key')} {tuple(entry.get('shape', ()))}"


def main(argv: list[str], debug: bool = False) -> int:
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    parser = make_parser("parity", "Prove that NEW (TF2) trains like OLD (TF1) from the same start. Each side "
                                   "runs in its own copy of the repository (--root), with equal seeds; "
                                   "see docs/parity.md.")
    parser.add_argument("old", help="the TF 1.x script (run under the compat runtime)")
    parser.add_argument("new", help="the migrated TF 2 script (run under plain TensorFlow; under the compat "
                                    "runtime when it is an identical copy of OLD)")
    parser.add_argument("--steps", type=int, help="compare the first N updates (default: all)")
    parser.add_argument("--rtol", type=float, default=cmp.DEFAULT_RTOL)
    parser.add_argument("--atol", type=float, default=cmp.DEFAULT_ATOL)
    parser.add_argument("--json", metavar="FILE", help="write the full comparison as JSON")
    parser.add_argument("--plot", metavar="FILE.png", help="write a PNG of both loss curves and their difference")
    parser.add_argument("--deterministic", action="store_true", help="turn on TF op determinism in both runs")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    parser.add_argument("--replicas", type=int, metavar="N",
                        help="run NEW under a MirroredStrategy over N logical CPU devices (same global batch)")
    parser.add_argument("--no-transfer", action="store_true",
                        help="NEW starts from its own initializers (OLD's draw is loaded only where NEW's "
                             "initializer draws from the same distribution); compare the start values too")
    parser.add_argument("--no-dropout", action="store_true",
                        help="run dropout and tf.data shuffles as the identity on both sides (their "
                             "expectation: blind to a wrong dropout rate)")
    parser.add_argument("--same-seeds", action="store_true",
                        help="seed both sides alike even when NEW is TF 2 code (default for the same "
                             "program; TF 2 code otherwise gets keyed dropout draws)")
    parser.add_argument("--keep", action="store_true",
                        help="keep each side's copy of the root; the report says where")
    parser.add_argument("--root", metavar="DIR",
                        help="the folder each side runs in a copy of (it must hold the working directory; "
                             "default: the top of the git work tree holding it, else the working directory)")
    opts = parser.parse_args(argv)
    if opts.steps is not None and opts.steps < 1:
        raise UsageError("parity: --steps must be >= 1")
    if opts.replicas is not None and opts.replicas < 1:
        raise UsageError("parity: --replicas must be >= 1")
    try:
        outcome = run_parity(opts.old, opts.new, steps=opts.steps, rtol=opts.rtol, atol=opts.atol,
                             args=script_args, deterministic=opts.deterministic, timeout=opts.timeout,
                             replicas=opts.replicas, transfer=not opts.no_transfer, no_dropout=opts.no_dropout,
                             keep=opts.keep, root=opts.root, same_seeds=opts.same_seeds,
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
    if outcome.result["errors"]:
        for error in outcome.result["errors"]:
            print(f"tf1clip parity: error: {error}", file=sys.stderr)
        return 2
    return 0 if outcome.passed else 1

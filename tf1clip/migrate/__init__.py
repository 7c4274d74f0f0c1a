"""`tf1clip migrate PATH...`: rewrite a TF 1.x tree so that every file runs on TF 2.21.

    tf1clip migrate PATH... [--to compat|tf2 [--strategy mirrored|multi_worker]]
                    [--diff | --inplace | --outtree DIR]
                    [--check] [--report FILE.json] [-j N] [--verify [--verify-steps N]]

With no output flag (or `--diff`) it prints a unified diff on stdout and writes nothing;
`--inplace` rewrites the files, `--outtree DIR` writes a migrated mirror of the tree (other
files copied). The per-file report and the summary go to stderr, `--report` writes them as
JSON. Exit status: 2 when any file could not be processed (the others still are), else 1
with `--check` when any file would change, else 0. Never imports TensorFlow (`--verify` runs
`tf1clip parity` in subprocesses, see `tf1clip.migrate.verify`).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
from typing import Iterable, Optional

from tf1clip.arguments import UsageError, make_parser
from tf1clip.migrate.report import FileResult, Item, summarize, summary_line, to_json
from tf1clip.migrate.terminal import Progress, print_diff
from tf1clip.migrate.tree import Task, discover

DESCRIPTION = ("Rewrite TF 1.x files (.py, .ipynb) so they run on TF 2.21: compat tier "
               "(tensorflow.compat.v1 + disable_v2_behavior, tf.contrib replaced) or, with --to tf2, "
               "GradientTape + Keras where that is exact. "
               "Prints a diff unless --inplace or --outtree is given; the report goes to stderr.")


def _parser():
    parser = make_parser("migrate", DESCRIPTION)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files and directories to migrate")
    parser.add_argument("--to", choices=("compat", "tf2"), default="compat",
                        help="target tier: compat (runs on TF 2.21 as graph code) or tf2 (GradientTape "
                             "form where it can be done exactly, compat elsewhere; default compat)")
    parser.add_argument("--strategy", choices=("mirrored", "multi_worker"),
                        help="with --to tf2: run the converted train step under tf.distribute "
                             "(MirroredStrategy or MultiWorkerMirroredStrategy): sharded global batch, "
                             "gradients all-reduced once, clipped once, applied once")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--diff", action="store_true", help="print a unified diff, write nothing (the default)")
    out.add_argument("--inplace", action="store_true", help="rewrite the files in place (atomically)")
    out.add_argument("--outtree", metavar="DIR", help="write a migrated mirror of the tree into DIR")
    parser.add_argument("--check", action="store_true", help="exit 1 when any file would change (CI, pre-commit)")
    parser.add_argument("--report", metavar="FILE.json", help="also write the report as JSON")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                        help="parallel processes (0 = one per CPU; default 1)")
    parser.add_argument("--verify", action="store_true",
                        help="with --to tf2: run tf1clip parity on each converted script (in a scratch copy) and "
                             "keep its TF2 output only if parity passes, else write the compat output")
    parser.add_argument("--verify-steps", type=int, default=None, metavar="N",
                        help=f"updates parity compares with --verify (default {DEFAULT_VERIFY_STEPS})")
    return parser


DEFAULT_VERIFY_STEPS = 10


def main(argv: list[str], debug: bool = False) -> int:
    args = _parser().parse_args(argv)
    if args.strategy and args.to != "tf2":
        raise UsageError(f"--strategy {args.strategy} needs --to tf2 (it distributes the TF2 tier's train step)")
    if (args.verify or args.verify_steps is not None) and args.to != "tf2":
        raise UsageError("--verify needs --to tf2 (it proves the TF2 tier's output by parity)")
    if args.verify_steps is not None and not args.verify:
        raise UsageError("--verify-steps needs --verify")
    if args.verify and args.strategy == "multi_worker":
        raise UsageError("--verify with --strategy multi_worker: parity runs one process; verify without the "
                         "strategy (or with --strategy mirrored, checked with parity --replicas 2)")
    steps = args.verify_steps if args.verify_steps is not None else DEFAULT_VERIFY_STEPS
    if steps < 1:
        raise UsageError(f"--verify-steps must be 1 or more, got {steps}")
    if args.jobs < 0:
        raise UsageError(f"-j must be 0 or more, got {args.jobs}")
    jobs = args.jobs or os.cpu_count() or 1
    mode = "inplace" if args.inplace else "outtree" if args.outtree else "diff"
    outtree = os.path.abspath(args.outtree) if args.outtree else None
    if outtree and os.path.exists(outtree) and not os.path.isdir(outtree):
        raise UsageError(f"--outtree {args.outtree}: exists and is not a directory")

    tasks, base = discover(args.paths, exclude=outtree)
    for task in tasks:
        task.to = args.to
        task.strategy = args.strategy
    if outtree and os.path.realpath(outtree) == os.path.realpath(base):
        raise UsageError(f"--outtree {args.outtree} is the input tree itself; use --inplace to rewrite in place")

    work = tasks
    processed: list[tuple[Task, FileResult]] = []
    progress = Progress(len([t for t in work if t.kind in ("python", "notebook")]))
    verifier = _Verifier(steps, args.strategy, len([t for t in work if t.kind == "python"])) if args.verify else None
    try:
        for task, result in zip(work, _run(work, jobs)):
            if verifier is not None:
                result = verifier.check(task, result)
            processed.append((task, result))
            if task.kind in ("python", "notebook"):
                progress.step(task.display)
    finally:
        progress.close()
    if args.to == "tf2":
        _keep_together(processed)
    results: list[FileResult] = []
    for task, result in processed:
        if mode == "inplace" and result.status == "changed":
            _write_inplace(task, result)
        elif mode == "outtree":
            _write_outtree(task, result, outtree)  # type: ignore[arg-type]
        if result.status == "changed" and mode == "diff":
            print_diff(result.old_text or "", result.new_text or "", result.path)
        results.append(result)
        if task.kind not in ("other",) or task.explicit:
            for line in result.lines():
                print(line, file=sys.stderr)
    summary = summarize(results)
    print(summary_line(summary, mode), file=sys.stderr)
    if args.report:
        options = {"to": args.to, "mode": mode, "check": args.check, "jobs": jobs,
                   "paths": args.paths, "outtree": args.outtree}
        if args.verify:
            options.update(verify=True, verify_steps=steps)
        if args.strategy:
            options["strategy"] = args.strategy
        try:
            with open(args.report, "w", encoding="utf-8") as handle:
                handle.write(to_json(results, summary, options))
        except OSError as exc:
            raise UsageError(f"--report {args.report}: cannot write: {exc.strerror}") from None
    if summary["error"]:
        return 2
    if args.check and summary["changed"]:
        return 1
    return 0


# -- --verify ---------------------------------------------------------------------------------
class _Verifier:
    """Parity for each TF2-tier result; a failure swaps in the compat tier's output."""

    def __init__(self, steps: int, strategy: Optional[str], total: int):
        from tf1clip.migrate.verify import parity_options

        self.steps, self.total, self.done = steps, total, 0
        self.options = parity_options() + (["--replicas", "2"] if strategy == "mirrored" else [])

    def check(self, task: Task, result: FileResult) -> FileResult:
        from tf1clip.migrate.verify import verify, why_not

        if task.kind != "python" or result.status != "changed" or result.tier != "tf2":
            return result
        self.done += 1
        print(f"tf1clip migrate: verifying {task.display} by parity ({self.steps} steps) ...", file=sys.stderr,
              flush=True)
        entry = verify(task.source, result.new_text or "", self.steps, self.options)
        verdict = "PASS: TF2 output kept" if entry["passed"] else f"FAIL: {why_not(entry)}; compat output instead"
        print(f"tf1clip migrate: {task.display}: {verdict} ({entry['seconds']:g} s)", file=sys.stderr, flush=True)
        if entry["passed"]:
            result.parity = entry
            return result
        fallback = _compat_instead(task, Item(0, "verify", f"the TF2 tier's output was not kept: {why_not(entry)}; "
                                                          "this is the compat tier's output"))
        fallback.parity = entry
        fallback.human += [h for h in result.human if h not in fallback.human]
        return fallback


# -- one tier per program ---------------------------------------------------------------------
def _compat_instead(task: Task, why: Item) -> FileResult:
    """The compat tier's result for a file the TF2 tier's output cannot stand for, `why` first."""
    import dataclasses

    result = process(dataclasses.replace(task, to="compat", strategy=None))
    result.tier = "compat"
    result.human.insert(0, why)
    return result


def _keep_together(processed: list) -> None:
    """TF2-tier files that import graph code of the tree, or that graph code imports, go back to the
    compat tier with the import chain as their reason (`tf1clip.migrate.together`)."""
    from tf1clip.migrate.together import ImportGraph, code_of, demotions, switches_graph_mode

    at = {task.source: i for i, (task, _) in enumerate(processed) if task.kind in ("python", "notebook")}
    if len(at) < 2:
        return
    codes = {}
    for source, i in at.items():
        task, result = processed[i]
        text = result.new_text if result.status == "changed" else None
        codes[source] = (task.display, result.imports or code_of(source, task.kind, text))
    graph = ImportGraph(codes)
    graph_code = {source for source, module in graph.modules.items() if module.graph_code}
    tf2 = {source for source, i in at.items()
           if processed[i][1].status == "changed" and processed[i][1].tier == "tf2"}

    def demote(source: str, why: str, line: int) -> bool:
        task = processed[at[source]][0]
        after = _compat_instead(task, Item(line, "tier", f"not converted to the TF2 tier: {why}"))
        processed[at[source]] = (task, after)
        text = after.new_text if after.status == "changed" else None
        return switches_graph_mode(code_of(source, task.kind, text))

    demotions(graph, graph_code, tf2, demote)


# -- processing ------------------------------------------------------------------------------
def _run(tasks: list[Task], jobs: int) -> Iterable[FileResult]:
    heavy = sum(1 for t in tasks if t.kind in ("python", "notebook"))
    if jobs <= 1 or heavy <= 1:
        for task in tasks:
            yield process(task)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    done = 0
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, heavy)) as pool:
            # the largest files first, so that no worker is left with a long one at the end; results in
            # the tree's order
            futures = {k: pool.submit(process, tasks[k]) for k in sorted(range(len(tasks)),
                                                                        key=lambda k: -_size(tasks[k]))}
            for k in range(len(tasks)):
                result = futures[k].result()
                done += 1
                yield result
    except BrokenProcessPool:
        # A worker died (out of memory, a crash in a C extension): finish the rest here.
        for task in tasks[done:]:
            yield process(task)


def _size(task: Task) -> int:
    """The bytes of a file to migrate (0 for anything else): how long its migration may take."""
    if task.kind not in ("python", "notebook"):
        return 0
    try:
        return os.path.getsize(task.source)
    except OSError:
        return 0


def process(task: Task) -> FileResult:
    """Migrate one file in memory; never raises (a failure is an `error` result)."""
    try:
        return _process(task)
    except Exception as exc:  # noqa: BLE001 - one failing file never stops the run
        return FileResult(task.display, task.kind, "error", f"internal error: {type(exc).__name__}: {exc}")


def _process(task: Task) -> FileResult:
    from tf1clip.migrate.engine import MigrationError

    kind = task.kind
    if kind == "missing":
        return FileResult(task.display, kind, "error", "no such file or directory")
    if kind == "symlink" and task.explicit:
        return FileResult(task.display, kind, "skipped", "is a symlink: not followed; pass the file it points to")
    if kind in ("symlink", "symlink-dir"):
        what = "directory symlink" if kind == "symlink-dir" else "symlink"
        reason = (f"{what} inside the tree: not followed; its target is migrated on its own" if task.link_inside
                  else f"{what} points outside the tree: not followed")
        return FileResult(task.display, kind, "skipped", reason)
    if kind == "other":
        return FileResult(task.display, kind, "skipped", "not a Python file or notebook")
    try:
        with open(task.source, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return FileResult(task.display, kind, "error", f"cannot read: {exc.strerror}")
    digest = hashlib.sha256(data).hexdigest()
    try:
        if kind == "notebook":
            result = _process_notebook(task, data)
        else:
            result = _process_python(task, data)
    except MigrationError as exc:
        return FileResult(task.display, kind, "error", str(exc), line=exc.line or None)
    result.reason = result.reason or ""
    result.digest = digest  # type: ignore[attr-defined]
    if task.to == "tf2":  # what `_keep_together` reads of each file, read in the worker
        from tf1clip.migrate.together import code_of, read_imports
        result.imports = read_imports(code_of(task.source, kind, result.new_text if result.status == "changed"
                                              else None))
    return result


def _process_python(task: Task, data: bytes) -> FileResult:
    from tf1clip.migrate.engine import migrate
    from tf1clip.migrate.sources import encode, read_python

    text, encoding = read_python(task.source, task.display, data)
    outcome = migrate(text, task.display, task.to, task.strategy)
    result = _from_notes(task, outcome.notes, None)
    result.runtime = outcome.runtime
    if task.to == "tf2":
        result.tier = outcome.tier
    if outcome.text == text:
        result.status, result.reason = "unchanged", outcome.reason
        return result
    result.status = "changed"
    result.new_bytes = encode(outcome.text, encoding)
    result.old_text, result.new_text = text, outcome.text
    return result


def _process_notebook(task: Task, data: bytes) -> FileResult:
    from tf1clip.migrate.notebook import migrate_notebook

    nbo = migrate_notebook(data, task.display, task.to)
    result = _from_notes(task, nbo.outcome.notes, nbo.where)
    result.human += [Item(1, "notebook", message, cell) for cell, message in nbo.cell_notes]
    if task.to == "tf2":
        result.tier = nbo.outcome.tier
    result.runtime = nbo.outcome.runtime
    if nbo.data == data:
        result.status, result.reason = "unchanged", nbo.outcome.reason
        return result
    result.status = "changed"
    result.new_bytes = nbo.data
    result.old_text, result.new_text = data.decode("utf-8"), nbo.data.decode("utf-8")
    return result


def _from_notes(task: Task, notes, where: Optional[list]) -> FileResult:
    result = FileResult(task.display, task.kind, "unchanged")
    for note in notes:
        cell, line = None, note.line
        if where is not None:
            if 0 < note.line < len(where) and where[note.line]:
                cell, line = where[note.line]
            elif note.line == 0:
                line = 0
        item = Item(line, note.rule, note.message, cell, note.runtime)
        (result.changes if note.kind == "change" else result.human).append(item)
    return result


# -- writing ---------------------------------------------------------------------------------
def _unchanged_on_disk(task: Task, result: FileResult) -> bool:
    digest = getattr(result, "digest", None)
    try:
        with open(task.source, "rb") as handle:
            return digest is None or hashlib.sha256(handle.read()).hexdigest() == digest
    except OSError:
        return False


def _fail(result: FileResult, message: str) -> None:
    result.status, result.reason, result.line = "error", message, None


def _write_inplace(task: Task, result: FileResult) -> None:
    from tf1clip.migrate.sources import atomic_write

    if os.path.islink(task.source) or not os.path.isfile(task.source):
        return _fail(result, "no longer a regular file; not written")
    if not _unchanged_on_disk(task, result):
        return _fail(result, "the file changed while it was being migrated; not written, run again")
    try:
        atomic_write(task.source, result.new_bytes or b"", os.stat(task.source).st_mode)
        result.written = task.display
    except OSError as exc:
        _fail(result, f"cannot write: {exc.strerror}; the file is unchanged")


def _write_outtree(task: Task, result: FileResult, outtree: str) -> None:
    from tf1clip.migrate.sources import atomic_write

    dest = os.path.normpath(os.path.join(outtree, task.rel))
    root = os.path.realpath(outtree)
    if task.kind == "missing" or (task.kind in ("symlink", "symlink-dir") and not task.link_inside):
        return  # a link out of the tree is not followed, so not mirrored either
    try:
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        parent = os.path.realpath(os.path.dirname(dest))
        if not (parent == root or parent.startswith(root.rstrip(os.sep) + os.sep)):
            return _fail(result, f"{dest} would be written outside {outtree}; not written")
        if os.path.exists(dest) and os.path.realpath(dest) == os.path.realpath(task.source):
            return _fail(result, "--outtree would overwrite the source file; not written")
        if task.kind in ("symlink", "symlink-dir"):
            # Relative to the link's own directory, so the mirrored link points into the mirror.
            target = os.path.relpath(os.path.realpath(task.source), os.path.realpath(os.path.dirname(task.source)))
            if os.path.lexists(dest):
                os.unlink(dest)
            os.symlink(target, dest)
            result.written = dest
            return
        if result.status == "changed":
            atomic_write(dest, result.new_bytes or b"", os.stat(task.source).st_mode)
        else:
            if os.path.islink(dest):
                os.unlink(dest)
            shutil.copy2(task.source, dest)
        result.written = dest
    except OSError as exc:
        _fail(result, f"cannot write {dest}: {exc.strerror}")

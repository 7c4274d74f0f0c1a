"""The real-world proving ground: real TF 1.x scripts through every tf1clip job, side by side
with TensorFlow's own tf_upgrade_v2.

    python benchmarks/realworld.py MANIFEST SNAPSHOTS [--only NAME...] [--json FILE]
        [--markdown FILE] [-j N] [--steps N] [--scratch DIR] [--keep]

MANIFEST lists the files and what each runnable one needs (see realworld/manifest.py);
SNAPSHOTS is a folder of git snapshots (`owner+name/repo` or `owner/name`). Nothing is
fetched. Each runnable script goes through the columns in realworld/jobs.py, each step in a
fresh scratch copy of its repository at the pinned commit, with its generated data in place
and a timeout of its own. Progress goes to stderr; the table and the failures grouped by
reason go to --markdown / --json (and the table to stdout). docs/realworld.md explains it all.
Exit status: 0 when the run completed (whatever the cells say), 2 on bad input.
"""
from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realworld import jobs, manifest, report  # noqa: E402
from realworld.workspace import Workspace  # noqa: E402


def detect(tools: jobs.Tools, scratch: Path) -> None:
    """What the installed tf1clip offers: `run --steps`, `parity --no-dropout`, `parity --root`."""
    empty = scratch / "empty_script.py"
    empty.write_text("")
    probe = subprocess.run([tools.python, "-m", "tf1clip", "run", "--steps", "1", str(empty)], cwd=scratch,
                           env=tools.env, capture_output=True, text=True, timeout=600)
    tools.run_steps = probe.returncode == 0
    helptext = subprocess.run([tools.python, "-m", "tf1clip", "parity", "--help"], cwd=scratch, env=tools.env,
                              capture_output=True, text=True, timeout=600)
    tools.no_dropout = "--no-dropout" in helptext.stdout
    tools.root = "--root" in helptext.stdout


class Progress:
    """One line per finished step on stderr; a live bar (rich) when stderr is a terminal."""

    def __init__(self, total: int):
        self.total, self.done, self.bar = total, 0, None
        if sys.stderr.isatty():
            from rich.progress import Progress as RichProgress

            self.bar = RichProgress(transient=True)
            self.task = self.bar.add_task("scripts", total=total)
            self.bar.start()

    def say(self, text: str) -> None:
        if self.bar:
            self.bar.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=sys.stderr, flush=True)

    def step(self, name: str, column: str, cell) -> None:
        extra = f"  {cell.reason}" if cell.reason and cell.status not in ("ok", "tf2") else ""
        seconds = f" {cell.seconds:.0f}s" if cell.seconds is not None else ""
        self.say(f"[{self.done}/{self.total}] {name}: {column} {cell.status}{seconds}{extra}"[:220])

    def finished(self, name: str) -> None:
        self.done += 1
        if self.bar:
            self.bar.advance(self.task)
        self.say(f"[{self.done}/{self.total}] {name}: done")

    def close(self) -> None:
        if self.bar:
            self.bar.stop()


def tf1clip_version() -> str:
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True,
                          text=True)
    return proc.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/realworld.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("snapshots", type=Path)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="entries by name or shell pattern")
    parser.add_argument("--json", type=Path, metavar="FILE")
    parser.add_argument("--markdown", type=Path, metavar="FILE")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="scripts run in parallel (default 1)")
    parser.add_argument("--steps", type=int, help="the step cut for every script (default: the manifest's)")
    parser.add_argument("--scratch", type=Path, help="scratch folder (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch trees and logs")
    parser.add_argument("--update", type=Path, metavar="PREVIOUS.json",
                        help="re-run the --only entries and keep every other row of this earlier full report "
                             "(the header says which rows were re-run, at which tf1clip)")
    opts = parser.parse_args(argv)
    try:
        plan = manifest.load(opts.manifest)
        chosen = plan.select(opts.only)
        previous = json.loads(opts.update.read_text()) if opts.update else None
    except (OSError, ValueError, manifest.ManifestError) as exc:
        print(f"realworld: error: {exc}", file=sys.stderr)
        return 2
    if not opts.snapshots.is_dir():
        print(f"realworld: error: {opts.snapshots}: no such folder", file=sys.stderr)
        return 2
    scratch = opts.scratch or Path(tempfile.mkdtemp(prefix="tf1clip-realworld-"))
    scratch.mkdir(parents=True, exist_ok=True)
    tools = jobs.Tools(env=jobs.job_env())
    detect(tools, scratch)
    ws = Workspace(opts.snapshots.resolve(), scratch.resolve())
    runnable = [e for e in chosen if e.runnable]
    excluded = [{"name": e.name, "skip": e.skip, "why": e.why} for e in chosen if not e.runnable]
    progress = Progress(len(runnable))
    progress.say(f"realworld: {len(runnable)} scripts to run ({len(excluded)} files excluded), -j {opts.jobs}, "
                 f"scratch {scratch}; tf1clip run --steps: {'yes' if tools.run_steps else 'no (recorder)'}, "
                 f"parity --no-dropout: {'yes' if tools.no_dropout else 'no'}")
    start = time.monotonic()

    def one(entry):
        steps = opts.steps or entry.steps or plan.steps
        run = jobs.ScriptRun(entry, ws, tools, steps,
                             progress=lambda column, cell: progress.step(entry.name, column, cell))
        cells = run.all_columns()
        if not opts.keep:
            shutil.rmtree(run.home, ignore_errors=True)
        return {"name": entry.name, "repo": entry.repo, "commit": entry.commit, "path": entry.path,
                "steps": steps, "cells": {c: cell.as_dict() for c, cell in cells.items()}}

    rows = {}
    try:
        with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
            futures = {pool.submit(one, entry): entry for entry in runnable}
            for future in as_completed(futures):
                entry = futures[future]
                rows[entry.name] = future.result()
                progress.finished(entry.name)
    finally:
        progress.close()
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "manifest": str(opts.manifest),
            "files": len(chosen), "runnable": len(runnable), "steps": opts.steps or plan.steps,
            "tf1clip": tf1clip_version(), "jobs": opts.jobs, "seconds": round(time.monotonic() - start),
            "run_command": "tf1clip run --steps N" if tools.run_steps else "python -m tf1clip.parity.record --side old",
            "no_dropout": tools.no_dropout}
    if previous is not None:
        rows, runnable, excluded, meta = _updated(previous, rows, meta)
    result = report.build([rows[e.name] for e in runnable], excluded, meta)
    text = report.markdown(result)
    if opts.json:
        opts.json.write_text(json.dumps(result, indent=1) + "\n")
    if opts.markdown:
        opts.markdown.write_text(text + "\n")
    print(text)
    if not opts.keep and opts.scratch is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _updated(previous: dict, rerun: dict, meta: dict):
    """The earlier full report's rows with the re-run ones replaced; the header names both runs."""
    rows = {row["name"]: row for row in previous["rows"]}
    rows.update(rerun)

    class Name:  # report.build wants the runnable entries in the earlier report's order
        def __init__(self, name):
            self.name = name

    order = [Name(row["name"]) for row in previous["rows"]] + [Name(n) for n in rerun if n not in
                                                                 {row["name"] for row in previous["rows"]}]
    meta = {**meta, "files": previous["files"], "runnable": len(order), "jobs": previous["jobs"],
            "seconds": previous["seconds"] + meta["seconds"], "date": f"{previous['date']} and {meta['date']}",
            "tf1clip": f"{previous['tf1clip']}, with {len(rerun)} entries re-run at {meta['tf1clip']} "
                       f"({', '.join(sorted(rerun))})"}
    return rows, order, previous["excluded"], meta


if __name__ == "__main__":
    sys.exit(main())

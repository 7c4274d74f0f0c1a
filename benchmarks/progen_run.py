"""Differential testing of the TF2 tier on generated programs (benchmarks/progen).

    python benchmarks/progen_run.py [--seeds A:B] [-j N] [--steps N] [--json FILE]
        [--markdown FILE] [--no-parity] [--scratch DIR] [--keep] [--timeout S]

Each seed's TF 1.x program is written into a scratch folder of its own, run under
`tf1clip run --steps N`, migrated with `tf1clip migrate --to tf2`, and when it reached the TF2
tier compared with `tf1clip parity` (progen/harness.py). The figures (TF2 tier reached,
wrong conversions), the refusal reasons grouped, and a row per seed with its choices go to
--json / --markdown, the figures and the top reasons to stdout; a progress line per seed to
stderr. docs/progen.md explains it. Exit status: 0 when the run completed, 2 on bad input.
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

from progen import generate, harness, summary  # noqa: E402
from progen.choices import parse_where  # noqa: E402
from realworld.jobs import job_env  # noqa: E402


def seed_range(text: str) -> list[int]:
    """`A:B` (A up to B-1), or seeds and ranges by commas (`3,17,40:45`)."""
    seeds: list[int] = []
    for part in text.split(","):
        if ":" in part:
            a, b = part.split(":", 1)
            seeds += range(int(a), int(b))
        else:
            seeds.append(int(part))
    if not seeds:
        raise ValueError(f"--seeds {text}: no seed in that range")
    return seeds


def tf1clip_version() -> str:
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def _line(done: int, total: int, out: harness.Outcome) -> str:
    parts = [f"[{done}/{total}] seed {out.seed}: run {out.run}, tier {out.tier}"]
    if out.parity:
        parts.append(f"parity {out.parity}")
    secs = sum(out.seconds.values())
    text = ", ".join(parts) + f" ({secs:.0f} s)"
    why = out.run_reason or (out.parity_reason if out.parity in ("FAIL", "ERROR") else out.reason)
    return (text + (f"  {why}" if why else ""))[:240]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/progen_run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0:100", help="A:B runs seeds A..B-1; or a list, 3,17,40:45 (default 0:100)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="seeds run in parallel (default 1)")
    parser.add_argument("--steps", type=int, help="updates to run and compare (default: each program's own)")
    parser.add_argument("--json", type=Path, metavar="FILE")
    parser.add_argument("--markdown", type=Path, metavar="FILE")
    parser.add_argument("--no-parity", action="store_true", help="run and migrate only")
    parser.add_argument("--scratch", type=Path, help="scratch folder (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep each seed's folder (program, output, logs)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per job (default 300)")
    parser.add_argument("--where", default="", metavar="DIM=V|V,...",
                        help="draw these dimensions from these values only (to search a region: "
                             "the seeds then give other programs; the report says so)")
    opts = parser.parse_args(argv)
    try:
        seeds = seed_range(opts.seeds)
        where = parse_where(opts.where) or None
        for seed in seeds:
            generate(seed, where)
    except ValueError as exc:
        print(f"progen_run: error: {exc}", file=sys.stderr)
        return 2
    scratch = opts.scratch or Path(tempfile.mkdtemp(prefix="tf1clip-progen-"))
    scratch.mkdir(parents=True, exist_ok=True)
    settings = harness.Settings(scratch=scratch.resolve(), env=job_env(), steps=opts.steps,
                                parity=not opts.no_parity, timeout=opts.timeout, keep=opts.keep, where=where)
    print(f"progen: {len(seeds)} seeds ({opts.seeds}), -j {opts.jobs}, scratch {scratch}", file=sys.stderr, flush=True)
    start = time.monotonic()
    rows: list[dict] = []
    version = tf1clip_version()

    def write() -> str:
        """The report of the seeds done so far (rewritten after each: a stopped run keeps them)."""
        seconds = round(time.monotonic() - start)
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "seeds": opts.seeds,
                "where": opts.where, "done": f"{len(rows)}/{len(seeds)}", "steps": opts.steps or "each program's own",
                "jobs": opts.jobs, "parity": not opts.no_parity, "tf1clip": version, "seconds": seconds,
                "seconds_per_program": round(seconds / max(1, len(rows)), 1), **_means(rows)}
        result = summary.build(rows, meta)
        text = summary.markdown(result)
        if opts.json:
            opts.json.write_text(json.dumps(summary.compact(result), separators=(",", ":")).replace(
                ',"rows":[', ',"rows":[\n').replace('},{"seed"', '},\n{"seed"') + "\n")
        if opts.markdown:
            opts.markdown.write_text(text)
        return text

    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = [pool.submit(harness.one_seed, seed, settings) for seed in seeds]
        for future in as_completed(futures):
            out = future.result()
            rows.append(out.as_dict())
            print(_line(len(rows), len(seeds), out), file=sys.stderr, flush=True)
            write()
    print(write().split("\n## Per seed")[0])
    if opts.scratch is None and not opts.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _means(rows: list[dict]) -> dict:
    """Mean seconds of each job over the seeds that ran it, and of a program's jobs together."""
    jobs = {}
    for job in ("run", "migrate", "parity"):
        values = [r["seconds"][job] for r in rows if job in r["seconds"]]
        if values:
            jobs[job] = round(sum(values) / len(values), 1)
    whole = [sum(r["seconds"].values()) for r in rows]
    return {"job_seconds_mean": jobs, "program_seconds_mean": round(sum(whole) / len(whole), 1) if whole else None}


if __name__ == "__main__":
    sys.exit(main())

"""tf1clip benchmarks: every measurement side by side with what it replaces, in one run.

    python benchmarks/run.py [--quick] [--json FILE] [--markdown FILE] [--only SECTION ...]
                             [--snapshots DIR]

Sections (each side of each row in its own fresh process, but cnngap's; medians over repeated runs):
  codemod    `tf1clip migrate` (compat / tf2 tier, -j 1 / -j 2) vs `tf_upgrade_v2` on a
             generated tree of 500+ files and, with --snapshots DIR, on the development
             corpus's Python files copied to ~500; start-up of both
  steptime   each fixture model: TF1 original in graph mode vs its TF2 migration
             (`tf.function`, and with `jit_compile=True`)
  cnngap     the steptime section's CNN, every form of its step in one process, in turns: the
             TF1 session gated (its default) and ungated, the GradientTape step, the tape with the
             conv bias gradients gated, gated tf.gradients; which gradients differ from the session's
  clipcost   global-norm clipping on a 10M-parameter model; ClippedOptimizer vs by hand;
             a 1M-row embedding with sparse gradients kept sparse vs densified
  runtime    `tf1clip run` on an unmodified legacy script vs the script with a compat header

Prints one table (ratio = ours / baseline; "met" is the goal in the target column) and the
machine it ran on. `--quick` is the smoke test CI runs: small sizes, one repeat, numbers not
meant to be read. Exit status 1 when a section failed to run; a missed target is reported, not
an error (timing goals live here, never in tests).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
import traceback
from datetime import date
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402

SECTIONS = {"codemod": "bench_codemod", "steptime": "bench_steptime", "cnngap": "bench_cnngap",
            "clipcost": "bench_clipcost", "runtime": "bench_runtime"}


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        memory = None

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(memory, 1) if memory else None,
            "os": platform.platform(), "python": platform.python_version(),
            "tensorflow": version("tensorflow"), "tf_keras": version("tf-keras"), "libcst": version("libcst"),
            "date": date.today().isoformat()}


def _fmt(value, metric="") -> str:
    if value is None:
        return "n/a"
    if "files/s" in metric or "MB" in metric:
        return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _goal(r: dict) -> str:
    if r.get("goal"):
        return r["goal"]
    parts = []
    if r.get("target") is not None:
        parts.append(("≤ " if r["better"] == "lower" else "≥ ") + f"{r['target']:g}×")
    if r.get("limit") is not None:
        parts.append(f"ours ≤ {r['limit']:g}")
    return " and ".join(parts)


def _met(r: dict) -> str:
    return {True: "yes", False: "NO", None: ""}[r.get("met")]


def table(rows: list[dict]) -> str:
    lines, section = [], None
    header = f"  {'row':52s} {'metric':26s} {'baseline':>10s} {'ours':>10s} {'ratio':>7s}  {'goal':16s} met"
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            lines += ["", f"== {section} ==", header]
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"  {r['row'][:52]:52s} {r['metric'][:26]:26s} {_fmt(r['baseline'], r['metric']):>10s} "
                     f"{_fmt(r['ours'], r['metric']):>10s} {ratio:>7s}  {_goal(r):16s} {_met(r)}")
        lines.append(f"      {r['baseline_label']}  vs  {r['ours_label']}" + (f"  ({r['note']})" if r["note"] else ""))
    return "\n".join(lines)


def markdown(rows: list[dict], info: dict) -> str:
    """The table for the README: one Markdown table per section, the sides' labels in its
    header when every row shares them, each distinct note once under the table."""
    out = [f"Measured {info['date']} on {info['cpu']}, {info['cores']} cores, {info['memory_gib']} GiB, "
           f"Python {info['python']}, TensorFlow {info['tensorflow']}, libcst {info['libcst']}."]
    if info.get("load"):
        out[0] += (" Load average (1 min) at each section's start and end, on a machine shared with "
                   "other jobs: " + ", ".join(f"{name} {start:.1f} → {end:.1f}"
                                             for name, (start, end) in info["load"].items()) + ".")
    sections = list(dict.fromkeys(r["section"] for r in rows))
    for section in sections:
        group = [r for r in rows if r["section"] == section]
        base_labels = {r["baseline_label"] for r in group}
        our_labels = {r["ours_label"] for r in group}
        base_head = next(iter(base_labels)) if len(base_labels) == 1 else "baseline"
        our_head = next(iter(our_labels)) if len(our_labels) == 1 else "ours"
        out += ["", f"**{section}**", "", f"| row | metric | {base_head} | {our_head} | ours ÷ baseline | goal | met |",
                "|---|---|---|---|---|---|---|"]
        notes: list[str] = []
        for r in group:
            base = _fmt(r["baseline"], r["metric"])
            ours = _fmt(r["ours"], r["metric"])
            if len(base_labels) > 1:
                base = f"{r['baseline_label']}: {base}"
            if len(our_labels) > 1:
                ours = f"{r['ours_label']}: {ours}"
            ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
            mark = ""
            if r["note"]:
                if r["note"] not in notes:
                    notes.append(r["note"])
                mark = f" [{notes.index(r['note']) + 1}]"
            out.append(f"| {r['row']}{mark} | {r['metric']} | {base} | {ours} | {ratio} | {_goal(r)} | {_met(r)} |")
        out += [""] + [f"[{i}] {note}  " for i, note in enumerate(notes, 1)]
    return "\n".join(out).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke test: small sizes, one repeat")
    parser.add_argument("--json", metavar="FILE", help="also write machine, rows and raw samples as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown (for the README)")
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), help="run only these sections")
    parser.add_argument("--repeats", type=int, metavar="N",
                        help="fresh-process runs per side (default: 3, quick: 1; the codemod section's tree rows "
                             "take minutes per run)")
    parser.add_argument("--snapshots", metavar="DIR",
                        help="git snapshots of the development corpus (owner+name/repo): the codemod section "
                             "also times the real-shaped tree; without it those rows are skipped")
    opts = parser.parse_args(argv)
    info = machine()
    print(f"tf1clip benchmarks{' (quick: smoke test, not for reading)' if opts.quick else ''} on {info['cpu']}, "
          f"{info['cores']} cores, {info['memory_gib']} GiB; TensorFlow {info['tensorflow']}", flush=True)
    rows, failed, started = [], [], time.perf_counter()
    info["load"] = {}
    for name in opts.only or list(SECTIONS):
        c.log_to_stderr(f"[{name}] starting (load average {os.getloadavg()[0]:.1f})")
        t0, load0 = time.perf_counter(), os.getloadavg()[0]
        try:
            module = importlib.import_module(SECTIONS[name])
            log = lambda msg, n=name: c.log_to_stderr(f"[{n}] {msg}")  # noqa: E731
            kwargs = {"repeats": opts.repeats} if opts.repeats else {}
            if name == "codemod" and opts.snapshots:
                kwargs["snapshots"] = opts.snapshots
            section_rows = module.run(opts.quick, log, **kwargs)
            if not section_rows:
                raise RuntimeError("the section produced no rows")
            rows += section_rows
        except Exception:  # noqa: BLE001 - one broken section must not hide the others
            failed.append(name)
            c.log_to_stderr(f"[{name}] FAILED:\n{traceback.format_exc()}")
        info["load"][name] = (load0, os.getloadavg()[0])
        c.log_to_stderr(f"[{name}] done in {time.perf_counter() - t0:.0f} s (load average {os.getloadavg()[0]:.1f})")
    print(table(rows))
    missed = [r for r in rows if r["met"] is False]
    print(f"\n{len(rows)} rows in {time.perf_counter() - started:.0f} s; goals met: "
          f"{sum(r['met'] is True for r in rows)}, missed: {len(missed)}"
          + (f"; sections that failed: {', '.join(failed)}" if failed else ""))
    if opts.json:
        Path(opts.json).write_text(json.dumps({"machine": info, "quick": opts.quick, "repeats": opts.repeats,
                                               "failed": failed,
                                               "rows": rows}, indent=1) + "\n")
    if opts.markdown:
        Path(opts.markdown).write_text(markdown(rows, info))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

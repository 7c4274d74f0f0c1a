"""What every benchmark section shares: one row format, medians, subprocesses with peak memory.

A section is a module `bench_<name>.py` with `run(quick: bool, log) -> list[dict]`; each dict
is made by `row(...)`. Every measurement runs in a fresh subprocess (`measure`), so one side
never warms caches or allocators for the other, and peak memory is that process tree's own.
"""
from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
PYTHON = sys.executable
# TensorFlow's C++ start-up chatter off; legacy Keras decided per script, never inherited.
BASE_ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"}


def env(extra: dict | None = None) -> dict:
    out = dict(os.environ)
    out.update(BASE_ENV)
    out.pop("TF_USE_LEGACY_KERAS", None)
    out.update(extra or {})
    return out


def row(section: str, name: str, metric: str, baseline_label: str, baseline: float | None,
        ours_label: str, ours: float | None, better: str = "lower", target: float | None = None,
        note: str = "", samples: dict | None = None, limit: float | None = None, goal: str = "") -> dict:
    """One table row: both sides, `ratio = ours / baseline`, and whether `target` is met.

    better='lower' (times, memory): met when ratio <= target; better='higher' (throughput):
    met when ratio >= target. `limit` is an absolute goal for `ours` alone (met when ours <=
    limit). `goal` names where a measured target comes from (e.g. "≤ call floor (1.16×)"); the
    table shows it instead of the bare target. A side that could not be measured is None, with
    the reason in `note`; its ratio is None too."""
    ratio = None if not baseline or ours is None else ours / baseline
    met = None
    if target is not None and ratio is not None:
        met = ratio <= target if better == "lower" else ratio >= target
    if limit is not None and ours is not None:
        met = (met is not False) and ours <= limit
    return {"section": section, "row": name, "metric": metric,
            "baseline_label": baseline_label, "baseline": baseline,
            "ours_label": ours_label, "ours": ours, "ratio": ratio, "better": better,
            "target": target, "limit": limit, "goal": goal, "met": met, "note": note, "samples": samples or {}}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# -- subprocesses ----------------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def _rss_kb(pid: int) -> int:
    """Resident set size from /proc/PID/statm: a few microseconds to read, so sampling it every
    20 ms takes nothing measurable from the process being timed (smaps would take ~7 ms per read
    of a TensorFlow-sized process)."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * _PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _tree_rss_kb(pid: int) -> int:
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += _rss_kb(current)
        todo.extend(_children(current))
    return total


class Measured:
    """What `measure` saw of one process run."""

    def __init__(self, wall: float, returncode: int, stdout: str, stderr: str, maxrss_mb: float,
                 tree_rss_mb: float):
        self.wall = wall                # seconds, start to exit
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.maxrss_mb = maxrss_mb      # largest single process in the tree (kernel's exact peak)
        # Peak of the whole tree's summed RSS, sampled every 20 ms (pages a forked worker
        # shares with its parent count in each): the memory `-j N` workers hold together.
        self.tree_rss_mb = tree_rss_mb


# The measured command is started by this small launcher, not by the benchmark process itself:
# Linux folds the hiwater RSS of the address space a process had before exec into its
# ru_maxrss, so a command forked straight from a big parent (a pytest worker that imported
# TensorFlow: 700 MB) would report at least that parent's size. Forked from the launcher
# (~10 MB), the command starts clean; the launcher times it too (its own start-up excluded) and
# writes "wall status maxrss_kb" to the report file named by its first argument.
_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as report:
    report.write(f"{wall} {status} {usage.ru_maxrss}")
sys.exit(0)
"""


def measure(cmd, cwd=None, extra_env=None, timeout=1800, check=True, sample_tree=True) -> Measured:
    """Run `cmd`; wall time, exit status, output, and peak memory of its process tree.

    sample_tree=False: no sampling thread at all (a single process, whose exact peak the
    kernel reports as maxrss_mb anyway)."""
    fd, report_path = tempfile.mkstemp(prefix="tf1clip-bench-", suffix=".txt")
    os.close(fd)
    start = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-S", "-c", _LAUNCHER, report_path, *(str(c) for c in cmd)], cwd=cwd,
                            env=env(extra_env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], sum(_tree_rss_kb(child) for child in _children(proc.pid)))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    if sample_tree:
        sampler.start()
    out_chunks: dict = {}

    def drain(name, stream):
        out_chunks[name] = stream.read()

    readers = [threading.Thread(target=drain, args=(n, s), daemon=True)
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and everything it started
        proc.wait()
        out_chunks["killed"] = f"\nkilled after the {timeout} s timeout"
    outer_wall = time.perf_counter() - start
    done.set()
    if sample_tree:
        sampler.join()
    for reader in readers:
        reader.join()
    try:
        with open(report_path) as handle:
            wall, status, maxrss_kb = handle.read().split()
        wall, returncode, maxrss_kb = float(wall), os.waitstatus_to_exitcode(int(status)), int(maxrss_kb)
    except (OSError, ValueError):  # killed before the launcher could report
        wall, returncode, maxrss_kb = outer_wall, proc.returncode or -9, 0
    finally:
        os.unlink(report_path)
    result = Measured(wall, returncode, out_chunks.get("out", ""),
                      out_chunks.get("err", "") + out_chunks.get("killed", ""),
                      maxrss_kb / 1024.0, max(peak[0], maxrss_kb) / 1024.0)
    if check and result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).splitlines()[-15:])
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {result.returncode}:\n{tail}")
    return result


def log_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

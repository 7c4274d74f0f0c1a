"""Start-up of the migrate path, side by side, in one run.

Each row is the best of N fresh interpreters: the bare interpreter, `tf1clip migrate` on a
small TF1 file (CLI, migrate package and every codemod imported, file migrated), and
`import tensorflow` for scale. The migrate path imports no TensorFlow, which is why it can
start in a fraction of TensorFlow's import time (goal: under half a second).

Usage: python benchmarks/bench_migrate_startup.py [--repeats N]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "fixtures", "legacy", "r02_clip_by_global_norm.py")


def best_of(command, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    opts = parser.parse_args()
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("import the migrate path (CLI + codemods)",
         [sys.executable, "-c", "import tf1clip.cli, tf1clip.migrate, tf1clip.migrate.engine, codemods, codemods.tf2"]),
        ("tf1clip migrate r02 (diff, no write)", [sys.executable, "-m", "tf1clip", "migrate", SAMPLE]),
        ("python -c 'import tensorflow'", [sys.executable, "-c", "import tensorflow"]),
    ]
    results = [(label, best_of(cmd, opts.repeats)) for label, cmd in rows]
    base = results[2][1]
    print(f"{'command':40s} {'best':>8s} {'vs migrate':>11s}")
    for label, seconds in results:
        print(f"{label:40s} {seconds:7.3f}s {seconds / base:10.2f}x")


if __name__ == "__main__":
    main()

"""The long proofs CI samples, run whole: every test file that samples its cases (`sampled()` in
tests/conftest.py), under TF1CLIP_FULL_PROOF=1, so each runs every case it has.

    python benchmarks/full_proofs.py [-n WORKERS] [PYTEST ARGS...]

CI runs a fixed sample of each of these families on every change (the sample and why it is that
sample are written in each file); run this for a change to what a family proves (the harness, the
TF2 tier, the runtime), and before a landing that touches them. Exit status: pytest's.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = re.compile(r"\bsampled\(")


def sampling_files() -> list[Path]:
    """The test files whose cases are a sample of a longer list."""
    return [path for path in sorted((ROOT / "tests").glob("test_*.py")) if SAMPLES.search(path.read_text())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=2, help="pytest-xdist workers (default 2)")
    opts, rest = parser.parse_known_args(argv)
    files = sampling_files()
    print(f"full proofs: {len(files)} files: {', '.join(p.name for p in files)}", file=sys.stderr, flush=True)
    env = dict(os.environ, TF1CLIP_FULL_PROOF="1")
    command = [sys.executable, "-m", "pytest", "-q", "-n", str(opts.n), "--dist", "loadgroup", *map(str, files), *rest]
    return subprocess.run(command, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())

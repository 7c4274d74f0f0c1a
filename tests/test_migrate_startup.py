"""The migrate path never imports TensorFlow.

Runs in real subprocesses: the whole `tf1clip migrate` command over a TF 1.x file (serial
and with -j 2), then asserts that no `tensorflow*` (nor tf_slim / keras) module was
imported. How fast it starts is measured in benchmarks/bench_codemod.py (run.py start-up rows), side by
side with importing TensorFlow, not timed here.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "fixtures" / "migrate" / "tree"

PROBE = r"""
import json, sys, time, io, contextlib
t0 = time.perf_counter()
from tf1clip.cli import main
import tf1clip.migrate, tf1clip.migrate.engine, tf1clip.migrate.notebook, codemods
startup = time.perf_counter() - t0
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
total = time.perf_counter() - t0
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "tf_slim", "keras", "tf_keras"))
print(json.dumps({"code": code, "startup": startup, "total": total, "heavy": heavy, "stdout": out.getvalue()}))
"""


def _probe(*args):
    proc = subprocess.run([sys.executable, "-c", PROBE, *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_migrate_path_never_imports_tensorflow():
    result = _probe("migrate", TREE / "train.py", TREE / "notebook.ipynb", TREE / "model")
    assert result["code"] == 0
    assert "+import tensorflow.compat.v1 as tf" in result["stdout"]  # it did migrate
    assert result["heavy"] == []


def test_parallel_migrate_never_imports_tensorflow(tmp_path):
    result = _probe("migrate", TREE, "-j", "2", "--outtree", tmp_path / "out")
    assert result["code"] == 2  # the tree's Python 2 and broken files
    assert result["heavy"] == []


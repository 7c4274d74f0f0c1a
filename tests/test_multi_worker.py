"""`migrate --to tf2 --strategy multi_worker`: two worker processes on loopback train like one device.

The fixture (fixtures/tf2_safety/multi_worker/two_layer_adam.py) starts from fixed weights, so
every run starts from the same values. Its multi-worker output runs as two real processes
(`TF_CONFIG`: a cluster of two workers on 127.0.0.1), each feeding the global batch, each
replica computing its shard, gradients all-reduced across the processes, clipped once. Checked
against one device: both workers print the same numbers, and those are the single-device TF2
output's and the TF 1.x original's (under `tf1clip run`), step by step and in the final weights.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np

from conftest import QUIET_ENV, run_python, run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "tf2_safety" / "multi_worker" / "two_layer_adam.py"

# Runs the converted script as __main__ and reports how many replicas its strategy synchronized.
WORKER = ("import runpy, sys; scope = runpy.run_path(sys.argv[1], run_name='__main__'); "
          "print('replicas=%d' % scope['strategy'].num_replicas_in_sync)")


def _free_ports(n: int) -> list:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _numbers(stdout: str) -> list:
    return [float(v) for v in re.findall(r"(?:loss|global_norm|checksum)=(-?[0-9.]+(?:e[-+]?[0-9]+)?)", stdout)]


def test_two_workers_on_loopback_train_like_one_device(tmp_path):
    for strategy, out in (("multi_worker", "multi"), (None, "single")):
        args = ["--strategy", strategy] if strategy else []
        proc = run_tf1clip("migrate", FIXTURE, "--to", "tf2", *args, "--outtree", tmp_path / out, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    multi = tmp_path / "multi" / FIXTURE.name
    single = tmp_path / "single" / FIXTURE.name
    assert "tf.distribute.MultiWorkerMirroredStrategy()" in multi.read_text()
    assert "tf.distribute" not in single.read_text()

    ports = _free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    workers = []
    for index in range(2):
        env = dict(os.environ, **QUIET_ENV)
        env.pop("TF_USE_LEGACY_KERAS", None)
        env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        workers.append(subprocess.Popen([sys.executable, "-c", WORKER, str(multi)], cwd=tmp_path, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = []
    try:
        for worker in workers:
            stdout, stderr = worker.communicate(timeout=900)
            assert worker.returncode == 0, stderr[-3000:]
            outputs.append(stdout)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    assert all("replicas=2" in out for out in outputs), outputs  # one replica in each process, synchronized
    assert outputs[0] == outputs[1]  # the all-reduce gave both workers the same numbers

    one_device = run_python(single, cwd=tmp_path, timeout=600)
    assert one_device.returncode == 0, one_device.stderr[-2000:]
    original = run_tf1clip("run", FIXTURE, cwd=tmp_path, timeout=600)
    assert original.returncode == 0, original.stderr[-2000:]

    distributed, tf2, tf1 = _numbers(outputs[0]), _numbers(one_device.stdout), _numbers(original.stdout)
    assert len(distributed) == len(tf2) == len(tf1) == 21  # 10 steps x (loss, global norm) + checksum
    assert min(distributed[1:20:2]) > 1.0  # the global clip (1.0) is active at every step
    np.testing.assert_allclose(distributed, tf2, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(distributed, tf1, rtol=2e-5, atol=1e-5)

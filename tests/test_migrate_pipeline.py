"""The compat tier end to end on small TF 1.x scripts with known answers.

fixtures/migrate/pipeline/ holds TF 1.x scripts (placeholders, Session, a contrib clipping
decorator, tf.contrib.rnn + tf.layers); `tf1clip migrate --outtree` rewrites them, plain
`python` runs the result on TF 2.21, and every printed loss / norm must equal what a numpy
oracle computes independently (float64, numeric gradients where the model is not linear).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import QUIET_ENV, run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = ROOT / "fixtures" / "migrate" / "pipeline"
SCRIPTS = sorted(p.name for p in PIPELINE.glob("*.py"))


def _env():
    env = dict(os.environ)
    env.update(QUIET_ENV)
    env.pop("TF_USE_LEGACY_KERAS", None)  # the migrated file must set what it needs itself
    return env


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    out = tmp_path_factory.mktemp("pipeline")
    report = out / "report.json"
    proc = run_tf1clip("migrate", PIPELINE, "--outtree", out / "tree", "-j", "2", "--report", report)
    assert proc.returncode == 0, proc.stderr
    runs = {name: subprocess.Popen([sys.executable, name], cwd=out / "tree", env=_env(), text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE) for name in SCRIPTS}
    results = {}
    for name, child in runs.items():
        stdout, stderr = child.communicate(timeout=300)
        results[name] = (child.returncode, stdout, stderr)
    again = run_tf1clip("migrate", out / "tree", "--check")
    assert again.returncode == 0 and again.stdout == "", again.stderr  # a second run changes nothing
    return out / "tree", json.loads(report.read_text()), results


def _numbers(stdout: str, key: str) -> list[float]:
    return [float(v) for v in re.findall(rf"\b{key}=(-?[0-9.]+(?:e-?\d+)?)", stdout)]


def _ok(results, name):
    code, stdout, stderr = results[name]
    assert code == 0, stderr[-3000:]
    return stdout


# -- oracles ------------------------------------------------------------------------------
def _linear_oracle(steps=4, lr=0.1, clip=1.0):
    rng = np.random.RandomState(0)
    data = rng.rand(8, 3).astype(np.float32).astype(np.float64)
    target = (data @ np.array([[1.0], [-2.0], [3.0]])) * 10
    w, b = np.zeros((3, 1)), np.zeros(1)
    losses, norms = [], []
    for _ in range(steps):
        r = data @ w + b - target
        losses.append(float(np.mean(r ** 2)))
        dw, db = 2 * data.T @ r / r.size, 2 * r.sum(0) / r.size
        norm = float(np.sqrt((dw ** 2).sum() + (db ** 2).sum()))
        norms.append(norm)
        scale = clip / max(norm, clip)  # tf.clip_by_global_norm
        w, b = w - lr * dw * scale, b - lr * db * scale
    return losses, norms


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _lstm_loss(params, batch, target):
    kernel, bias = params["rnn/basic_lstm_cell/kernel:0"], params["rnn/basic_lstm_cell/bias:0"]
    units = bias.size // 4
    h = np.zeros((batch.shape[0], units))
    c = np.zeros_like(h)
    for t in range(batch.shape[1]):
        z = np.concatenate([batch[:, t], h], 1) @ kernel + bias
        i, j, f, o = np.split(z, 4, axis=1)  # BasicLSTMCell's gate order, forget_bias=1.0
        c = c * _sigmoid(f + 1.0) + _sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * _sigmoid(o)
    hidden = np.maximum(np.concatenate([h, c], 1) @ params["dense/kernel:0"] + params["dense/bias:0"], 0)
    pred = hidden @ params["dense_1/kernel:0"] + params["dense_1/bias:0"]
    return float(np.mean((pred - target) ** 2))


def _lstm_oracle(stdout, steps=4, lr=0.5, clip=0.5, eps=1e-6):
    params = {}
    for name, shape in re.findall(r"var=(\S+) shape=\[([0-9, ]*)\]", stdout):
        dims = [int(d) for d in shape.split(",") if d.strip()]
        size = int(np.prod(dims))
        params[name] = (np.cos(np.arange(size) * 0.7 + len(name)) * 0.5).astype(np.float32).astype(np.float64).reshape(dims)
    assert len(params) == 6, stdout
    batch = np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2).astype(np.float32).astype(np.float64)
    target = np.array([[2.0], [-1.0]])
    losses = []
    for _ in range(steps):
        losses.append(_lstm_loss(params, batch, target))
        new = {}
        for name, value in params.items():
            grad = np.zeros_like(value)
            for idx in np.ndindex(value.shape):
                for sign in (1, -1):
                    bumped = dict(params)
                    bumped[name] = value.copy()
                    bumped[name][idx] += sign * eps
                    grad[idx] += sign * _lstm_loss(bumped, batch, target) / (2 * eps)
            norm = np.sqrt((grad ** 2).sum())
            new[name] = value - lr * grad * clip / max(norm, clip)  # tf.clip_by_norm per tensor
        params = new
    return losses


# -- tests --------------------------------------------------------------------------------------
def test_pipeline_scripts_are_migrated_with_a_report(migrated):
    tree, report, _ = migrated
    by_path = {Path(f["path"]).name: f for f in report["files"]}
    assert {by_path[s]["status"] for s in SCRIPTS} == {"changed"}
    assert by_path["contrib_clip_gd.py"]["runtime"] == ["tf1clip.clip_gradients_by_norm"]
    assert "runtime" not in by_path["layers_lstm_clip.py"]  # contrib.rnn → tf.nn.rnn_cell: plain TF
    text = (tree / "layers_lstm_clip.py").read_text()
    assert 'os.environ["TF_USE_LEGACY_KERAS"] = "1"' in text and "tf.nn.rnn_cell.BasicLSTMCell(3)" in text
    assert text.index("TF_USE_LEGACY_KERAS") < text.index("import tensorflow")


def test_placeholder_script_runs_and_matches_numpy(migrated):
    stdout = _ok(migrated[2], "linear_global_norm.py")
    losses, norms = _linear_oracle()
    np.testing.assert_allclose(_numbers(stdout, "loss"), losses, rtol=1e-5)
    np.testing.assert_allclose(_numbers(stdout, "norm"), norms, rtol=1e-5)
    assert norms[0] > 1.0  # the clip acts


def test_contrib_clip_decorator_script_runs_and_matches_numpy(migrated):
    stdout = _ok(migrated[2], "contrib_clip_gd.py")
    losses, norms = _linear_oracle()
    np.testing.assert_allclose(_numbers(stdout, "loss"), losses, rtol=1e-5)
    np.testing.assert_allclose(_numbers(stdout, "norm"), norms, rtol=1e-5)


def test_contrib_rnn_and_layers_script_runs_and_matches_numpy(migrated):
    stdout = _ok(migrated[2], "layers_lstm_clip.py")
    np.testing.assert_allclose(_numbers(stdout, "loss"), _lstm_oracle(stdout), rtol=1e-4)

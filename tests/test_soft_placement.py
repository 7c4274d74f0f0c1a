"""GPU device pins on a machine without a GPU: `tf1clip run` and `--to compat` both run them.

The fixture pins its model to /gpu:0. Under plain TF 2.21 (compat header, no soft placement)
it stops with "Cannot assign a device"; under `tf1clip run` it trains with one note on
stderr; its `--to compat` output carries `allow_soft_placement=True` in its own config and
prints the same numbers as hand-computed gradient descent. Real subprocesses, real TF.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import FIXTURES, run_python, run_tf1clip
from test_runner import stderr_lines

FIXTURE = FIXTURES / "runtime" / "gpu_pinned.py"


def _expected():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = np.array([[5.0], [11.0], [17.0]])
    w, losses = np.zeros((2, 1)), []
    for _ in range(3):
        err = x @ w - y
        losses.append(float(np.mean(err ** 2)))
        w = w - 0.01 * 2 * x.T @ err / len(x)
    return losses, w.ravel().tolist()


def _check_numbers(stdout):
    losses, w = _expected()
    assert losses[0] == 145.0  # (25 + 121 + 289) / 3
    lines = [line for line in stdout.splitlines() if line.startswith(("step", "w "))]
    assert len(lines) == 4, stdout
    for k, loss in enumerate(losses):
        assert lines[k].startswith(f"step {k} loss ")
        assert float(lines[k].rsplit(" ", 1)[1]) == pytest.approx(loss, rel=1e-5)
    got = [float(v) for v in lines[3][len("w ["):-1].split(",")]
    assert got == pytest.approx(w, rel=1e-4)


def test_the_pin_fails_without_soft_placement(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text(FIXTURE.read_text().replace(
        "import tensorflow as tf\n", "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n"))
    proc = run_python(plain)
    assert proc.returncode == 1
    assert "Cannot assign a device for operation" in proc.stderr


def test_run_places_softly_and_says_so_once():
    proc = run_tf1clip("run", FIXTURE)
    assert proc.returncode == 0, proc.stderr
    _check_numbers(proc.stdout)
    notes = [line for line in stderr_lines(proc) if line.startswith("tf1clip:")]
    assert notes == [f"tf1clip: {FIXTURE}:17: ops pinned to /device:GPU:0 run on the CPU: this machine has no "
                     "such device (soft placement is on, as TF 1.x's allow_soft_placement=True)"]


def test_run_keeps_the_scripts_own_config_and_notes_nothing_without_pins(tmp_path):
    script = tmp_path / "cpu.py"
    script.write_text(
        "import tensorflow as tf\n"
        "config = tf.ConfigProto(intra_op_parallelism_threads=1)\n"
        "with tf.device('/cpu:0'):\n    v = tf.constant(2.0) * 3\n"
        "with tf.Session(config=config) as sess:\n"
        "    print(sess.run(v), sess._config.intra_op_parallelism_threads, sess._config.allow_soft_placement)\n"
        "print(config.allow_soft_placement)\n")
    proc = run_tf1clip("run", script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["6.0 1 True", "False"]  # the script's own proto is not changed
    assert not [line for line in stderr_lines(proc) if line.startswith("tf1clip:")]


def test_compat_output_carries_soft_placement_and_trains_the_same(tmp_path):
    out = tmp_path / "out"
    proc = run_tf1clip("migrate", FIXTURE, "--outtree", out)
    assert proc.returncode == 0, proc.stderr
    text = (out / FIXTURE.name).read_text()
    assert "config = tf.ConfigProto(log_device_placement=False, allow_soft_placement=True)\n" in text
    assert f"{FIXTURE}:21: [soft_placement] added allow_soft_placement=True" in proc.stderr
    ran = run_python(out / FIXTURE.name)
    assert ran.returncode == 0, ran.stderr
    _check_numbers(ran.stdout)


def test_pin_without_a_session_is_left_for_a_human():
    from tf1clip.migrate.engine import migrate_text

    code = ("import tensorflow as tf\n\ndef build(x):\n    with tf.device('/gpu:0'):\n"
            "        return tf.layers.dense(tf.placeholder(tf.float32, [None, 3]), 2)\n")
    outcome = migrate_text(code, "model.py")
    human = [n for n in outcome.notes if n.rule == "soft_placement"]
    assert [(n.kind, n.line) for n in human] == [("human", 4)]
    assert "makes no session" in human[0].message

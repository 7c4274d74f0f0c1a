"""The TF 1.x eager API (`tf.enable_eager_execution()`, `tfe = tf.contrib.eager`) on TF 2.21.

The fixture trains y = 2x + 1 per example with `tfe.implicit_value_and_gradients` over a
`tfe.Iterator`; its numbers are recomputed here by hand-written SGD. It runs under `tf1clip
run` (eager, although the face turned v2 behaviour off) and, migrated `--to compat`, under
plain Python. Real subprocesses, real TensorFlow.
"""
from __future__ import annotations

import pytest

from conftest import FIXTURES, run_python, run_tf1clip
from test_runner import stderr_lines

FIXTURE = FIXTURES / "runtime" / "tfe_linreg.py"


def _expected_epochs():
    data = [(0.0, 1.0), (1.0, 3.0), (2.0, 5.0), (3.0, 7.0)]
    w = b = 0.0
    epochs = []
    for _ in range(2):
        total = 0.0
        for x, y in data:
            r = y - (x * w + b)
            total += r * r
            w, b = w + 0.05 * 2 * x * r, b + 0.05 * 2 * r
        epochs.append((total, w, b))
    return epochs


def _check(stdout):
    lines = stdout.splitlines()
    assert lines[0] == "eager True gpus 0"
    epochs = _expected_epochs()
    assert epochs[0][0] == pytest.approx(34.171461)  # 1 + 8.41 + 16.2409 + 8.520561
    for k, (loss, w, b) in enumerate(epochs):
        words = lines[1 + k].split()
        assert words[:3] == ["epoch", str(k), "loss"]
        assert float(words[3]) == pytest.approx(loss, rel=1e-4, abs=1e-4)
        assert float(words[5]) == pytest.approx(w, rel=1e-4) and float(words[7]) == pytest.approx(b, rel=1e-4)
    assert lines[3] == "d(v*v)/dv at 3 6.0 u*v 12.0 [4.0, 3.0] d(10w)/dw 10.0"
    assert float(lines[4].split()[-1]) == pytest.approx(epochs[1][1], rel=1e-4)  # restored, not -1


def test_eager_script_runs_under_tf1clip_run():
    proc = run_tf1clip("run", FIXTURE)
    assert proc.returncode == 0, proc.stderr
    _check(proc.stdout)


def test_eager_script_migrated_to_compat_runs_under_plain_python(tmp_path):
    out = tmp_path / "out"
    proc = run_tf1clip("migrate", FIXTURE, "--outtree", out)
    assert proc.returncode == 0, proc.stderr
    text = (out / FIXTURE.name).read_text()
    assert "import tf1clip.contrib.eager as tfe\n" in text
    assert "disable_v2_behavior" not in text  # eager code: v2 behaviour stays on
    ran = run_python(out / FIXTURE.name)
    assert ran.returncode == 0, ran.stderr
    _check(ran.stdout)
    again = run_tf1clip("migrate", out / FIXTURE.name, "--check")
    assert again.returncode == 0, again.stderr  # migrated once is migrated


def test_tfe_names_without_a_tf2_home_fail_with_one_line(tmp_path):
    script = tmp_path / "metrics.py"
    script.write_text("import tensorflow as tf\ntf.enable_eager_execution()\ntfe = tf.contrib.eager\n"
                      "m = tfe.metrics.Mean()\n")
    proc = run_tf1clip("run", script)
    assert proc.returncode == 2
    assert stderr_lines(proc) == [f"{script}:4: tf.contrib.eager.metrics is not provided by tf1clip (tf.contrib was "
                                  "removed in TensorFlow 2); use tf.keras.metrics (update_state / result)"]


def test_defun_and_graph_mode_scripts_still_see_graph_mode(tmp_path):
    script = tmp_path / "defun.py"
    script.write_text("import tensorflow as tf\n"
                      "print('graph', not tf.executing_eagerly())\n"
                      "tf.enable_eager_execution()\n"
                      "f = tf.contrib.eager.defun(lambda x: x * 3.0)\n"
                      "print('defun', float(f(tf.constant(2.0))), tf.contrib.eager.list_devices()[0])\n")
    proc = run_tf1clip("run", script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["graph True", "defun 6.0 /device:CPU:0"]

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


NETWORK = FIXTURES / "runtime" / "tfe_network.py"


def _network_by_hand():
    """tfe_network.py's training in NumPy, backpropagation written out: (losses, out bias)."""
    import numpy as np

    x_all = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0]])
    y_all = np.array([[1.0], [1.0], [2.0], [3.0]])
    w1, b1, w2, b2 = np.full((2, 3), 0.5), np.full(3, 0.1), np.full((3, 1), 0.2), np.zeros(1)

    def forward(x):
        pre = x @ w1 + b1
        hidden = np.maximum(pre, 0.0)
        return pre, hidden, hidden @ w2 + b2

    losses = []
    for _ in range(2):
        for start in (0, 2):
            x, y = x_all[start:start + 2], y_all[start:start + 2]
            pre, hidden, out = forward(x)
            d_out = 2 * (out - y) / len(x)
            d_hidden = (d_out @ w2.T) * (pre > 0)
            w2, b2 = w2 - 0.1 * hidden.T @ d_out, b2 - 0.1 * d_out.sum(0)
            w1, b1 = w1 - 0.1 * x.T @ d_hidden, b1 - 0.1 * d_hidden.sum(0)
        losses.append(float(np.mean((forward(x_all)[2] - y_all) ** 2)))
    return losses, float(b2[0])


def _check_network(stdout):
    lines = stdout.splitlines()
    losses, bias = _network_by_hand()
    for k, loss in enumerate(losses):
        words = lines[k].split()
        assert words[:3] == ["epoch", str(k), "loss"] and float(words[3]) == pytest.approx(loss, abs=2e-5)
    assert lines[2] == ("layers 2 variables ['two_layer_net/dense/kernel:0', 'two_layer_net/dense/bias:0', "
                        "'two_layer_net/dense_1/kernel:0', 'two_layer_net/dense_1/bias:0']")
    assert lines[3].startswith("trainable 4 out bias ") and float(lines[3].split()[-1]) == pytest.approx(bias, abs=2e-5)
    # Dense(2) with ones, then relu: [1, -3] -> [-2, -2] -> 0; [2, 0.5] -> 2.5
    assert lines[4] == "sequential [[0.0, 0.0], [2.5, 2.5]] variables 2"
    assert lines[5] == lines[3].replace("trainable 4 out bias", "restored out bias")  # restored, not 5.0


def test_tfe_network_runs_under_tf1clip_run_and_migrated_under_plain_python(tmp_path):
    proc = run_tf1clip("run", NETWORK)
    assert proc.returncode == 0, proc.stderr
    _check_network(proc.stdout)
    out = tmp_path / "out"
    assert run_tf1clip("migrate", NETWORK, "--outtree", out).returncode == 0
    assert "tfe = tf1clip.contrib.eager\n" in (out / NETWORK.name).read_text()
    ran = run_python(out / NETWORK.name)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == proc.stdout


def test_tfe_network_contract_in_graph_mode():
    """In graph mode too (TF 1.x allowed it): variables under the network's uniquified scope,
    layers in tracking order, get_layer by name and index, add_variable and bad layers refused."""
    import tensorflow as tf

    from tf1clip.contrib.eager import Network, Sequential
    from tf1clip.errors import UnsupportedSymbol

    class Tiny(Network):
        def __init__(self):
            super().__init__()
            self.first = self.track_layer(tf.keras.layers.Dense(2, name="first"))

        def call(self, x):
            return self.first(x)

    with tf.Graph().as_default():
        one, two = Tiny(), Tiny()
        one(tf.zeros([1, 3]))
        two(tf.zeros([1, 3]))
        one(tf.zeros([1, 3]))  # a second call makes no new variables
        assert len(one.variables) == 2 and one.get_layer("first") is one.get_layer(index=0) is one.first
        assert (one.name, two.name) == ("tiny", "tiny_1")
        with pytest.raises(ValueError, match="either a layer name or layer index"):
            one.get_layer()
        with pytest.raises(UnsupportedSymbol, match="add_variable"):
            one.add_variable("w", [1])
        with pytest.raises(TypeError, match="not a tf.layers.Layer"):
            one.track_layer(3)
        assert Sequential([tf.nn.relu]).variables == []

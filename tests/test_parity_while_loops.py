"""Parity's while loops (tf1clip/parity/while_loops.py): pinned to one iteration at a time where
their order could change a draw, and given their own parallel_iterations back when their
gradient is built and they draw nothing, because TF 1.x's gradient of a loop whose iterations
outnumber that bound is dead under control dependencies on a cond's ops (TensorFlow issue 32720).
Real TensorFlow, real subprocesses."""
import json
import subprocess
import sys

from conftest import FIXTURES, ROOT, run_tf1clip, tail

FRAMES = r"""
import json, os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tf1clip.v1  # noqa: F401 - graph mode, as parity's OLD
from tf1clip.parity import while_loops
while_loops.one_iteration_at_a_time()
import tensorflow as tf
v1 = tf.compat.v1
x = v1.placeholder(tf.float32, [None, 6, 3])
with v1.variable_scope("plain"):
    plain, _ = v1.nn.dynamic_rnn(v1.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32)
with v1.variable_scope("drawn"):
    cell = v1.nn.rnn_cell.DropoutWrapper(v1.nn.rnn_cell.BasicLSTMCell(4), input_keep_prob=0.5)
    drawn, _ = v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
with v1.variable_scope("forward_only"):
    forward_only, _ = v1.nn.dynamic_rnn(v1.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32, parallel_iterations=7)
v1.gradients(tf.reduce_sum(plain) + tf.reduce_sum(drawn), v1.trainable_variables())
bounds = {}
for op in v1.get_default_graph().get_operations():
    if op.type == "Enter":
        frame = op.get_attr("frame_name").decode()
        bounds.setdefault(frame, set()).add(op.get_attr("parallel_iterations"))
print(json.dumps({frame: sorted(values) for frame, values in bounds.items()}))
"""


def test_a_draw_free_loop_gets_its_bound_back_when_differentiated_and_a_drawing_loop_stays_pinned():
    proc = subprocess.run([sys.executable, "-c", FRAMES], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, tail(proc.stderr)
    bounds = json.loads(proc.stdout.strip().splitlines()[-1])
    assert bounds["plain/rnn/while/while_context"] == [32]  # dynamic_rnn's own default, and its gradient's
    assert bounds["gradients/plain/rnn/while/while_context"] == [32]
    assert bounds["drawn/rnn/while/while_context"] == [1]  # its dropout draws once per time step
    assert bounds["gradients/drawn/rnn/while/while_context"] == [1]
    assert bounds["forward_only/rnn/while/while_context"] == [1]  # no gradient built: pinned, as before


def test_an_rnn_under_batch_norm_update_dependencies_passes_against_itself(tmp_path):
    """OLD crashed with 'Retval[0] does not have value' when parity fetched the LSTM's gradient
    norm, and its LSTM would not have trained: the pinned loop's gradient was dead."""
    script = FIXTURES / "parity" / "rnn_batch_norm_deps.py"
    report = tmp_path / "parity.json"
    proc = run_tf1clip("parity", script, script, "--json", report, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, f"{proc.stdout[-2000:]}\n{tail(proc.stderr)}"
    result = json.loads(report.read_text())
    rows = result["optimizers"][0]["rows"]
    assert len(rows) == 6 and all(row["ok"] for row in rows)
    kernel = [w for w in result["optimizers"][0]["weights"] if "lstm_cell/kernel" in w["name"]]
    assert kernel and all(w["ok"] for w in kernel)

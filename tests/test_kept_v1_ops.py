"""TF 1.x ops the TF2 tier keeps in their `tf.compat.v1` spelling (`codemods._usage.KEPT_V1_OPS`):
each computes the same in a TF 1 graph (a Session), eagerly in TF 2 and inside a tf.function, on
inputs that reach its TF 1.x-specific behaviour (tf.where's row selection by a vector condition,
tf.div's floor division of integers). A script using them converts and trains like the original."""
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from conftest import assert_parity

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods._usage import KEPT_V1_OPS  # noqa: E402
from codemods.tf2.translator import translate  # noqa: E402

M = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
CALLS = {  # op → [(args, kwargs)] in NumPy values
    "where": [((np.array([True, False, True]), M, -M), {}), ((M > 0,), {}), ((M > 0, M, M * 2), {})],
    "div": [((np.array([7, -7, 9], np.int32), np.array([2, 2, -4], np.int32)), {}), ((M, 3.0), {})],
    "nn.xw_plus_b": [((M, np.ones([4, 2], np.float32) * 0.5, np.array([1.0, -1.0], np.float32)), {})],
    "nn.relu_layer": [((M, np.ones([4, 2], np.float32) * 0.5, np.array([1.0, -1.0], np.float32)), {})],
    "batch_gather": [((M, np.array([[0, 3], [1, 1], [2, 0]], np.int32)), {})],
    "sparse_to_dense": [((np.array([[0, 1], [2, 3]], np.int64), [3, 4], np.array([5.0, 6.0], np.float32)),
                         {"default_value": -1.0})],
    "nn.depthwise_conv2d_native": [((np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) / 10,
                                     np.ones([2, 2, 2, 1], np.float32), [1, 1, 1, 1], "VALID"), {})],
}


def _op(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


def test_every_kept_op_has_calls():
    assert set(CALLS) == set(KEPT_V1_OPS)


@pytest.mark.parametrize("name", sorted(KEPT_V1_OPS))
def test_a_kept_op_computes_what_tf1_computed_eagerly_and_traced(name):
    op = _op(tf.compat.v1, name)
    for args, kwargs in CALLS[name]:
        graph = tf.Graph()
        with graph.as_default():
            out = op(*args, **kwargs)
            with tf.compat.v1.Session(graph=graph) as sess:
                old = sess.run(out)
        eager = op(*args, **kwargs).numpy()
        traced = tf.function(lambda: op(*args, **kwargs))().numpy()
        np.testing.assert_array_equal(eager, old)
        np.testing.assert_array_equal(traced, old)


SCRIPT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 2])
mask = tf.placeholder(tf.bool, [None])
w = tf.Variable(tf.ones([4, 2]) * 0.1)
b = tf.Variable(tf.zeros([2]))
h = tf.nn.xw_plus_b(x, w, b)
h = tf.where(mask, h, tf.div(h, 2.0))
loss = tf.reduce_mean(tf.square(h - y))
grads, tvars = zip(*tf.train.GradientDescentOptimizer(0.1).compute_gradients(loss))
grads, _ = tf.clip_by_global_norm(grads, 1.0)
train_op = tf.train.GradientDescentOptimizer(0.1).apply_gradients(zip(grads, tvars))
xs = np.arange(24, dtype=np.float32).reshape(6, 4) / 10
ys = np.ones([6, 2], np.float32)
ms = np.array([True, False, True, True, False, False])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(3):
        _, l = sess.run([train_op, loss], {x: xs, y: ys, mask: ms})
        print(step, l)
'''


def test_a_script_using_them_converts_and_trains_alike(tmp_path):
    result = translate(SCRIPT, "t.py")
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    assert "tf.compat.v1.where(mask" in result.text and "tf.compat.v1.div(" in result.text
    assert "tf.compat.v1.nn.xw_plus_b(" in result.text
    assert translate(result.text, "t.py").text == result.text
    assert_parity(tmp_path, SCRIPT, result.text)

"""What a `sess.run` of a list of tensors gives back: a list of arrays.

`sess.run(grads)` of `tf.gradients`, of a filtered list, of a clipped list, of a slice of a list, of
`compute_gradients`' pair, of a kept helper's tuple, of `tf.nn.top_k`'s tuple (and `.values` read as its
part): each gives what TF 1.x gave; before, `.numpy()` was applied to the list. Checked against TF 1.x's
run and against the gradients computed by hand.
"""
import sys
from pathlib import Path

import numpy as np

from conftest import assert_parity, run_python, run_tf1clip, tier_output

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# -- a fetched list gives a list of arrays --------------------------------------------------------------
LISTS = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
unused = tf.Variable(tf.zeros([2]), name="unused")
W = tf.Variable(tf.ones([4, 3]) * 0.3, name="W")
V = tf.Variable(tf.ones([3, 1]) * -0.2, name="V")
loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, W)), V) - y))
grads = tf.gradients(loss, [W, V])
tvars = tf.trainable_variables()
every = tf.gradients(loss, tvars)
kept = [g for g in every if g is not None]
clipped, _ = tf.clip_by_global_norm(kept, 0.5)
train_op = tf.train.GradientDescentOptimizer(0.1).apply_gradients(zip(clipped, [W, V]))
gvs = tf.train.GradientDescentOptimizer(0.1).compute_gradients(loss, [W, V])
top = tf.nn.top_k(tf.reshape(W, [-1]), 2)


def pair(t):
    return tf.reduce_sum(t), tf.reduce_mean(t)


xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)


def sums(arrays):
    return [round(float(np.abs(a).sum()), 5) for a in arrays]


with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sums(sess.run(grads, {x: xs, y: ys})))
    print(sums(sess.run(kept, {x: xs, y: ys})))
    print(sums(sess.run(clipped, {x: xs, y: ys})))
    print(sums(sess.run(grads[1:], {x: xs, y: ys})))
    print(sums(sess.run(gvs[1], {x: xs, y: ys})))
    print(sums(sess.run(pair(W))), sums(sess.run(top)), sums([sess.run(top.values)]))
    sess.run(train_op, {x: xs, y: ys})
'''


def _numpy_gradients():
    """The gradient sums at the start, by hand: d/dW and d/dV of the mean squared error."""
    xs = np.arange(32, dtype=np.float64).reshape(8, 4) / 32 - 0.3
    ys = np.linspace(-1, 1, 8).reshape(8, 1)
    W, V = np.ones([4, 3]) * 0.3, np.ones([3, 1]) * -0.2
    h = np.tanh(xs @ W)
    d = 2 * (h @ V - ys) / 8
    gV, gW = h.T @ d, xs.T @ ((d @ V.T) * (1 - h ** 2))
    scale = min(1.0, 0.5 / np.sqrt((gW ** 2).sum() + (gV ** 2).sum()))
    sums = [round(float(np.abs(g).sum()), 5) for g in (gW, gV)]
    return sums, [round(float(np.abs(g * scale).sum()), 5) for g in (gW, gV)]


def test_a_fetched_list_of_tensors_gives_a_list_of_arrays(tmp_path):
    out = tier_output(LISTS)
    (tmp_path / "old.py").write_text(LISTS)
    (tmp_path / "new.py").write_text(out)
    old = run_tf1clip("run", tmp_path / "old.py", cwd=tmp_path)
    new = run_python(tmp_path / "new.py", cwd=tmp_path)
    assert old.returncode == 0 and new.returncode == 0, old.stderr[-2000:] + new.stderr[-2000:]
    assert new.stdout == old.stdout
    plain, clipped = _numpy_gradients()
    printed = [eval(line) for line in new.stdout.splitlines()[:5]]
    assert np.allclose(printed[0], plain, atol=2e-5) and np.allclose(printed[1], plain, atol=2e-5)
    assert np.allclose(printed[2], clipped, atol=2e-5) and np.allclose(printed[3], plain[1:], atol=2e-5)
    assert np.allclose(printed[4], [plain[1], 0.6], atol=2e-5)  # V's pair: its gradient, and V itself
    assert_parity(tmp_path, LISTS, out)

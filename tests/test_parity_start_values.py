"""`tf1clip parity` judges NEW's own initializers too (tf1clip/parity/start_values.py).

Parity loads OLD's start values into NEW, so the steps match even when NEW's initializer draws
from another distribution; the recorder keeps NEW's own start values' statistics first, and the
report fails on a different distribution. A TF 2 logistic regression whose weights start from
TF 2's default normal (stddev 0.05) fails against TF 1.x's (stddev 1.0); with stddev=1.0 written
out, as the TF2 tier writes it, it passes."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import run_tf1clip
from tf1clip.parity.start_values import same_distribution, stats

OLD = """import numpy as np
import tensorflow as tf

rng = np.random.RandomState(1)
data = rng.rand(64, 30).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 64)]
x = tf.placeholder(tf.float32, [None, 30])
y = tf.placeholder(tf.float32, [None, 10])
w = tf.get_variable("w", shape=(30, 10), initializer=tf.random_normal_initializer())
b = tf.get_variable("b", shape=(1, 10), initializer=tf.zeros_initializer())
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=tf.matmul(x, w) + b))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        print(sess.run([loss, train_op], {x: data, y: labels})[0])
"""

NEW = """import numpy as np
import tensorflow as tf

rng = np.random.RandomState(1)
data = rng.rand(64, 30).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 64)]
w = tf.Variable(tf.random_normal_initializer(STDDEV)([30, 10], dtype=tf.float32), name="w")
b = tf.Variable(tf.zeros_initializer()([1, 10], dtype=tf.float32), name="b")
optimizer = tf.keras.optimizers.SGD(0.1)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w) + b))
    gradients = tape.gradient(loss, [w, b])
    optimizer.apply_gradients(zip(gradients, [w, b]))
    return loss


for step in range(4):
    print(train_step(data, labels).numpy())
"""


@pytest.mark.parametrize("stddev, passes", [("stddev=1.0", True), ("", False)])
def test_a_tf2_default_initializer_fails_parity_and_tf1s_passes(stddev, passes, tmp_path):
    (tmp_path / "old.py").write_text(OLD)
    (tmp_path / "new.py").write_text(NEW.replace("STDDEV", stddev))
    proc = run_tf1clip("parity", "old.py", "new.py", cwd=tmp_path, timeout=600)
    out = proc.stdout + proc.stderr
    if passes:
        assert proc.returncode == 0, out[-3000:]
    else:
        assert proc.returncode == 1, out[-3000:]
        assert "start values of w" in out and "another distribution" in out
        assert "start values of b" not in out  # zeros on both sides


def test_the_rule_on_hand_made_statistics():
    rng = np.random.RandomState(0)
    one, other = stats(rng.randn(300)), stats(rng.randn(300))
    assert same_distribution(one, other)                              # two honest draws
    assert not same_distribution(one, stats(0.05 * rng.randn(300)))   # TF 2's default stddev
    assert not same_distribution(stats(rng.rand(300)), stats(rng.uniform(-0.05, 0.05, 300)))
    assert not same_distribution(stats(rng.randn(300)), stats(rng.randn(300) + 1.0))  # shifted mean
    assert same_distribution(stats(np.zeros(300)), stats(np.zeros(300)))
    assert not same_distribution(stats(np.zeros(300)), stats(np.ones(300)))
    assert same_distribution(stats(rng.randn(100)), stats(0.05 * rng.randn(100)))  # too small to judge

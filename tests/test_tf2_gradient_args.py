"""Gradient arguments that do not change the numbers, in the TF2 tier: colocate_gradients_with_ops
(device placement), gate_gradients (the order ops run in) and aggregation_method ADD_N / DEFAULT
(TF 1.x summed the gradients of a value used twice with add_n, as the tape does), in
compute_gradients, minimize and tf.gradients, by keyword or through TF 1.x's constants
(`tf.train.Optimizer.GATE_OP`, `tf.AggregationMethod.ADD_N`, read as the ints they were). The
other aggregation methods summed in another order: refused, with that reason."""
import sys
from pathlib import Path

import pytest

from conftest import assert_converts_and_trains_alike, refusal, sampled, tier_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.ones([4, 1]), name="W")
b = tf.Variable(tf.zeros([1]), name="b")
h = tf.matmul(x, W) + b
pred = h * h + h
loss = tf.reduce_mean(tf.square(pred - y))
opt = tf.train.AdamOptimizer(0.01)
{train}
rng = np.random.RandomState(0)
xs, ys = rng.randn(8, 4).astype(np.float32), rng.randn(8, 1).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print(step, l)
'''
CLIP = "train_op = opt.apply_gradients([(tf.clip_by_norm(g, 1.0), v) for g, v in gvs])"
CONVERTED = {
    "colocate": f"gvs = opt.compute_gradients(loss, colocate_gradients_with_ops=True)\n{CLIP}",
    "gate_constant": f"gvs = opt.compute_gradients(loss, gate_gradients=tf.train.Optimizer.GATE_GRAPH)\n{CLIP}",
    "add_n": f"gvs = opt.compute_gradients(loss, aggregation_method=tf.AggregationMethod.ADD_N)\n{CLIP}",
    "minimize_all_three": "train_op = opt.minimize(loss, gate_gradients=opt.GATE_NONE, "
                          "aggregation_method=tf.AggregationMethod.DEFAULT, colocate_gradients_with_ops=True)",
    "tf_gradients": "tvars = tf.trainable_variables()\n"
                    "grads = tf.gradients(loss, tvars, colocate_gradients_with_ops=True, gate_gradients=True)\n"
                    "grads, _ = tf.clip_by_global_norm(grads, 1.0)\ntrain_op = opt.apply_gradients(zip(grads, tvars))",
}


@pytest.mark.parametrize("variant", sorted(CONVERTED))
def test_gradient_arguments_that_keep_the_numbers_convert(variant):
    out = tier_output(SCRIPT.format(train=CONVERTED[variant]))
    assert "aggregation_method" not in out and "colocate" not in out


# parity on CI: the three arguments together; every variant in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTED), ("minimize_all_three",)))
def test_gradient_arguments_that_keep_the_numbers_train_alike(variant, tmp_path):
    assert_converts_and_trains_alike(tmp_path, SCRIPT.format(train=CONVERTED[variant]))


@pytest.mark.parametrize("train", [
    f"gvs = opt.compute_gradients(loss, aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE)\n{CLIP}",
    "train_op = opt.minimize(loss, aggregation_method=tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)",
])
def test_another_aggregation_method_is_refused_with_its_name(train):
    line, message = refusal(translate(SCRIPT.format(train=train), "t.py"))
    assert "aggregation_method=EXPERIMENTAL_" in message and "add_n" in message and line == 12, (line, message)

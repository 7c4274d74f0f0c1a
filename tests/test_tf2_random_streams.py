"""A random op in the graph that several runs reach: one stream in TF 1.x, one per step function in TF 2.

TF 1.x's `tf.random_normal` is one stateful kernel: the training run draws from it, and an evaluation
run reaching the same op draws the next values of the same stream. In TF 2 each step function that
computes it has its own kernel and stream, so the evaluation would see other values than TF 1.x's (the
proving ground found it: pkmital's denoising autoencoder failed parity on its evaluation fetch once its
mask helper converted). A random op one step function runs converts and passes parity; one that two
step functions run is refused, naming the op and both runs (`codemods/tf2/random_draws.py`). Dropout is
keyed by parity and converts either way.
"""
import pytest

from conftest import assert_parity, refusal, tier_output

TEXT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.ones([4, 1]) * 0.1)
mu = tf.matmul(x, W)
{noise}
loss = tf.reduce_mean(tf.square(pred - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5))
{after}
'''
EPS = "eps = tf.random_normal(tf.shape(mu){seed})\npred = mu + 0.1 * eps"


def test_a_random_op_that_one_step_runs_converts_and_passes_parity(tmp_path):
    text = TEXT.format(noise=EPS.format(seed=""), after="")
    out = tier_output(text)
    assert "tf.random.normal(tf.shape(mu))" in out, out
    assert_parity(tmp_path, text, out)


@pytest.mark.parametrize("seed", ["", ", seed=1"])
def test_a_random_op_that_two_steps_would_run_is_refused_naming_both_runs(seed):
    from codemods.tf2.translator import translate
    text = TEXT.format(noise=EPS.format(seed=seed), after="    print(sess.run(pred, {x: xs}).sum())")
    line, message = refusal(translate(text, "t.py"))
    assert text.splitlines()[line - 1].strip() == "print(sess.run(pred, {x: xs}).sum())", (line, message)
    assert message.startswith("not converted to the TF2 tier: the random op `tf.random.normal` (in `eps = "
                              "tf.random.normal(tf.shape(mu)") and "for the run of `train_op`, `loss` and for the " \
        "run of `pred`: TF 1.x drew its values from one stream" in message, message


def test_dropout_that_two_steps_run_converts():
    text = TEXT.format(noise="pred = tf.nn.dropout(mu, 0.5)", after="    print(sess.run(pred, {x: xs}).sum())")
    out = tier_output(text)
    assert out.count("tf.nn.dropout(mu, rate=1 - 0.5)") == 2, out

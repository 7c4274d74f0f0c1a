"""slim's `one_hot_encoding`, and the one variable of a layer made without a bias, fetched by index.

Found on awjuliani's Contextual-Policy notebook (a contextual bandit): `slim.one_hot_encoding(state, n)`
into `slim.fully_connected(..., biases_initializer=None)`, and `weights = tf.trainable_variables()[0]`
fetched with the update. TF 1.15's `one_hot_encoding` is `tf.one_hot(labels, num_classes, on_value=1.0,
off_value=0.0)` (float32 from its float on and off values); it was "no TF 2 translation". The layer's
kernel, its only variable, was taken for the layer itself, which a `sess.run` did not know. Each variant
prints the fetched weights, so a wrong variable or value changes what it prints. In a class, the
constructor's parameter that the layer's input reads (`one_hot_encoding(state, n)` inside the layer call) is
kept on the instance inside the method (`self.n = n`): it was written after the method, at module level.
"""
import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf
{head}
state = tf.placeholder(tf.int32, [None])
y = tf.placeholder(tf.float32, [None, 2])
{model}
loss = tf.reduce_mean(tf.square(tf.nn.sigmoid(out) - y))
train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
weights = tf.trainable_variables()[{index}]
states = np.array([0, 2, 1, 2])
ys = np.array([[1, 0], [0, 1], [1, 1], [0, 1]], dtype=np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l, w = sess.run([train_op, loss, weights], {{state: states, y: ys}})
        print("step", i, round(float(l), 5), np.round(w, 5).tolist())
'''
SLIM = "import tensorflow.contrib.slim as slim"
ONES = "weights_initializer=tf.ones_initializer()"
VARIANTS = {  # variant: (head, model, index of the fetched variable)
    "slim_no_bias": (SLIM, f"out = slim.fully_connected(slim.one_hot_encoding(state, 3), 2, biases_initializer=None, "
                           f"activation_fn=None, {ONES})", "0"),
    "contrib_values_last_index": (
        "", f"oh = tf.contrib.layers.one_hot_encoding(state, 3, on_value=0.9, off_value=0.1)\n"
            f"out = tf.contrib.layers.fully_connected(oh, 2, biases_initializer=None, activation_fn=None, {ONES})",
        "-1"),
    "slim_alias_in_a_class": (
        "slim = tf.contrib.slim",
        "class Agent:\n    def __init__(self, n):\n"
        f"        self.out = slim.fully_connected(slim.one_hot_encoding(state, n), 2, biases_initializer=None, "
        f"activation_fn=None, {ONES})\nagent = Agent(3)\nout = agent.out", "0"),
    "with_bias_first_is_the_kernel": (
        SLIM, f"out = slim.fully_connected(slim.one_hot_encoding(state, 3), 2, activation_fn=None, {ONES})", "0"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_one_hot_encoding_and_a_layer_variable_by_index(variant, tmp_path):
    head, model, index = VARIANTS[variant]
    text = TEXT.format(head=head, model=model, index=index)
    out = tier_output(text)
    assert "one_hot_encoding" not in out and "tf.one_hot(" in out, out
    if variant in sampled(VARIANTS, ("slim_no_bias",)):
        assert_prints_and_trains_alike(tmp_path, text, 3)

"""Scope and variable names computed from constants: `'layer_%d' % i`, `'conv{}'.format(i)`, `'fc' + '1'`.

TF 1.x named the variables by the string Python computed there; inside a loop whose passes the file fixes, or
a helper called with a number, that string is fixed too (`constants.folded_str`: the `%`, `str.format`,
f-string and `+` of constants, as Python computes them). The names decide which variables are new and which
are reused, so each variant must make the variables TF 1.x made: it trains and prints like TF 1.x. A name
made from something else stays refused, and a name that comes out the same twice is TF 1.x's ValueError.
"""
import pytest

from conftest import assert_prints_and_trains_alike, refusal, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
{model}
pred = tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(0.2))
loss = tf.reduce_mean(tf.square(pred - y))
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
rng = np.random.RandomState(0)
xs = rng.randn(8, 4).astype(np.float32)
ys = rng.randn(8, 1).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5))
'''
INIT = "initializer=tf.constant_initializer(0.1)"
VARIANTS = {
    "helper_percent": (f"def layer(inp, i):\n    with tf.variable_scope('layer_%d' % i):\n"
                       f"        w = tf.get_variable('w', [4, 4], {INIT})\n        return tf.nn.relu(tf.matmul(inp, w))\n"
                       "h = layer(x, 0)\nh = layer(h, 1)"),
    "loop_format": (f"h = x\nfor i in range(2):\n    with tf.variable_scope('layer_{{}}'.format(i)):\n"
                    f"        w = tf.get_variable('w', [4, 4], {INIT})\n        h = tf.nn.relu(tf.matmul(h, w))"),
    "loop_dense_name": ("h = x\nfor i in range(2):\n    h = tf.layers.dense(h, 4, activation=tf.nn.relu, name='fc%d' % i, "
                        "kernel_initializer=tf.constant_initializer(0.1))"),
    "loop_variable_name": (f"h = x\nfor i in [1, 2]:\n    w = tf.get_variable('w_%d' % i, [4, 4], {INIT})\n"
                           "    h = tf.nn.relu(tf.matmul(h, w))"),
    "helper_concatenated_and_reused": (
        f"def layer(inp, reuse=False):\n    with tf.variable_scope('enc' + '_1', reuse=reuse):\n"
        f"        w = tf.get_variable('w', [4, 4], {INIT})\n        return tf.nn.relu(tf.matmul(inp, w))\n"
        "h = layer(x) + layer(x * 0.5, reuse=True)"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_computed_name_trains_like_tf1(variant, tmp_path):
    text = TEXT.format(model=VARIANTS[variant])
    out = tier_output(text)
    assert "tf.variable_scope(" not in out and "tf.get_variable(" not in out, out
    if variant in sampled(VARIANTS, ("helper_percent",)):
        assert_prints_and_trains_alike(tmp_path, text, 3)


@pytest.mark.parametrize("name, why", [
    ("'conv' + str(n)", "a string of constants"),   # str() of a parameter: not folded
    ("'layer_%d' % 0", "already exists"),            # the same name twice: TF 1.x's ValueError
])
def test_names_not_made_of_constants_or_made_twice_are_refused(name, why):
    from codemods.tf2.translator import translate
    model = (f"def layer(inp, n):\n    with tf.variable_scope({name}):\n"
             f"        w = tf.get_variable('w', [4, 4], {INIT})\n        return tf.matmul(inp, w)\n"
             "h = layer(x, 1)\nh = layer(h, 2)")
    line, message = refusal(translate(TEXT.format(model=model), "t.py"))
    assert why in message, message

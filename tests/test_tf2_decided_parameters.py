"""A helper's parameter assigned only in a branch its constants decide away is its argument again.

pkmital's variational autoencoder: `def VAE(input_shape=[None, 784], ..., debug=False)` assigns
`input_shape = [50, 784]` under `if debug:`, then builds `x = tf.placeholder(tf.float32, input_shape)` and
reads `dims = x.get_shape().as_list()`. With `debug=False` TF 1.x never ran that assignment, so the
placeholder's shape is the default list and `dims[1]` is 784. The helper is read at its call with its
constant conditions decided (`inline._Decide`); a parameter assigned in the body was still given a name of
its own there, so the placeholder's shape was not known and the file was refused ("`dims` holds the static
shape ... which tf1clip does not know whole"). The variants train and print like TF 1.x. One whose branch is
taken keeps its assignment, a name bound to a list, whose value the placeholder's static shape does not
follow: it stays refused with that reason.
"""
import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf


def model(input_shape=[None, 6], n_hidden=3, debug=False):
    if debug:
        input_shape = [4, 5]
    x = tf.placeholder(tf.float32, input_shape)
    dims = x.get_shape().as_list()
    n_features = dims[1]
    W = tf.Variable(tf.ones([n_features, n_hidden]) * 0.1)
    W_out = tf.Variable(tf.ones([n_hidden, n_features]) * 0.2)
    y = tf.matmul(tf.nn.tanh(tf.matmul(x, W)), W_out)
    return {{'x': x, 'cost': tf.reduce_mean(tf.square(y - x))}}


net = {call}
train_op = tf.train.GradientDescentOptimizer(0.5).minimize(net['cost'])
print("features", net['x'].get_shape().as_list()[1])
data = np.linspace(-1, 1, 4 * {width}, dtype=np.float32).reshape(4, {width})
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, c = sess.run([train_op, net['cost']], {{net['x']: data}})
        print("step", i, round(float(c), 5))
'''
VARIANTS = {  # variant: (call, the input's width)
    "default_false": ("model()", 6),
    "given_false_by_keyword": ("model(debug=False)", 6),
    "given_shape_and_false": ("model([None, 6], 2, False)", 6),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_parameter_assigned_in_a_branch_decided_away(variant, tmp_path):
    call, width = VARIANTS[variant]
    text = TEXT.format(call=call, width=width)
    out = tier_output(text)
    assert "if debug" not in out and "tf.placeholder" not in out, out
    if variant in sampled(VARIANTS, ("default_false",)):
        assert_prints_and_trains_alike(tmp_path, text, 4)


def test_the_branch_taken_keeps_its_assignment_and_says_why():
    from codemods.tf2.translator import translate
    result = translate(TEXT.format(call="model(debug=True)", width=5), "t.py")
    assert result.text is None
    (message,) = [n.message for n in result.notes if n.kind == "human"]
    assert "`dims` holds the static shape" in message, message

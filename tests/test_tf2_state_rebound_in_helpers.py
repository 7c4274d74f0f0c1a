"""A helper read in place whose body binds a name of its state again (`codemods/tf2/versions.py`).

    def model(x):
        W = tf.Variable(...)
        h = tf.matmul(x, W)
        W = tf.Variable(...)      # TF 1.x's graph kept the first W in the first matmul
        return tf.matmul(h, W)

Read in place at its call, each later binding of such a name gets a spelling of its own, and every
statement reads the spelling in force where Python ran it. Before, the steps read the last binding
for every use: the output crashed on the shapes (pkmital's tied-weight autoencoder, whose encoder and
decoder loops both bind `b`), or would have trained with the wrong variable where the shapes agree.
Each variant prints and trains like TF 1.x.
"""
import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

HEAD = "import numpy as np\nimport tensorflow as tf\n"
DATA = '''xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
'''
LOOP = '''with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {x: xs, y: ys})
        print("step", i, round(float(l), 5))
'''
TWICE = '''

def model(x):
    W = tf.Variable(tf.ones([4, 3]) * 0.1)
    b = tf.Variable(tf.ones([3]) * 0.2)
    h = tf.nn.tanh(tf.matmul(x, W) + b)
    W = tf.Variable(tf.ones([3, 1]) * 0.3)
    b = tf.Variable(tf.ones([1]) * 0.4)
    return tf.matmul(h, W) + b


'''
SAME_SHAPES = TWICE.replace("[4, 3]", "[4, 4]").replace("[3]) * 0.2", "[4]) * 0.2").replace("[3, 1]", "[4, 4]") \
    .replace("[1]) * 0.4", "[4]) * 0.4") \
    .replace("return tf.matmul(h, W) + b", "return tf.reduce_sum(tf.matmul(h, W) + b, 1, keepdims=True)")
LOOPS = '''

def model(x, dims):
    h = x
    for n_in, n_out in zip(dims[:-1], dims[1:]):
        W = tf.Variable(tf.ones([n_in, n_out]) * 0.1)
        b = tf.Variable(tf.ones([n_out]) * 0.2)
        h = tf.nn.tanh(tf.matmul(h, W) + b)
    for n_out in dims[::-1][1:]:
        b = tf.Variable(tf.ones([n_out]) * 0.3)
        h = tf.matmul(h, tf.ones([int(h.get_shape()[1]), n_out])) + b
    return tf.reduce_mean(h, 1, keepdims=True)


'''
GET_VARIABLE = '''

def model(x):
    with tf.variable_scope("one"):
        W = tf.get_variable("W", [4, 3], initializer=tf.constant_initializer(0.1))
    h = tf.nn.tanh(tf.matmul(x, W))
    with tf.variable_scope("two"):
        W = tf.get_variable("W", [3, 1], initializer=tf.constant_initializer(0.3))
    return tf.matmul(h, W)


'''
BUILD = '''x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
out = model(x{arg})
loss = tf.reduce_mean(tf.square(out - y))
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
'''


def _indent(text: str) -> str:
    return "".join("    " + line + "\n" if line else "\n" for line in text.splitlines())


VARIANTS = {
    "at_module_level": HEAD + TWICE + BUILD.format(arg="") + DATA + LOOP,
    "in_a_function_that_runs_the_session": HEAD + TWICE + "def main():\n" + _indent(BUILD.format(arg="") + DATA + LOOP)
    + "\n\nmain()\n",
    "the_same_shapes": HEAD + SAME_SHAPES + BUILD.format(arg="") + DATA + LOOP,
    "two_loops_read_as_their_passes": HEAD + LOOPS + BUILD.format(arg=", [4, 3, 2]") + DATA + LOOP,
    "get_variable_in_two_scopes": HEAD + GET_VARIABLE + BUILD.format(arg="") + DATA + LOOP,
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_binding_of_the_helpers_state_is_read_where_tf1_read_it(variant, tmp_path):
    text = VARIANTS[variant]
    out = tier_output(text)
    assert "W_2" in out or "W_3" in out or "b_2" in out or "b_3" in out, out  # a later binding spelt apart
    # on CI: the silent one (same shapes); every variant in full proofs (the loops are pkmital's 07 shape,
    # proved on the proving ground too)
    if variant in sampled(VARIANTS, ("the_same_shapes",)):
        assert_prints_and_trains_alike(tmp_path, text, 3)

"""A placeholder's shape held by a name (`fixed_values`): TF 1.x read the list the name held when it built
the graph. A list of constants the file binds once and only reads (iterates, indexes, gives to `len` or to
TensorFlow) holds the same list wherever it is read, so its dimensions are known: a module-level
`shape = [None, 4]`, or a helper's parameter default (`def model(dimensions=[4, 3])`), read in place at the
call. A list that anything may change (an item stored, a method called, bound again) is not read so."""
import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

SCRIPT = '''import numpy as np
import tensorflow as tf

{model}
train_op = tf.train.AdamOptimizer(0.1).minimize(loss)
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5))
'''
DENSE = "tf.layers.dense(x, {units}, kernel_initializer=tf.constant_initializer(0.1))"
LOSS = "loss = tf.reduce_mean(tf.square(h - y))"
CONVERTS = {
    "a_module_name": "shape = [None, 4]\nx = tf.placeholder(tf.float32, shape)\n"
                     f"y = tf.placeholder(tf.float32, [None, 1])\nh = {DENSE.format(units=1)}\n{LOSS}",
    "a_tuple": f"shape = (None, 4)\nx = tf.placeholder(tf.float32, shape)\ny = tf.placeholder(tf.float32, [None, 1])\n"
               f"h = {DENSE.format(units=1)}\n{LOSS}",
    "read_by_len_too": f"shape = [None, 4]\nx = tf.placeholder(tf.float32, shape)\n"
                       f"y = tf.placeholder(tf.float32, [None, len(shape) - 1])\nh = {DENSE.format(units=1)}\n{LOSS}",
    "a_parameter_default": "def model(input_shape=[None, 4]):\n    x = tf.placeholder(tf.float32, input_shape)\n"
                           "    y = tf.placeholder(tf.float32, [None, 1])\n"
                           f"    h = {DENSE.format(units=1)}\n    {LOSS}\n    return x, y, loss\nx, y, loss = model()",
    "items_of_a_parameter": "def model(dimensions=[4, 3]):\n    x = tf.placeholder(tf.float32, [None, dimensions[0]])\n"
                            "    y = tf.placeholder(tf.float32, [None, 1])\n"
                            f"    h = {DENSE.format(units='dimensions[1]')}\n"
                            "    W = tf.Variable(tf.ones([int(h.get_shape()[1]), 1]) * 0.2)\n"
                            "    loss = tf.reduce_mean(tf.square(tf.matmul(h, W) - y))\n    return x, y, loss\n"
                            "x, y, loss = model()",
    "a_list_given": "def model(input_shape):\n    x = tf.placeholder(tf.float32, input_shape)\n"
                    "    y = tf.placeholder(tf.float32, [None, 1])\n"
                    f"    h = {DENSE.format(units=1)}\n    {LOSS}\n    return x, y, loss\n"
                    "x, y, loss = model([None, 4])",
}


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_a_list_of_constants_only_read_gives_the_placeholder_its_shape(variant, tmp_path):
    text = SCRIPT.format(model=CONVERTS[variant])
    out = tier_output(text)
    assert "tf.keras.layers.Dense(" in out and "tf.TensorSpec(" in out
    if variant in sampled(CONVERTS, ("items_of_a_parameter",)):  # parity on CI for one, every one in full proofs
        assert_prints_and_trains_alike(tmp_path, text, 3)


REFUSED = {  # variant: the model, in which something may change the list before TF 1.x read it, or after
    "an_item_stored": f"shape = [None, 3]\nshape[1] = 4\nx = tf.placeholder(tf.float32, shape)\n"
                      f"y = tf.placeholder(tf.float32, [None, 1])\nh = {DENSE.format(units=1)}\n{LOSS}",
    "a_method_called": f"shape = [None]\nshape.append(4)\nx = tf.placeholder(tf.float32, shape)\n"
                       f"y = tf.placeholder(tf.float32, [None, 1])\nh = {DENSE.format(units=1)}\n{LOSS}",
    "bound_again": f"shape = [None, 3]\nshape = [None, 4]\nx = tf.placeholder(tf.float32, shape)\n"
                   f"y = tf.placeholder(tf.float32, [None, 1])\nh = {DENSE.format(units=1)}\n{LOSS}",
    "given_to_a_function": f"shape = [None, 4]\nprint(id(shape))\nx = tf.placeholder(tf.float32, shape)\n"
                           f"y = tf.placeholder(tf.float32, [None, 1])\nh = {DENSE.format(units=1)}\n{LOSS}",
    "a_parameter_changed": "def model(input_shape=[None, 3]):\n    input_shape[1] = 4\n"
                           "    x = tf.placeholder(tf.float32, input_shape)\n"
                           "    y = tf.placeholder(tf.float32, [None, 1])\n"
                           f"    h = {DENSE.format(units=1)}\n    {LOSS}\n    return x, y, loss\nx, y, loss = model()",
}


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_a_list_that_may_change_is_not_read_as_fixed(variant):
    from codemods.tf2 import convert
    result = convert(SCRIPT.format(model=REFUSED[variant]), "t.py")
    assert result.text is None
    human = [n.message for n in result.notes if n.kind == "human"]
    assert len(human) == 1 and "has no known static width" in human[0], human

"""A helper whose TensorFlow is only host utilities computes on the host, where it is called.

TF 1.x scripts have functions that use TensorFlow without building graph: a dtype chosen by a flag
(`def data_type(): return tf.float16 if FLAGS.use_fp16 else tf.float32`, TensorFlow's MNIST tutorial), a
data path made with `tf.gfile`, a message through `tf.logging`. Their results are Python values. They
were read as graph helpers before: the result was a tensor, so `int(n * 0.5)` of a loader's array
shape was refused with "`int(...)` is given graph values", which is false, and a kept helper's
parameters were graph values, so `os.path.join(...)` inside it was refused the same way.

Now a helper is a graph helper when it names TensorFlow other than its host utilities and dtypes
(`names.host_utility`, one rule for the helper analysis and the hoisting of calls), or reads graph
values, or is given them. Each variant converts and prints and trains like TF 1.x (one on CI, all
under full proofs); a helper making a constant is still a graph helper, called in the step.
"""
import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

TEXT = '''import os
import numpy as np
import tensorflow as tf
{helpers}

def load(path, n):
    """the data, whatever the path: a host loader"""
    return np.arange(n * 3, dtype=np.float32).reshape(n, 3) / (10.0 + 0 * len(path)) - 0.2


xs = load({path}, 8)
n = xs.shape[0]
half = int(n * 0.5)
ys = np.linspace(-1, 1, n, dtype=np.float32).reshape(n, 1)
x = tf.placeholder({dtype}, [None, 3])
y = tf.placeholder({dtype}, [None, 1])
W = tf.Variable(tf.ones([3, 1], dtype={dtype}) * 0.2)
loss = tf.reduce_mean(tf.square(tf.matmul(x, W) - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs[:half], y: ys[:half]}})
        print("step", i, round(float(l), 5))
'''
DATA_TYPE = '''
tf.app.flags.DEFINE_boolean("use_fp16", False, "half precision")
FLAGS = tf.app.flags.FLAGS


def data_type():
    if FLAGS.use_fp16:
        return tf.float16
    else:
        return tf.float32
'''
GFILE = '''

def data_path(name):
    if not tf.gfile.Exists("."):
        tf.gfile.MakeDirs(".")
    tf.logging.info("reading %s", name)
    return os.path.join(".", name)
'''
VARIANTS = {  # variant: (helpers, the path given to `load`, the dtype)
    "a_dtype_by_a_flag": (DATA_TYPE, '"data.bin"', "data_type()"),
    "a_path_made_with_gfile": (GFILE, 'data_path("data.bin")', "tf.float32"),
    "both_through_a_helper_calling_them": (DATA_TYPE + GFILE + '''

def dtype_and_path():
    return data_type(), data_path("data.bin")


DTYPE, PATH = dtype_and_path()
''', "PATH", "DTYPE"),
    "through_an_alias_of_tensorflow": (GFILE.replace("tf.", "T.") + "\nimport tensorflow as T\n",
                                       'data_path("data.bin")', "tf.float32"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_helper_using_only_host_utilities_computes_on_the_host(variant, tmp_path):
    helpers, path, dtype = VARIANTS[variant]
    text = TEXT.format(helpers=helpers, path=path, dtype=dtype)
    out = tier_output(text)
    assert "half = int(n * 0.5)" in out, out  # where it was, on the host
    if variant in sampled(VARIANTS, ("a_dtype_by_a_flag",)):
        assert_prints_and_trains_alike(tmp_path, text, 3)


def test_a_helper_making_a_constant_is_still_a_graph_helper_called_in_the_step():
    text = TEXT.format(helpers="\n\ndef offset():\n    return tf.constant(0.5, dtype=tf.float32)\n",
                       path='"data.bin"', dtype="tf.float32").replace(
        "tf.matmul(x, W) - y", "tf.matmul(x, W) + offset() - y")
    out = tier_output(text)
    step = out[out.index("def train_step("):out.index("train_step.get_concrete_function")]
    assert "= offset()" in step and "= offset()" not in out.replace(step, ""), out

"""A placeholder shaped by a NumPy array the script made: `tf.placeholder(tf.float32, x.shape)`.

Found in a tutorial series nobody here had shown the team (issue 29: four scripts refused with "the
input of `tf.layers.dense` has no known static width"): the data is made two lines above
(`x = np.linspace(-1, 1, 100)[:, np.newaxis]`), and TF 1.x's placeholder had its static shape, so
the dense layer on it had its width. `codemods/tf2/host_shapes.py` computes the array's shape by
NumPy's rules; the tests below hold it to NumPy itself (the snippets are run), and hold the
translations to TF 1.x by parity. Names rebound, made in a function, reshaped in place or loaded
from a file stay unknown, and the file is refused for the width, as before.
"""
import sys
from pathlib import Path

import libcst as cst
import numpy as np
import pytest

from conftest import assert_prints_and_trains_alike, refusal, sampled, tier_output

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from codemods.tf2.fixed_values import Fixed, first_values  # noqa: E402
from codemods.tf2.host_shapes import HostShapes  # noqa: E402
from codemods.tf2.names import ImportTable  # noqa: E402
from codemods.tf2.translator import translate  # noqa: E402

ARRAYS = '''import numpy as np
import numpy
from numpy import random as npr
rng = np.random.RandomState(0)
n = 7
dims = (3, 4)
a = np.linspace(-1, 1, 100)[:, np.newaxis]
b = np.random.normal(0, 0.1, size=a.shape)
c = np.power(a, 2) + b
d = np.ones((100, 2))
e = np.random.normal(2 * d, 1)
f = np.vstack((e, -e))
g = np.hstack((np.zeros(100), np.ones(100)))
h = rng.randn(32, n).astype(np.float32)
i = np.arange(12).reshape(-1, 3) / 12.0
j = numpy.zeros(dims).T
k = npr.uniform(-1, 1, (5, 1, 3)) * np.ones((4, 1))
l = np.array([[1, 2], [3, 4], [5, 6]])[1:, None, :]
m = np.concatenate([d, d, d], axis=1)
o = np.expand_dims(np.eye(4), -1)[..., 0]
p = rng.rand(6, 2) @ np.ones((2, 5))
q = np.random.randint(0, 3, 50)
r = np.full((2, 3), 0.5).flatten()
s = np.zeros((4, 4))
s = s + 1
t = np.array([[1, 2], [3]], dtype=object)
u = np.zeros((6, 2))
u.shape = (3, 4)
'''
UNKNOWN = {"o", "p", "s", "t", "u"}  # an Ellipsis, `@`, bound twice, ragged, reshaped in place


def _analysis(source):
    module = cst.parse_module(source)
    table, module = ImportTable.read(module)
    return HostShapes(Fixed(module, table.sites or {}, first_values(module)), table.raw)


def test_array_shapes_are_numpys_own():
    shapes = _analysis(ARRAYS)
    names = {}
    exec(compile(ARRAYS, "<arrays>", "exec"), names)  # noqa: S102 - NumPy itself is the oracle
    checked = 0
    for name, value in names.items():
        if not isinstance(value, np.ndarray):
            continue
        found = shapes.shape_of(cst.Name(name))
        if name in UNKNOWN:
            assert found is None, (name, found)
        else:
            assert found == value.shape, (name, found, value.shape)
            checked += 1
    assert checked == 15


TEXT = '''import numpy as np
import tensorflow as tf
tf.set_random_seed(1)
np.random.seed(1)
{data}
{model}
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(3):
{run}
'''
REGRESSION = ("x = np.linspace(-1, 1, 100)[:, np.newaxis]\nnoise = np.random.normal(0, 0.1, size=x.shape)\n"
              "y = np.power(x, 2) + noise")
CLASSES = ("n_data = np.ones((100, 2))\nx0 = np.random.normal(2 * n_data, 1)\ny0 = np.zeros(100)\n"
           "x1 = np.random.normal(-2 * n_data, 1)\ny1 = np.ones(100)\nx = np.vstack((x0, x1))\ny = np.hstack((y0, y1))")
FIXED = "kernel_initializer=tf.constant_initializer(0.3)"  # start values the printed lines can compare
DENSE = ("tf_x = tf.placeholder(tf.float32, x.shape)\ntf_y = tf.placeholder(tf.float32, y.shape)\n"
         f"l1 = tf.layers.dense(tf_x, 10, tf.nn.relu, {FIXED})\noutput = tf.layers.dense(l1, 1, {FIXED})\n"
         "loss = tf.losses.mean_squared_error(tf_y, output)")
LIST_RUN = ("        _, l, pred = sess.run([train_op, loss, output], {tf_x: x, tf_y: y})\n"
            "        print(step, round(float(l), 5), round(float(pred.sum()), 4))")
VARIANTS = {  # variant: (data, model, run)
    "regression_module": (REGRESSION, DENSE, LIST_RUN),
    "classes_sparse_softmax_separate_runs": (
        CLASSES,
        "tf_x = tf.placeholder(tf.float32, x.shape)\ntf_y = tf.placeholder(tf.int32, y.shape)\n"
        f"l1 = tf.layers.dense(tf_x, 10, tf.nn.relu, {FIXED})\noutput = tf.layers.dense(l1, 2, {FIXED})\n"
        "loss = tf.losses.sparse_softmax_cross_entropy(labels=tf_y, logits=output)",
        "        sess.run(train_op, feed_dict={tf_x: x, tf_y: y.astype(np.int32)})\n"
        "        print(step, round(float(sess.run(loss, {tf_x: x, tf_y: y.astype(np.int32)})), 5))"),
    "random_state_in_a_function_model": (
        "rng = np.random.RandomState(0)\nX = rng.randn(32, 3).astype(np.float32)\nY = np.zeros((32, 1)) + 0.5",
        f"def model(inputs):\n    hidden = tf.layers.dense(inputs, 4, tf.nn.tanh, name='hidden', {FIXED})\n"
        f"    return tf.layers.dense(hidden, 1, name='out', {FIXED})\n"
        "tf_x = tf.placeholder(tf.float32, X.shape)\ntf_y = tf.placeholder(tf.float32, [None, 1])\n"
        "loss = tf.reduce_mean(tf.square(model(tf_x) - tf_y))",
        "        l, _ = sess.run([loss, train_op], {tf_x: X, tf_y: Y})\n        print(step, round(float(l), 5))"),
    "class_model_reshaped_data": (
        "x = np.arange(24).reshape(-1, 2) / 24.0\ny = x.sum(axis=1, keepdims=True)",
        "class Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, x.shape)\n"
        "        self.y = tf.placeholder(tf.float32, [None, 1])\n"
        f"        self.out = tf.layers.dense(self.x, 1, {FIXED})\n"
        "        self.loss = tf.reduce_mean(tf.square(self.out - self.y))\n"
        "net = Net()\nloss = net.loss",
        "        _, l = sess.run([train_op, loss], {net.x: x, net.y: y})\n        print(step, round(float(l), 5))"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_placeholder_shaped_by_an_array_builds_its_layer(variant, tmp_path):
    data, model, run = VARIANTS[variant]
    text = TEXT.format(data=data, model=model, run=run)
    out = tier_output(text)
    width = {"regression_module": 1, "classes_sparse_softmax_separate_runs": 2, "random_state_in_a_function_model": 3,
             "class_model_reshaped_data": 2}[variant]
    assert f".build((None, {width}))" in out, out  # the first layer's width, from the array
    assert "tf.TensorSpec(" in out and ".shape, tf.float32)" in out  # the step's input keeps the script's shape
    if variant in sampled(VARIANTS, ("regression_module",)):
        assert_prints_and_trains_alike(tmp_path, text, 3)


REFUSED = {  # variant: what makes the array's shape unknown here
    "rebound": REGRESSION + "\nx = x * 2",
    "made_in_a_function": "def make():\n    return np.linspace(-1, 1, 100)[:, np.newaxis]\nx = make()\ny = x ** 2",
    "reshaped_in_place": REGRESSION + "\nx.shape = (50, 2)",
    "loaded": "x = np.load('x.npy')\ny = np.load('y.npy')",
}


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_an_array_shape_the_file_does_not_decide_is_refused_for_the_width(variant):
    text = TEXT.format(data=REFUSED[variant], model=DENSE, run=LIST_RUN)
    line, message = refusal(translate(text, "t.py"))
    assert "has no known static width" in message and "tf.layers.dense" in message, message
    assert text.splitlines()[line - 1].startswith("l1 = tf.layers.dense")

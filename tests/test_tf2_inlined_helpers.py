"""A helper read where it is called, whose name is bound again later (`codemods/tf2/helpers.py`, `finish`).

`pred = model(x)`, where `model` makes its variables, is read as its body where it is called (TF 1.x
ran it there, once). Its `def` goes when no other read of the name sees it: which definition reaches
each read is asked of the reaching definitions, so `for model in range(3)` in the training loop (progen
seed 454) or `model = None` reads another binding. Before, any later use of the name kept the `def`,
and rewriting it for the steps made its variables again: refused with a false reason (TF 1.x raised
ValueError; it did not). Where the function itself is read elsewhere (`build = model`) it is refused
with what stops it: kept as a function, it would create its state again.
"""
import sys
from pathlib import Path

import pytest

from conftest import assert_prints_and_trains_alike, line_of, sampled, tier_output

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])


def model(inputs):
    W = tf.get_variable("W", initializer=tf.ones([4, 3]) * 0.3 - tf.reshape(tf.range(12, dtype=tf.float32), [4, 3]) * 0.05)
    V = tf.get_variable("V", initializer=tf.ones([3, 1]) * -0.2)
    return tf.matmul(tf.tanh(tf.matmul(inputs, W)), V)


pred = model(x)
loss = tf.reduce_mean(tf.square(pred - y))
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for model in range(3):
        _, l = sess.run([train_op, loss], {x: xs, y: ys})
        print("step", model, round(float(l), 5))
    print("test", round(float(sess.run(loss, {x: xs[:4], y: ys[:4]})), 5))
'''

VARIANTS = {
    "loop_variable": SCRIPT,
    "bound_to_none": SCRIPT.replace("    for model in range(3):", "    model = None\n    for i in range(3):")
                           .replace('print("step", model,', 'print("step", i,'),
}


@pytest.mark.parametrize("name", sampled(VARIANTS, {"loop_variable"}))
def test_a_helper_inlined_then_its_name_bound_again_converts_and_trains_alike(tmp_path, name):
    out = assert_prints_and_trains_alike(tmp_path, VARIANTS[name], 4)
    assert "def model(" not in out and 'tf.Variable(tf.ones([4, 3]) * 0.3' in out  # made once, at module level


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_drops_the_def(name):
    out = tier_output(VARIANTS[name])
    assert "def model(" not in out and out.count("tf.Variable(") == 2


def test_a_helper_read_elsewhere_too_is_refused_with_what_stops_it():
    text = SCRIPT.replace("pred = model(x)\n", "pred = model(x)\nbuild = model\n")
    result = translate(text, "t.py")
    assert result.text is None
    note = next(n for n in result.notes if n.kind == "human")
    assert note.line == line_of(text, "def model(")
    assert "helper `model` creates state; its calls were read as its body" in note.message
    assert "ValueError" not in note.message

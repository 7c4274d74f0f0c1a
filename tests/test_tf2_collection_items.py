"""An item of the trainable variables picked by its place: `tf.trainable_variables()[0]`.

TF 1.x's list holds each variable in the order it was made; the TF2 tier knows that order (a layer's
kernel, then its bias) and writes the list where the call was. An item picked by a literal index is
that variable itself: fetched with the update (progen seeds 359, 364, 439, 442, 480), optimized
alone (`var_list=[picked]`), differentiated (`tf.gradients(loss, picked)`), or read in the steps.
A layer's variable is its own variable (`dense1.kernel`), reached through the layer, not the layer.
Variants: first, middle and last items, through an alias, `tf.get_collection`, a list bound to a
name first, a scope, a function returning it, a value computed from it, an item of a slice with
constant bounds (those variables); each prints what TF 1.x printed and trains like it (a sample on
CI). An item of a slice whose bound is not known here is refused, with the reason.
Found with it: `tf.trainable_variables()[0]` had become `[W] + dense.trainable_variables[0]` (the
subscript taken by the last operand: Python's precedence), now parenthesized.
"""
import ast
import sys
from pathlib import Path

import libcst as cst
import numpy as np
import pytest

from conftest import assert_prints_and_trains_alike, run_python, sampled, tier_output

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codemods.tf2._base import Refuse  # noqa: E402
from codemods.tf2.output_checks import transform  # noqa: E402
from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf
{head}
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
init = tf.constant_initializer(np.linspace(-0.5, 0.5, 12).reshape(4, 3))
h = tf.layers.dense(x, 3, activation=tf.tanh, kernel_initializer=init, name="dense1")
pred = tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(-0.2), name="out")
loss = tf.reduce_mean(tf.square(pred - y))
{model}
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        {fetch}
        print("step", i, round(float(l), 5), np.round(w, 4).tolist())
    print(np.round(sess.run(picked), 4).tolist())
'''
TRAIN = "train_op = tf.train.AdamOptimizer(0.05).minimize(loss)\n"
FETCH = "_, l, w = sess.run([train_op, loss, picked], {x: xs, y: ys})"
# name: (the lines that make `picked` and `train_op`, the shape of `picked`)
VARIANTS = {
    "first": (TRAIN + "picked = tf.trainable_variables()[0]\n", [4, 3]),
    "middle": (TRAIN + "picked = tf.trainable_variables()[2]\n", [3, 1]),
    "last": (TRAIN + "picked = tf.trainable_variables()[-1]\n", [1]),
    "alias": ("T = tf\n" + TRAIN + "picked = T.trainable_variables()[1]\n", [3]),
    "collection": (TRAIN + "picked = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)[0]\n", [4, 3]),
    "named_list": ("tvars = tf.trainable_variables()\n" + TRAIN + "picked = tvars[0]\n", [4, 3]),
    "scoped": (TRAIN + "picked = tf.trainable_variables('out')[0]\n", [3, 1]),
    "var_list": ("picked = tf.trainable_variables()[0]\n"
                 "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[picked])\n", [4, 3]),
    "gradients": ("picked = tf.trainable_variables()[0]\ng = tf.gradients(loss, picked)[0]\n"
                  "train_op = tf.train.GradientDescentOptimizer(0.1).apply_gradients([(g, picked)])\n", [4, 3]),
    "in_function": (TRAIN + "def pick():\n    return tf.trainable_variables()[0]\n\n\npicked = pick()\n", [4, 3]),
    "computed": (TRAIN + "picked = tf.trainable_variables()[0] * 2.0\n", [4, 3]),
    # a slice with constant bounds is those variables (the third of four: the second layer's kernel)
    "a slice's item": (TRAIN + "picked = tf.trainable_variables()[1:3][1]\n", [3, 1]),
}


def _script(name: str) -> str:
    return SCRIPT.format(head="", model=VARIANTS[name][0], fetch=FETCH)


@pytest.mark.parametrize("name", sampled(VARIANTS, {"var_list"}))
def test_an_item_of_the_variables_by_its_place_converts_and_trains_alike(tmp_path, name):
    out = assert_prints_and_trains_alike(tmp_path, _script(name), 4)
    assert "trainable_variables()" not in out
    printed = run_python(tmp_path / "new.py", cwd=tmp_path).stdout.splitlines()
    assert list(np.array(ast.literal_eval(printed[-1])).shape) == VARIANTS[name][1]  # that variable, TF 1.x's order


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_converts(name):
    out = tier_output(_script(name))
    assert "get_collection" not in out and "trainable_variables()" not in out


def test_the_list_written_where_the_call_was_is_parenthesized_under_a_subscript():
    out = tier_output(_script("var_list"))
    assert "picked = (dense1.trainable_variables + out.trainable_variables)[0]" in out


def test_an_item_of_a_slice_whose_bound_is_not_known_is_refused_with_the_reason():
    text = SCRIPT.format(head="", model=TRAIN + "picked = tf.trainable_variables()[np.random.randint(1):][0]\n",
                         fetch=FETCH)
    result = translate(text, "t.py")
    assert result.text is None
    note = next(n for n in result.notes if n.kind == "human")
    assert "an item of a list of variables or tensors that tf1clip does not follow to the one it is" in note.message


STALE = '''import tensorflow as tf

W = tf.Variable(tf.ones([4, 3]))
dense = tf.keras.layers.Dense(2)
dense.build((None, 3))
{picked}


@tf.function
def step(x):
    return tf.matmul(x, W) + tf.reduce_sum(picked)
'''


@pytest.mark.parametrize("picked, stale", [
    ("picked = ([W] + dense.trainable_variables)[0]", False),  # the variable itself: read as it is now
    ("picked = W[0]", True),                                     # a row of W computed once: stale in the step
    ("picked = ([W] + dense.trainable_variables)[0] * 2.0", True),
])
def test_the_output_check_tells_an_item_of_a_list_of_variables_from_a_value_computed_from_one(picked, stale):
    module = cst.parse_module(STALE.format(picked=picked))
    if stale:
        with pytest.raises(Refuse, match="`picked` is computed once, at module level, from variables"):
            transform(module)
    else:
        assert transform(module)[0].code == module.code

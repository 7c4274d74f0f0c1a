"""A graph helper called inside an expression is read as its own statement first (codemods/tf2/hoist.py):
`test_pred = tf.reduce_mean(tower(x, reuse=True))` is `tower_out = tower(x, reuse=True)` then
`test_pred = tf.reduce_mean(tower_out)`, the same program. Each variant converts and trains like the
original; where Python may run the call later or not at all, or something with effects runs before
it, the statement is left as it is and the refusal says why."""
import sys
from pathlib import Path

import pytest

from conftest import assert_converts_and_trains_alike, refusal, sampled, tier_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf


def tower(z, reuse=False):
    with tf.variable_scope("tower", reuse=reuse):
        h = tf.layers.dense(z, 6, activation=tf.nn.tanh)
        return tf.layers.dense(h, 1)


def count():
    return 3


x = tf.placeholder(tf.float32, [None, 4])
x2 = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
{model}
opt = tf.train.AdamOptimizer(0.01)
grads, tvars = zip(*opt.compute_gradients(loss))
grads, _ = tf.clip_by_global_norm(grads, 1.0)
train_op = opt.apply_gradients(zip(grads, tvars))
rng = np.random.RandomState(0)
xs, ys = rng.randn(8, 4).astype(np.float32), rng.randn(8, 1).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(3):
        _, l, e = sess.run([train_op, loss, check], {{x: xs, x2: xs[::-1], y: ys}})
        print(step, l, e)
'''
CONVERTED = {
    "inside_a_call": "loss = tf.reduce_mean(tf.square(tower(x) - y))\n"
                     "check = tf.reduce_mean(tower(x2, reuse=True))",
    "two_in_a_tuple": "a, b = tower(x), tower(x2, reuse=True)\nloss = tf.reduce_mean(tf.square(a - y))\n"
                      "check = tf.reduce_mean(b)",
    "nested_in_arithmetic": "loss = tf.reduce_mean(tf.square(tower(x) - y)) + 0.1 * tf.reduce_mean(tf.abs(x))\n"
                            "check = 2.0 * tf.reduce_mean(tower(x2, reuse=True)) + 1.0",
    "after_a_plain_op": "loss = tf.reduce_mean(tf.square(tf.identity(y) - tower(x)))\n"
                        "check = tf.reduce_sum(tower(x2, reuse=True))",
    "in_a_function": "def build():\n    loss = tf.reduce_mean(tf.square(tower(x) - y))\n"
                     "    return loss, tf.reduce_mean(tower(x2, reuse=True))\n\n\nloss, check = build()",
}


@pytest.mark.parametrize("variant", sorted(CONVERTED))
def test_a_helper_inside_an_expression_converts(variant):
    text = SCRIPT.format(model=CONVERTED[variant])
    assert any("inside an expression → its own statement" in n.message for n in translate(text, "t.py").notes)
    tier_output(text)


# parity on CI: a call inside a function; every variant in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTED), ("in_a_function",)))
def test_a_helper_inside_an_expression_converts_and_trains_alike(variant, tmp_path):
    assert_converts_and_trains_alike(tmp_path, SCRIPT.format(model=CONVERTED[variant]))


@pytest.mark.parametrize("model, line", [
    ("loss = tf.reduce_mean(tf.square(tower(x) - y)) * count()\ncheck = loss", None),  # count() runs after: fine
    ("loss = tf.reduce_mean(tf.square(tower(x) - y))\ncheck = count() + tf.reduce_mean(tower(x2, reuse=True))", 19),
    ("loss = tf.reduce_mean(tf.square(tower(x) - y))\ncheck = tf.add_n([tower(z, reuse=True) for z in [x2]])", 19),
    ("loss = tf.reduce_mean(tf.square(tower(x) - y))\nflag = True\n"
     "check = tf.reduce_mean(tower(x2, reuse=True) if flag else x2)", 20),
])
def test_kept_when_python_may_run_something_else_first_or_the_call_later(model, line):
    result = translate(SCRIPT.format(model=model), "t.py")
    if line is None:
        assert result.text is not None, [n for n in result.notes if n.kind == "human"]
        return
    at, message = refusal(result)
    assert at == line and "called inside an expression" in message, (at, message)

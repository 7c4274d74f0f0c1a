"""`tf.cond` in graph code (codemods/tf2/ops.py): the same op in TF 2, computed in the steps. The
conversion is proven by parity in tests/test_tf2_parity.py (fixtures/tf2/constructs/
cond_on_a_fed_switch.py); here, the text and the branches refused, at their line."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402
from conftest import line_of, refusal  # noqa: E402

COND = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
flag = tf.placeholder(tf.bool, [])
w = tf.Variable(tf.ones([3, 1]))
h = tf.matmul(x, w)
out = tf.cond(flag, {true}, lambda: h * 2.0)
loss = tf.reduce_mean(tf.square(out))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    value, _ = sess.run([loss, train], {{x: np.ones([2, 3], np.float32), flag: True}})
'''


def test_tf_cond_converts_as_the_same_op_in_the_step():
    result = convert(COND.format(true="lambda: h"), "cond.py")
    assert result.text is not None, result.notes
    assert "out = tf.cond(flag, lambda: h, lambda: h * 2.0)" in result.text


def test_tf_cond_whose_branch_creates_state_or_gives_a_list_is_refused():
    text = COND.format(true="lambda: tf.layers.dense(h, 1)")
    line, message = refusal(convert(text, "cond_state.py"))
    assert line == line_of(text, "out = tf.cond")
    assert "creates state" in message
    text = COND.format(true="lambda: [h]")
    line, message = refusal(convert(text, "cond_list.py"))
    assert line == line_of(text, "out = tf.cond") and "other than one tensor" in message

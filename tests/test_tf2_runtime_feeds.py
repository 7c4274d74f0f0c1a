"""Feed dicts extended at run time, a placeholder_with_default of a graph value, and graph things a
function made and handed on (codemods/tf2/runtime_feeds.py, variables.py, arguments.share). The
conversion is proven by parity and by the numbers it prints in tests/test_tf2_parity.py
(fixtures/tf2/constructs/state_fed_back_at_run_time.py); here, the text it becomes and the cases
refused, each at its line, with the file left to the compat tier."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402
from conftest import line_of, refusal  # noqa: E402

FIXTURE = (ROOT / "fixtures" / "tf2" / "constructs" / "state_fed_back_at_run_time.py").read_text()




def test_each_fed_set_is_a_step_and_the_call_picks_it_by_the_keys():
    result = convert(FIXTURE, "fed_back.py")
    assert result.text is not None, result.notes
    out = result.text
    assert "feed = {'seq': [[chars[-1]]]}" in out
    assert "feed.update({'in_state_3': state})" in out and "feed['in_state_3'] = state" in out
    # the step not given the state computes its default, the zero state; the other takes it
    unfed = out[out.index("def compute_sample_and_out_state(seq):"):out.index("def compute_sample_and_out_state_2")]
    fed = out[out.index("def compute_sample_and_out_state_2(seq, in_state_3):"):out.index("def training")]
    assert "in_state_3 = cell.zero_state(tf.shape(seq_2)[0], tf.float32)" in unfed
    assert "zero_state" not in fed
    assert "tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None, HIDDEN], tf.float32)])\n    def " \
        "compute_sample_and_out_state_2(seq, in_state_3):" in out
    # the train step is given only the sequence: the default is computed there too
    assert "def train_step(seq):" in out
    # main made the cell, the layers and the optimizer that training and generate read
    assert "    global cell, logits_layer, optimizer, rnn, variables\n" in out
    assert convert(out, "fed_back.py").text == out  # a second pass changes nothing


def test_a_helper_local_never_takes_the_name_of_the_callers_own():
    """`create_model(seq)` rebinds its parameter `seq`; read inline in main(), which has its own `seq`
    (the placeholder given to `training`), the helper's must be another name."""
    out = convert(FIXTURE, "fed_back.py").text
    assert "seq_2 = tf.one_hot(seq_2, VOCAB)" in out
    assert "seq = tf.one_hot" not in out


GENERATE = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
scale = tf.placeholder({scale})
w = tf.Variable(tf.ones([3, 1]))
y = tf.matmul(x, w) * scale
loss = tf.reduce_mean(tf.square(y))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        feed = {{x: np.ones([2, 3], np.float32)}}
        if i:
            feed[scale] = 2.0
        {use}
        value, _ = sess.run([loss, train], feed)
        print(value)
'''


def test_a_key_added_at_run_time_needs_a_default():
    text = GENERATE.format(scale="tf.float32, []", use="pass")
    line, message = refusal(convert(text, "no_default.py"))
    assert line == line_of(text, "feed[scale] = 2.0")
    assert "placeholder `scale` is fed only when the program adds it to the feed dict at run time" in message


def test_a_feed_dict_used_otherwise_is_refused():
    text = GENERATE.format(scale="tf.float32, []", use="print(len(feed))").replace(
        "scale = tf.placeholder(tf.float32, [])", "scale = tf.placeholder_with_default(1.0, [])")
    line, message = refusal(convert(text, "other_use.py"))
    assert "feed dict `feed` is used other than to be extended and fed" in message


def test_a_literal_default_added_at_run_time_converts():
    text = GENERATE.format(scale="tf.float32, []", use="pass").replace(
        "scale = tf.placeholder(tf.float32, [])", "scale = tf.placeholder_with_default(1.0, [])")
    result = convert(text, "literal_default.py")
    assert result.text is not None, result.notes
    assert "(train_step_2 if 'scale' in feed else train_step)(**feed)" in result.text


def test_a_name_the_caller_binds_twice_is_not_shared():
    text = '''import numpy as np
import tensorflow as tf


def train(sess, op, loss, x):
    for _ in range(2):
        value, _ = sess.run([loss, op], {x: np.ones([2, 3], np.float32)})
        print(value)


def main():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(tf.ones([3, 1]))
    w = tf.Variable(tf.zeros([3, 1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
    op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        train(sess, op, loss, x)


main()
'''
    line, message = refusal(convert(text, "twice.py"))
    assert line == line_of(text, "def train(")
    assert "a local of that function it cannot see in Python" in message



def test_a_feed_dict_extended_after_its_run_is_refused():
    """In a loop, a key added after the run reaches the next run: the steps chosen at that run must
    know it, so a dict extended after a run that uses it is refused there."""
    text = GENERATE.format(scale="tf.float32, []", use="pass").replace(
        "scale = tf.placeholder(tf.float32, [])", "scale = tf.placeholder_with_default(1.0, [])").replace(
        "        feed = {x: np.ones([2, 3], np.float32)}\n        if i:\n            feed[scale] = 2.0\n",
        "").replace("    for i in range(3):\n", "    feed = {x: np.ones([2, 3], np.float32)}\n    for i in range(3):\n")
    text = text.replace("        print(value)\n", "        print(value)\n        feed[scale] = 2.0\n")
    line, message = refusal(convert(text, "after.py"))
    assert "is extended after it is fed here" in message
    assert line == line_of(text, "value, _ = sess.run")


_BOUND_FEED = """import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
w = tf.Variable(tf.ones([2, 1]))
loss = tf.reduce_mean(tf.matmul(x, w))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        batch = np.full((2, 2), i, np.float32)
        feed = {{x: {value}}}
{between}        _, l = sess.run([train_op, loss], feed_dict=feed)
{after}"""


def test_a_feed_dict_is_read_again_only_where_the_same_values_reach():
    """A dict bound to a name is fed where it is run: its values may be read again there only when the
    definitions reaching the names they read are the ones that reached the dict (reaching definitions);
    otherwise the dict keeps its place, keyed by the steps' parameters (what TF 1.x fed: the values it
    had when it was made)."""
    same = convert(_BOUND_FEED.format(value="batch", between="", after=""), "f.py").text
    assert "feed =" not in same and "l = train_step(batch).numpy()" in same
    for value, between in (("batch", "        batch = batch * 10\n"), ("batch * 2.0", ""),
                           ("batch", "        if i:\n            batch = batch + 1\n")):
        out = convert(_BOUND_FEED.format(value=value, between=between, after=""), "f.py").text
        assert out is not None and f"feed = {{'x': {value}}}" in out and "l = train_step(**feed).numpy()" in out
        assert convert(out, "f.py").text == out
    # read again by a function run later: which definitions reach it then is not known here
    later = convert(_BOUND_FEED.format(value="batch", between="", after=(
        "    def evaluate():\n        return sess.run(loss, feed_dict=feed)\n    print(evaluate())\n")), "f.py")
    assert "feed = {'x': batch}" in later.text and "return compute_loss(**feed).numpy()" in later.text


def test_a_feed_dict_fed_to_a_step_that_needs_fewer_placeholders():
    """TF 1.x let a run be fed placeholders its fetches do not need: each step takes every fed placeholder."""
    text = ("import numpy as np\nimport tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 2])\n"
            "keep = tf.placeholder(tf.float32, [])\nw = tf.Variable(tf.ones([2, 1]))\n"
            "loss = tf.reduce_mean(tf.matmul(x, w))\nscaled = loss * keep\n"
            "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(scaled)\nwith tf.Session() as sess:\n"
            "    sess.run(tf.global_variables_initializer())\n    batch = np.ones((2, 2), np.float32)\n"
            "    feed = {x: batch * 2.0, keep: 0.5}\n    sess.run(train_op, feed_dict=feed)\n"
            "    print(sess.run(loss, feed_dict=feed))\n")
    out = convert(text, "f.py").text
    assert out is not None
    assert "feed = {'x': batch * 2.0, 'keep': 0.5}" in out
    assert "train_step(**feed)" in out
    assert "def compute_loss(x, keep):" in out and "print(compute_loss(**feed).numpy())" in out


"""rnn cells and rnn functions in the TF2 tier (codemods/tf2/rnn.py): each becomes its exact twin.

The twins themselves are proven equal to TF 1.x in tests/test_twins.py; the programs that use
them (fixtures/tf2/constructs/rnn_*.py) are converted and proven by `tf1clip parity` in
tests/test_tf2_parity.py. Here: what the translator writes (the twin classes once, the rnn layer
built where TF 1.x created its variables, its call in the steps, TF 1.x's variable names), that
converting twice equals converting once, and what is refused with file:line and why.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402

CONSTRUCTS = ROOT / "fixtures" / "tf2" / "constructs"
RNN_FIXTURES = sorted(CONSTRUCTS.glob("rnn_*.py"))
HEAD = "import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 5, 3])\n"
TAIL = ("loss = tf.reduce_mean(outputs)\ntrain_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n"
        "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
        "    sess.run(train_op, feed_dict={x: [[[0.0] * 3] * 5]})\n")


def _convert(text: str) -> str:
    result = convert(text, "t.py")
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    compile(result.text, "t.py", "exec")
    return result.text


@pytest.mark.parametrize("path", RNN_FIXTURES, ids=lambda p: p.stem)
def test_rnn_fixture_converts_and_twice_equals_once(path):
    text = _convert(path.read_text())
    assert convert(text, path.name).text == text
    code = text.split('"""', 2)[2]  # after the docstring
    assert "tf1clip" not in code and "compat.v1" not in code and "contrib" not in code
    for cls in ("class DynamicRNN", "class BasicLSTMCell", "class GRUCell", "LSTMStateTuple = "):
        assert text.count(cls) <= 1, cls


def test_dynamic_rnn_is_state_built_once_and_a_call_in_the_step():
    text = _convert(HEAD + "cell = tf.nn.rnn_cell.BasicLSTMCell(4)\n"
                    "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n" + TAIL)
    module_level = [line for line in text.splitlines() if not line.startswith((" ", "#"))]
    assert "cell = BasicLSTMCell(4)" in module_level
    assert "rnn = DynamicRNN(cell)" in module_level and "rnn.build((None, None, 3))" in module_level
    assert "        outputs, state = rnn(x)" in text.splitlines()  # under the tape, in the step
    assert text.count("LSTMStateTuple = collections.namedtuple") == 1 and "import collections" in text


def test_variable_names_are_tf1s_under_scopes():
    """get_collection(scope=) matches TF 1.x's names: the LSTMCell's variables under cell_1 only."""
    text = _convert(HEAD + "with tf.variable_scope('enc'):\n"
                    "    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.LSTMCell(2)])\n"
                    "    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n"
                    "top = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='enc/rnn/multi_rnn_cell/cell_1')\n"
                    + TAIL.replace(".minimize(loss)", ".minimize(loss, var_list=top)"))
    assert "[enc_rnn.cell.cells[1].kernel, enc_rnn.cell.cells[1].bias]" in text
    assert "enc_rnn = DynamicRNN(cell)" in text


def test_class_name_taken_by_the_script_gets_a_fresh_name():
    text = _convert("import tensorflow as tf\nfrom tensorflow.contrib.rnn import BasicLSTMCell\n\n"
                    "x = tf.placeholder(tf.float32, [None, 5, 3])\ncell = BasicLSTMCell(4)\n"
                    "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n" + TAIL)
    assert "contrib" not in text and "class BasicLSTMCell_2(" in text and "cell = BasicLSTMCell_2(4)" in text


@pytest.mark.parametrize("body, line, reason", [
    ("cell = tf.nn.rnn_cell.BasicLSTMCell(4, state_is_tuple=False)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 4, "concatenated"),
    ("cell = tf.nn.rnn_cell.LSTMCell(4, num_unit_shards=2)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 4, "sharded"),
    ("cell = tf.nn.rnn_cell.GRUCell(4, reuse=True)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 4, "reuse"),
    ("cell = tf.nn.rnn_cell.GRUCell(4)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)\n", 5, "float32"),
    ("cell = tf.nn.rnn_cell.GRUCell(4)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope='again')\n", 6, "ran already"),
    ("c1 = tf.nn.rnn_cell.GRUCell(4)\nc2 = tf.nn.rnn_cell.GRUCell(4)\n"
     "outputs, state = tf.nn.dynamic_rnn(c1, x, dtype=tf.float32)\n"
     "outputs, state = tf.nn.dynamic_rnn(c2, x, dtype=tf.float32)\n", 7, "again"),
    ("cell = tf.nn.rnn_cell.GRUCell(4)\ny = tf.placeholder(tf.float32, [None, 5, None])\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, tf.concat([x, y], axis=2), dtype=tf.float32)\n", 6, "static width"),
    ("cells = []\nmore = cells\nfor i in range(2):\n    more.append(tf.nn.rnn_cell.GRUCell(4))\n"
     "cell = tf.nn.rnn_cell.MultiRNNCell(cells)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 8, "of cells not known where they are made"),
    ("sizes = [4, 6]\nsizes.append(8)\n"
     "cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(n) for n in sizes])\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 6, "not known where they are made"),
    ("cell = tf.nn.rnn_cell.GRUCell(4)\n"
     "outputs, state = cell(x[:, 0], cell.zero_state(2, tf.float32))\n", 5, "graph values"),
    ("cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(4), state_keep_prob=0.5, "
     "variational_recurrent=True, dtype=tf.float32)\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 4, "one dropout mask"),
    ("cell = tf.nn.rnn_cell.BasicRNNCell(4, activation='relu')\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 4, "activation"),
    ("keep = tf.placeholder(tf.float32, [])\n"
     "cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), output_keep_prob=keep)\n"
     "keep = keep * 0.5\n"
     "outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 7, "bound again"),
    ("keep = tf.placeholder(tf.float32, [])\n"
     "cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), output_keep_prob=keep)\n"
     "tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n", 6, "runs once while the graph is built"),
])
def test_refused_with_line_and_reason(body, line, reason):
    result = convert(HEAD + body + TAIL, "t.py")
    assert result.text is None, result.text
    (note,) = [n for n in result.notes if n.kind == "human"]
    assert note.line == line and reason in note.message, note


def test_dropout_wrapper_fed_keep_is_set_in_each_step_and_adds_no_scope():
    """A keep probability fed by a placeholder: the wrapper is made once without it, and each step
    that runs the rnn sets it first; the wrapped cells keep the names TF 1.x gave them unwrapped."""
    text = _convert(HEAD + "keep = tf.placeholder(tf.float32, [])\n"
                    "cells = [tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), output_keep_prob=keep) "
                    "for _ in range(2)]\n"
                    "outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), x, dtype=tf.float32)\n"
                    "top = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "
                    "scope='rnn/multi_rnn_cell/cell_1/basic_rnn_cell')\n"
                    + TAIL.replace(".minimize(loss)", ".minimize(loss, var_list=top)")
                    .replace("feed_dict={x:", "feed_dict={keep: 0.5, x:"))
    lines = text.splitlines()
    assert "cells = [DropoutWrapper(BasicRNNCell(4)) for _ in range(2)]" in lines
    assert "[rnn.cell.cells[1].cell.kernel, rnn.cell.cells[1].cell.bias]" in text
    at = lines.index("        outputs, state = rnn(x)")
    assert lines[at - 2:at] == ["        rnn.cell.cells[0].output_keep_prob = keep",
                                "        rnn.cell.cells[1].output_keep_prob = keep"]
    assert "def train_step(keep, x):" in text and "train_step(0.5, [[[0.0] * 3] * 5])" in text


def test_dropout_wrapper_stack_converts_to_the_twin_loop(tmp_path):
    """The construct fixture with a keep probability of 0.6 converts to the DynamicRNN twin; its
    numbers with dropout on (each time step's mask keyed by its iteration) are proven by
    tests/test_parity_dropout.py on the same conversion."""
    old = (CONSTRUCTS / "rnn_dropout_wrapper_stack.py").read_text().replace("TRAIN_KEEP = 1.0", "TRAIN_KEEP = 0.6")
    new = _convert(old)
    assert "decode_rnn = DynamicRNN(decoder)" in new
    assert "rate=1.0 - keep_prob" in new

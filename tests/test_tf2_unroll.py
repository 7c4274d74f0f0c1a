"""A build-time loop that makes state, over values fixed in the file, is read as its passes.

`for units in hidden: h = tf.layers.dense(h, units)` made one layer per pass while TF 1.x built
the graph. The TF2 tier reads the loop as those passes (codemods/tf2/unroll.py) before anything
else reads the program, so the analyses see each pass: a dense stack converts and trains like the
original; raw variables bound to the same name in each pass are refused with the rebinding, at the
input's lines; a loop whose passes are not fixed in the file keeps its refusal.
"""
import sys
from pathlib import Path

import pytest

from conftest import assert_parity, refusal, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

BASE = '''import numpy as np
import tensorflow as tf

hidden = [8, 6]
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
h = x
{loop}
logits = tf.layers.dense(h, 1)
loss = tf.reduce_mean(tf.square(logits - y))
train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
sess = tf.Session()
sess.run(tf.global_variables_initializer())
rng = np.random.RandomState(0)
xs, ys = rng.randn(16, 4).astype(np.float32), rng.randn(16, 1).astype(np.float32)
for step in range(3):
    _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
    print(step, l)
'''
DENSE = "h = tf.layers.dense(h, units, activation=tf.nn.relu)"
CONVERTED = {
    "a_list_bound_once": f"for units in hidden:\n    {DENSE}",
    "a_list_literal": f"for units in [8, 6]:\n    {DENSE}",
    "range_of_len": "for i in range(len(hidden)):\n    h = tf.layers.dense(h, hidden[i], activation=tf.nn.relu)",
    "enumerate_with_names": "for i, units in enumerate(hidden):\n"
                            "    h = tf.layers.dense(h, units, activation=tf.nn.relu, name='layer%d' % i)",
    "a_scope_per_pass": f"for i, units in enumerate(hidden):\n    with tf.variable_scope(f'layer{{i}}'):\n        {DENSE}",
    "zip": f"for units, act in zip(hidden, (1, 2)):\n    {DENSE}",
    "nested": f"for rep in range(2):\n    for units in hidden:\n        {DENSE}",
    "in_a_function": f"def model(h):\n    for units in hidden:\n        {DENSE}\n    return h\n\n\nh = model(h)",
    "through_functions": "def dense(h, units):\n    return tf.layers.dense(h, units, activation=tf.nn.relu)\n\n\n"
                         "def block(h, units):\n    return dense(h, units)\n\n\n"
                         "for units in hidden:\n    h = block(h, units)",
    "a_count_given_to_a_function": "def model(h, n):\n    for _ in range(n):\n        h = tf.layers.dense(h, 4)\n"
                                   "    return h\n\n\nh = model(h, 2)",
}
KEPT = {  # the passes are not fixed in the file: the loop keeps its refusal
    "the_list_changed_later": f"for units in hidden:\n    {DENSE}\nhidden.append(3)",
    "the_list_bound_again": f"for units in hidden:\n    {DENSE}\nhidden = [1]",
    "a_break": f"for units in hidden:\n    {DENSE}\n    if units < 7:\n        break",
}


@pytest.mark.parametrize("variant", sorted(CONVERTED))
def test_a_loop_making_layers_converts(variant):
    source = BASE.format(loop=CONVERTED[variant])
    result = translate(source, "train.py")
    assert result.text is not None, result.notes
    assert "for units in" not in result.text and "for i in" not in result.text  # read as its passes
    line = next(i for i, text in enumerate(source.splitlines(), 1) if text.startswith(("for ", "def model")))
    notes = [n for n in result.notes if "its 2 passes" in n.message or "its 4 passes" in n.message]
    assert notes and all(n.line >= line for n in notes), result.notes
    assert translate(result.text, "train.py").text == result.text  # twice = once


# parity on CI for the nested loops; the others in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(["a_list_bound_once", "enumerate_with_names", "nested", "a_count_given_to_a_function"],
                                         ("nested",)))
def test_the_passes_train_like_the_loop(variant, tmp_path):
    source = BASE.format(loop=CONVERTED[variant])
    result = translate(source, "train.py")
    assert result.text is not None, result.notes
    assert_parity(tmp_path, source, result.text)


@pytest.mark.parametrize("variant", sorted(KEPT))
def test_passes_not_fixed_in_the_file_keep_the_refusal(variant):
    source = BASE.format(loop=KEPT[variant])
    line, message = refusal(translate(source, "train.py"))
    assert line == 8, (line, message)
    assert "state is created inside a loop or condition" in message, message


HELPER = "def layer(h, units):\n    return tf.layers.dense(h, units, activation=tf.nn.relu)\n\n\n"
HELPER_KEPT = {  # a helper that makes state, in a loop not read pass by pass: the reason names the helper and loop
    "a_count_known_when_it_runs": HELPER + "n = int(np.sqrt(4))\nfor _ in range(n):\n    h = layer(h, 4)",
    "a_break": HELPER + "for units in hidden:\n    h = layer(h, units)\n    if units < 7:\n        break",
    "a_while": HELPER + "k = 0\nwhile k < 2:\n    h = layer(h, 4)\n    k += 1",
    "inside_an_expression": HELPER + "for units in hidden:\n    h = tf.nn.dropout(layer(h, units), 1.0)\n"
                            "hidden.append(3)",
}


@pytest.mark.parametrize("variant", sorted(HELPER_KEPT))
def test_a_helper_making_state_in_a_loop_not_read_pass_by_pass_is_refused_for_that(variant):
    source = BASE.format(loop=HELPER_KEPT[variant])
    line, message = refusal(translate(source, "train.py"))
    loop = next(i for i, text in enumerate(source.splitlines(), 1) if text.lstrip().startswith(("for _", "for units",
                                                                                                "while ")))
    assert line == loop, (line, message)
    assert "helper `layer` creates state and is called in a loop that tf1clip does not read pass by pass" \
        in message, message
    assert "inside an expression" not in message, message


RAW = {  # raw variables, each pass binding the same names: each pass reads its own
    "one_layer_per_pass": "for i in range(2):\n"
                          "    W = tf.Variable(tf.random_normal([4, 4], stddev=0.1), name='w%d' % i)\n"
                          "    b = tf.Variable(tf.zeros([4]))\n"
                          "    h = tf.nn.relu(tf.matmul(h, W) + b)",
    "a_scope_per_pass": "for i in range(2):\n"
                        "    with tf.variable_scope('layer%d' % i):\n"
                        "        W = tf.get_variable('w', [4, 4], initializer=tf.truncated_normal_initializer(stddev=0.1))\n"
                        "        h = tf.nn.relu(tf.matmul(h, W))",
    "widths_zipped": "for n_in, n_out in zip([4, 5], [5, 4]):\n"
                     "    W = tf.Variable(tf.random_normal([n_in, n_out], stddev=0.1))\n"
                     "    h = tf.matmul(h, W)\n"
                     "    if n_out != 4:\n"
                     "        h = tf.nn.relu(h)",
}


@pytest.mark.parametrize("variant", sorted(RAW))
def test_variables_made_in_each_pass_convert(variant):
    source = BASE.format(loop=RAW[variant])
    result = translate(source, "train.py")
    assert result.text is not None, result.notes
    assert "W_1 = " in result.text  # the first pass's W, under a name of its own


# parity on CI for widths zipped with their names; the others in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(RAW), ("widths_zipped",)))
def test_variables_made_in_each_pass_train_like_the_loop(variant, tmp_path):
    source = BASE.format(loop=RAW[variant])
    assert_parity(tmp_path, source, translate(source, "train.py").text)


def test_a_variable_a_function_reads_is_refused_at_the_input_lines():
    """Each pass's graph reads that pass's W; a step traced after the loop would read the last W for
    every layer. W cannot take a name per pass here: a function of the file reads the module's `W`."""
    loop = ("def show():\n"
            "    print(W)\n"
            "\n"
            "\n"
            "for i in range(2):\n"
            "    W = tf.Variable(tf.random_normal([4, 4], stddev=0.1))\n"
            "    h = tf.nn.relu(tf.matmul(h, W))")
    source = BASE.format(loop=loop)
    lines = source.splitlines()
    bind = lines.index("    W = tf.Variable(tf.random_normal([4, 4], stddev=0.1))") + 1
    line, message = refusal(translate(source, "train.py"))
    assert line == bind, (line, message)
    assert f"`W` is bound again at line {bind} after TF 1.x built the graph that reads it" in message, message
    assert "a loop that makes state was read as its passes" in message, message
    assert all(int(n) <= len(lines) for n in __import__("re").findall(r"line (\d+)", message)), message


def test_a_loop_calling_functions_that_only_run_the_session_stays_a_loop(tmp_path):
    """A function of the script that makes no state (it runs the session, prints) does not make the
    loop calling it a build-time loop: the loop stays, and trains like the original."""
    loop = "h = tf.layers.dense(h, 8, activation=tf.nn.relu)"
    text = BASE.format(loop=loop).replace(
        "for step in range(3):\n    _, l = sess.run([train_op, loss], {x: xs, y: ys})\n    print(step, l)\n",
        "def run(step):\n    _, l = sess.run([train_op, loss], {x: xs, y: ys})\n    show(step, l)\n\n\n"
        "def show(step, l):\n    print(step, l)\n\n\nfor step in range(3):\n    run(step)\n")
    result = translate(text, "t.py")
    assert result.text is not None, result.notes
    assert "for step in range(3):\n    run(step)" in result.text
    assert not [n for n in result.notes if "its 3 passes" in n.message]
    assert_parity(tmp_path, text, result.text)

"""A lambda over TensorFlow bound to a name (`lrelu = lambda t: tf.maximum(t, 0.2 * t)`) in the TF2 tier:
Python makes the same function as from the `def` spelling, so the tier reads it as that `def`
(`codemods/tf2/named_lambdas.py`) and every rule of the script's helpers applies to it. Variants: bound
in the module, in a model-building function (`tests/test_tf2_local_functions.py` has the `def`
spelling); reading TensorFlow through an alias; given to `tf.layers.dense` as its activation; making
state (read at each call, as TF 1.x built it); called inside another expression. Each prints what the original printed (`tf1clip run`) and trains like it
(`tf1clip parity`). Refused, with a true reason: the name bound again after the graph is built (the
step, traced later, would call the new function); a lambda whose parameter is named like the
TensorFlow import (not rewritten: it is not TensorFlow it reads); and, as its `def` spelling, one in a
class body called through the class."""
import re
import sys
from pathlib import Path

import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import libcst as cst  # noqa: E402

from codemods.tf2 import named_lambdas  # noqa: E402
from codemods.tf2.names import ImportTable  # noqa: E402
from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = SMALL_TRAINING
LRELU = "lrelu = lambda t, leak=0.2: tf.maximum(t, leak * t)\n"
CONVERTS = {
    "in_the_module": (LRELU, "h = lrelu(tf.matmul(x, W))\nloss = tf.reduce_mean(tf.square(tf.matmul(h, V) - y))\n"),
    "called_inside_an_expression": (LRELU, "loss = tf.reduce_mean(tf.square(tf.matmul(lrelu(tf.matmul(x, W)), V) - y))\n"),
    "in_a_model_function": ("", '''def model(inp):
    act = lambda t: tf.nn.relu(t) - 0.1 * tf.nn.relu(-t)
    return tf.matmul(act(tf.matmul(inp, W)), V)
loss = tf.reduce_mean(tf.square(model(x) - y))
'''),
    "through_an_alias": ("from tensorflow import maximum as mx\nlrelu = lambda t: mx(t, 0.1 * t)\n",
                         "loss = tf.reduce_mean(tf.square(tf.matmul(lrelu(tf.matmul(x, W)), V) - y))\n"),
    "as_an_activation": (LRELU, '''h = tf.layers.dense(tf.matmul(x, W), 5, activation=lrelu,
                    kernel_initializer=tf.constant_initializer(0.1))
loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1, use_bias=False, kernel_initializer=tf.constant_initializer(-0.1))
                             - tf.matmul(tf.matmul(x, W), V) - y))
'''),
    "making_state": ("", '''dense = lambda h, n: tf.layers.dense(h, n, activation=tf.nn.tanh,
                                  kernel_initializer=tf.constant_initializer(0.05))
h = dense(tf.matmul(x, W), 6)
h = dense(h, 1)
loss = tf.reduce_mean(tf.square(h + tf.matmul(tf.matmul(x, W), V) - y))
'''),
}


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_a_named_lambda_over_tensorflow_converts(variant):
    head, model = CONVERTS[variant]
    assert "lambda" not in tier_output(SCRIPT.format(head=head, model=model, after=""))


# run and parity on CI: making state; every variant in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTS), ("making_state",)))
def test_a_named_lambda_over_tensorflow_converts_and_trains_like_tf1(variant, tmp_path):
    head, model = CONVERTS[variant]
    assert "lambda" not in assert_prints_and_trains_alike(tmp_path, SCRIPT.format(head=head, model=model, after=""), 4)


def test_the_lambda_is_said_at_its_own_line():
    result = translate(SCRIPT.format(head=LRELU, model=CONVERTS["in_the_module"][1], after=""), "t.py")
    assert [(n.line, n.message) for n in result.notes if "lambda" in n.message] == [
        (3, "`lrelu = lambda ...` → `def lrelu(...)`, the same function (PEP 8's spelling), read as the script's "
            "other helpers")]


def _refusal(head: str, model: str, after: str = "") -> str:
    result = translate(SCRIPT.format(head=head, model=model, after=after), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    return f"{note.line}: {note.message}"


def test_a_named_lambda_bound_again_while_the_graph_is_built_is_refused_at_that_line():
    # TF 1.x built tf.maximum at line 9 (`h`); the loss and the update are built after line 10, so the step,
    # traced after them, would call the relu
    model = CONVERTS["in_the_module"][1].replace("\nloss", "\nlrelu = lambda t: tf.nn.relu(t)\nloss")
    assert _refusal(LRELU, model) == (
        "10: not converted to the TF2 tier: `lrelu` is bound again at line 10 after TF 1.x built the graph that "
        "reads it (line 9): TF 1.x kept the value it had there, the TF 2 step (traced at line 18) would read the "
        "later binding")


def test_a_named_lambda_bound_again_after_the_whole_graph_converts_traced_before_it():
    # bound again after the update op: the step is traced before that line (steps.Steps._traced)
    out = tier_output(SCRIPT.format(head=LRELU, model=CONVERTS["in_the_module"][1],
                                    after="lrelu = lambda t: tf.nn.relu(t)\n"))
    assert out.index("get_concrete_function()") < out.index("def lrelu(t):\n    return tf.nn.relu(t)")


def test_a_lambda_whose_parameter_is_named_tf_is_not_read_as_tensorflow():
    # not rewritten (its body reads the parameter): refused for what it is, a second binding of `tf`
    refusal = _refusal("act = lambda tf: tf * 2\n", "loss = tf.reduce_mean(tf.square(act(tf.matmul(x, W)) - y))\n")
    assert refusal == ("3: not converted to the TF2 tier: `tf` names an import of TensorFlow and is also bound here: "
                       "which calls are TensorFlow's depends on the place")
    assert named_lambdas.as_defs(cst.parse_module("import tensorflow as tf\nact = lambda tf: tf * 2\n"),
                                 ImportTable.read(cst.parse_module("import tensorflow as tf\n"))[0].qualified)[1] == []


# Functions the tier does not follow yet, in either spelling: one in a class body called through the
# class. The lambda is refused exactly as its `def` is.
NOT_FOLLOWED = {
    "in_a_class_body": ('''class Acts:
    lrelu = lambda t: tf.maximum(t, 0.3 * t)
''', "loss = tf.reduce_mean(tf.square(tf.matmul(Acts.lrelu(tf.matmul(x, W)), V) - y))\n"),
}


@pytest.mark.parametrize("variant", sorted(NOT_FOLLOWED))
def test_a_named_lambda_where_its_def_is_not_followed_is_refused_as_its_def(variant):
    head, model = NOT_FOLLOWED[variant]
    def as_def(text):
        return re.sub(r"^( *)(\w+) = lambda ([^:]*): (.*)$", r"\1def \2(\3):\n\1    return \4", text, flags=re.M)

    assert "lambda" not in as_def(head) + as_def(model)
    lam = _refusal(head, model)
    assert "is given graph values while the graph is built" in lam
    assert _refusal(as_def(head), as_def(model)).split(": ", 1)[1] == lam.split(": ", 1)[1]

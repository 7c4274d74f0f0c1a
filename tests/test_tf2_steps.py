"""Every TF2-tier step's own before/after examples (one generic test), applied twice = once.

The structural step (`train_step`) takes whole scripts: its examples are the golden pairs
fixtures/legacy/X.py → fixtures/tf2_golden/X.py (tests/test_tf2_golden.py). Real libcst.
"""
from __future__ import annotations

import sys
from pathlib import Path

import libcst as cst
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import STEPS, convert, train_step  # noqa: E402
from codemods.tf2.optimizer_table import OPTIMIZERS, render_markdown  # noqa: E402

EXPRESSION_STEPS = [s for s in STEPS if s is not train_step]


def _apply(step, text):
    new, notes = step.transform(cst.parse_module(text))
    return new.code, notes


def _cases():
    for step in EXPRESSION_STEPS:
        for i, (before, after) in enumerate(step.EXAMPLES):
            yield pytest.param(step, before, after, id=f"{step.RULE}-{i}")


@pytest.mark.parametrize("step, before, after", list(_cases()))
def test_example_and_twice_equals_once(step, before, after):
    once, notes = _apply(step, before)
    assert once == after
    if getattr(step, "IDEMPOTENT", True):  # symbols: once only, see its IDEMPOTENT (tier level: tested)
        assert _apply(step, once)[0] == once
    if before != after:
        assert notes and all(n.kind == "change" and n.rule == step.RULE for n in notes)


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.RULE)
def test_every_step_documents_itself(step):
    assert step.__doc__ and step.DESCRIPTION and step.RULE == step.__name__.rsplit(".", 1)[1]
    assert step is train_step or step.EXAMPLES


def test_steps_never_import_tensorflow():
    import subprocess
    code = ("import sys; sys.path.insert(0, %r); import codemods.tf2; "
            "assert 'tensorflow' not in sys.modules, 'imported TensorFlow'" % str(ROOT))
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_refusal_is_a_human_note_with_file_line():
    text = ("import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 4])\n"
            "cell = tf.nn.rnn_cell.GRUCell(8)\n\nwith tf.Session() as sess:\n    pass\n")
    result = convert(text, "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    assert note.line == 4 and note.rule == "train_step" and "GRUCell" in note.message


def test_tf2_code_is_left_alone():
    text = "import tensorflow as tf\n\nv = tf.Variable(1.0)\n"
    assert convert(text).text == text


def test_wgan_weight_clip_is_not_a_gradient_clip():
    """A clip_by_value on weights (WGAN) is never rewritten, and the assign it feeds is refused
    rather than guessed: the file stays for a human."""
    text = ("import tensorflow as tf\n\nw = tf.Variable(tf.zeros([2]))\n"
            "clip_op = w.assign(tf.clip_by_value(w, -0.01, 0.01))\n"
            "with tf.Session() as sess:\n    sess.run(clip_op)\n")
    result = convert(text)
    assert result.text is None or "tf.clip_by_value(w, -0.01, 0.01)" in result.text


def test_optimizer_table_renders_into_the_readme():
    readme = (ROOT / "fixtures" / "tf2_golden" / "README.md").read_text()
    assert render_markdown() in readme


@pytest.mark.parametrize("row", OPTIMIZERS.values(), ids=lambda r: r.tf1.rsplit(".", 1)[1])
def test_every_optimizer_row_has_its_proof(row):
    assert (ROOT / "fixtures" / row.proof).resolve().is_file()
    assert row.keras.startswith("tf.keras.optimizers.")


_SLOT_SCRIPT = """import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
w = tf.get_variable("w", [2, 1])
loss = tf.reduce_mean(tf.matmul(x, w))
opt = tf.train.{opt}
{before}train_op = opt.minimize(loss)
{after}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train_op, feed_dict={{x: [[1.0, 2.0]]}})
    print(sess.run(m))
"""


@pytest.mark.parametrize("opt, before, after, reason", [
    ("AdamOptimizer(0.1)", "", 'm = tf.global_norm([opt.get_slot(v, "v") for v in tf.trainable_variables()])\n',
     "slot table"),
    ("MomentumOptimizer(0.1, 0.9)", "",
     'm = tf.global_norm([opt.get_slot(v, "momentum") for v in tf.trainable_variables()])\n', "slot table"),
    ("AdamOptimizer(0.1)", 'm = tf.global_norm([opt.get_slot(v, "m") for v in tf.trainable_variables()])\n', "",
     "before `opt`'s update op"),
    ("AdamOptimizer(0.1)", "", 'm = tf.reduce_sum(opt.get_slot(w, "m"))\n', "comprehension"),
], ids=["adam-v", "momentum", "before-minimize", "not-in-a-loop"])
def test_get_slot_refused_unless_proven(opt, before, after, reason):
    """get_slot converts only for a slot the table proves, after the update op exists, over
    (part of) the variable list the optimizer updates."""
    result = convert(_SLOT_SCRIPT.format(opt=opt, before=before, after=after), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    assert reason in note.message and note.line > 0


def test_get_slot_of_adam_m_converts():
    text = _SLOT_SCRIPT.format(opt="AdamOptimizer(0.1)", before="",
                               after='m = tf.global_norm([opt.get_slot(v, "m") for v in tf.trainable_variables()])\n')
    result = convert(text, "t.py")
    assert result.text is not None, result.notes
    assert "opt.build(variables)" in result.text and "opt_m[id(v)] for v in variables" in result.text
    code_lines = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert 's.path.endswith("_momentum")' in result.text and not any("get_slot" in line for line in code_lines)


# -- structures: helpers inlined, model classes refolded (whole scripts, through `convert`) ------
def _model_class_cases():
    from codemods.tf2 import model_class
    for i, (before, after) in enumerate(model_class.EXAMPLES):
        yield pytest.param(before, after, id=f"model_class-{i}")


@pytest.mark.parametrize("before, after", list(_model_class_cases()))
def test_model_class_example_and_twice_equals_once(before, after):
    result = convert(before, "t.py")
    assert result.text == after, result.notes
    assert convert(result.text, "t.py").text == result.text
    assert any("class `Model`" in n.message and n.line == 4 for n in result.notes)


_CLASS_SCRIPT = """import tensorflow as tf


class Model(object):
    def __init__(self, lr):
        self.x = tf.placeholder(tf.float32, [None, 2])
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        self.loss = tf.reduce_mean(tf.square(tf.matmul(self.x, w) - 1.0))
        self.train_op = tf.train.GradientDescentOptimizer(lr).minimize(self.loss)
{extra}

model = Model({args})
{other}with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    _, l = sess.run([model.train_op, {fetch}], feed_dict={{model.x: [[1.0, 2.0]]}})
"""


@pytest.mark.parametrize("extra, args, other, fetch, line, reason", [
    ("\n    def predict(self):\n        return self.loss\n", "0.1", "", "model.loss", 4, "one method is `__init__`"),
    ("", "0.1 * 2", "", "model.loss", 12, "not a name or a literal"),
    ("", "0.1", "model2 = Model(0.2)\n", "model.loss", 13, "used other than once"),
    ("", "0.1", "", "model.nothing", 15, "not an attribute of `Model.__init__`"),
    ("", "0.1", "loss = 3\n", "model.loss", 4, "named like another name"),
], ids=["other-method", "expression-arg", "two-instances", "unknown-attribute", "name-clash"])
def test_model_class_refused_unless_proven(extra, args, other, fetch, line, reason):
    """A class is refolded only when flattening it is provably the same graph; the refusal says where and why."""
    result = convert(_CLASS_SCRIPT.format(extra=extra, args=args, other=other, fetch=fetch), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    assert reason in note.message and note.line == line, note


_HELPER_SCRIPT = """import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))


def create_optimizer(loss, lr):
    optimizer = tf.train.GradientDescentOptimizer(lr)
    {body}


{call}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    _, l = sess.run([train_op, loss], feed_dict={{x: [[1.0, 2.0]]}})
"""


@pytest.mark.parametrize("body, call, line, rule, reason", [
    ("return optimizer.minimize(loss)", "train_op = create_optimizer(loss, 0.1)\ntrain_op = create_optimizer(loss, 0.2)",
     8, "inline_helpers", "not called exactly once"),
    ("return optimizer.minimize(loss)", "train_op = create_optimizer(loss, 0.1 * 2)", 13, "inline_helpers",
     "is an expression"),
    ("if lr > 1:\n        return None\n    return optimizer.minimize(loss)", "train_op = create_optimizer(loss, 0.1)",
     11, "inline_helpers", "early return"),
    ("return optimizer.minimize(loss, name=\"x\")", "train_op = create_optimizer(loss, 0.1)", 10, "train_step",
     "gradient arguments"),
], ids=["two-calls", "expression-arg", "early-return", "refused-inside-at-helper-line"])
def test_helper_refused_unless_proven(body, call, line, rule, reason):
    """Inlining only where it is the same graph; a refusal of an inlined line points into the helper."""
    result = convert(_HELPER_SCRIPT.format(body=body, call=call), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    assert reason in note.message and note.line == line and note.rule == rule, note


_LOSSES_SCRIPT = """import tensorflow as tf
import tensorflow.contrib.slim as slim

x = tf.placeholder(tf.float32, [None, 2])
y = tf.placeholder(tf.float32, [None, 1])
pred = slim.fully_connected(x, 1, activation_fn=None, scope="fc")
{loss}
total_loss = tf.losses.get_total_loss()
opt = tf.train.GradientDescentOptimizer(0.1)
train_op = slim.learning.create_train_op(total_loss, opt, clip_gradient_norm=1.0)
grads = tf.gradients(total_loss, tf.trainable_variables())
{after}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    l = sess.run(train_op, feed_dict={{x: [[1.0, 2.0]], y: [[1.0]]}})
    print(l)
"""
_GRAD_TYPES = 'print(",".join(str(int(isinstance(g, tf.IndexedSlices))) for g in grads))'


def test_losses_collection_and_build_time_print_convert():
    """tf.losses.mean_squared_error + get_total_loss → TF1's formula (sum over the element count,
    div_no_nan); a build-time print of gradient types → printed when a function is traced once."""
    text = convert(_LOSSES_SCRIPT.format(loss="tf.losses.mean_squared_error(y, pred)", after=_GRAD_TYPES), "t.py").text
    assert text is not None
    assert ("tf.math.divide_no_nan(tf.reduce_sum(squared_error), tf.reduce_sum(tf.ones_like(squared_error)))"
            in text)
    assert "build_time_print.get_concrete_function()" in text and "= tf.losses" not in text
    assert text.index("build_time_print.get_concrete_function()") < text.index("l = train_step(")


@pytest.mark.parametrize("loss, after, reason", [
    ("tf.losses.mean_squared_error(y, pred, weights=2.0)", "", "with weights"),
    ("tf.losses.mean_squared_error(y, pred)\ntf.losses.mean_squared_error(y, pred)", "", "several losses"),
    ("tf.losses.mean_squared_error(y, x)", "", "static shapes"),
    ("tf.losses.mean_squared_error(y, pred)\nextra = tf.losses.absolute_difference(y, pred)", "", "loss collections"),
    ("tf.losses.mean_squared_error(y, pred)", "print(grads)", "no exact place"),
    ("tf.losses.mean_squared_error(y, pred)", _GRAD_TYPES + '\nprint("built")', "build-time print"),
], ids=["weights", "two-losses", "shapes", "other-loss", "print-tensors", "print-after"])
def test_losses_and_build_time_print_refused_unless_proven(loss, after, reason):
    result = convert(_LOSSES_SCRIPT.format(loss=loss, after=after), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    assert reason in note.message and note.line > 0


def test_names_are_resolved_once_per_module_object():
    """Steps that hand on an unchanged module share one scope analysis; a changed module
    (a new object) gets its own, and its lookups see the new code."""
    from codemods.tf2._base import Names

    first = cst.parse_module("import tensorflow as tf\nopt = tf.train.AdamOptimizer(0.1)\n")
    names = Names.of_module(first)
    assert Names.of_module(first) is names
    call = first.body[1].body[0].value
    assert names.of(call) == "tensorflow.train.AdamOptimizer"

    second = cst.parse_module("import tensorflow as tf1\nopt = tf1.train.GradientDescentOptimizer(0.1)\n")
    other = Names.of_module(second)
    assert other is not names and other.module is second
    assert other.of(second.body[1].body[0].value) == "tensorflow.train.GradientDescentOptimizer"
    assert Names.of_module(first) is not other  # back to the first module: resolved afresh

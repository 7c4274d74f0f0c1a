"""The TF2 tier's rules, one by one, on small scripts (real libcst, no TensorFlow in the codemod).

Whole programs are the golden pairs (tests/test_tf2_golden.py) and their parity runs
(tests/test_tf2_parity.py); here each rule's decision is checked: what converts, what is
refused, with which line and why. Converting a converted file again changes nothing.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import assert_parity

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402
from codemods.tf2.optimizer_table import OPTIMIZERS, render_markdown  # noqa: E402


def _refusal(text: str):
    result = convert(text, "t.py")
    assert result.text is None, result.text
    (note,) = [n for n in result.notes if n.kind == "human"]
    return note


def _converted(text: str) -> str:
    result = convert(text, "t.py")
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    compile(result.text, "t.py", "exec")
    assert convert(result.text, "t.py").text == result.text  # applied twice = once
    assert "compat.v1" not in result.text and "tf1clip" not in result.text
    return result.text


def test_steps_never_import_tensorflow():
    code = ("import sys; sys.path.insert(0, %r); import codemods.tf2, codemods.tf2.distribute; "
            "assert 'tensorflow' not in sys.modules, 'imported TensorFlow'" % str(ROOT))
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_refusal_is_a_human_note_with_file_line():
    text = ("import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 4])\n"
            "cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.GRUCell(8))\n\nwith tf.Session() as sess:\n    pass\n")
    note = _refusal(text)
    assert note.line == 4 and note.rule == "tf2" and "ResidualWrapper" in note.message


def test_tf2_code_is_left_alone():
    text = "import tensorflow as tf\n\nv = tf.Variable(1.0)\n"
    assert convert(text).text == text


def test_wgan_weight_clip_is_not_a_gradient_clip():
    """A clip_by_value on weights (WGAN) stays a clip of the weights, assigned where it is run."""
    text = ("import tensorflow as tf\n\nw = tf.Variable(tf.zeros([2]))\n"
            "clip_op = w.assign(tf.clip_by_value(w, -0.01, 0.01))\n"
            "with tf.Session() as sess:\n    sess.run(clip_op)\n")
    out = _converted(text)
    assert "w.assign(tf.clip_by_value(w, -0.01, 0.01))" in out and "apply_gradients" not in out


def test_optimizer_table_renders_into_the_readme():
    readme = (ROOT / "fixtures" / "tf2_golden" / "README.md").read_text()
    assert render_markdown() in readme


@pytest.mark.parametrize("row", OPTIMIZERS.values(), ids=lambda r: r.tf1.rsplit(".", 1)[1])
def test_every_optimizer_row_has_its_proof(row):
    assert (ROOT / "fixtures" / row.proof).resolve().is_file()
    assert row.keras.startswith("tf.keras.optimizers.") or row.twin


# -- meaning, not spelling ---------------------------------------------------------------------------
_DROPOUT = """import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
keep_prob = tf.placeholder(tf.float32)
w = tf.Variable(tf.zeros([4, 2]))
h = tf.nn.dropout(tf.matmul(x, w), keep_prob)
loss = tf.reduce_mean(h, reduction_indices=[1])
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train_op, feed_dict={x: [[1.0, 2.0, 3.0, 4.0]], keep_prob: 0.8})
"""


def test_keep_prob_becomes_a_rate_and_a_fed_placeholder_an_argument():
    """tf.nn.dropout(x, keep_prob) → rate=1 - keep_prob (TF 2's second argument is the drop rate);
    the fed keep_prob is an argument of the step; reduction_indices → axis."""
    out = _converted(_DROPOUT)
    assert "tf.nn.dropout(tf.matmul(x, w), rate=1 - keep_prob)" in out
    assert "def train_step(x, keep_prob):" in out and "train_step([[1.0, 2.0, 3.0, 4.0]], 0.8)" in out
    assert "reduction_indices" not in out and "axis=[1]" in out


def test_layers_dropout_with_training_off_is_the_identity():
    """tf.layers.dropout(x, 0.7, is_training): the third positional argument is noise_shape, so
    TF 1.x trained with training=False: no dropout at all (its input is used)."""
    text = _DROPOUT.replace("h = tf.nn.dropout(tf.matmul(x, w), keep_prob)",
                            "h = tf.layers.dropout(tf.matmul(x, w), 0.7, keep_prob)")
    assert "dropout" not in _converted(text).split("def train_step")[1]


def test_variable_inside_an_expression_is_created_once():
    text = _DROPOUT.replace("w = tf.Variable(tf.zeros([4, 2]))\n", "").replace(
        "tf.matmul(x, w)", "tf.matmul(x, tf.Variable(tf.zeros([4, 2])))")
    out = _converted(text)
    head, step = out.split("@tf.function")[0], out.split("@tf.function")[1]
    assert "variable = tf.Variable(tf.zeros([4, 2]))" in head and "tf.Variable" not in step


def test_initializer_run_again_is_refused():
    text = _DROPOUT + "    sess.run(tf.global_variables_initializer())\n"
    note = _refusal(text)
    assert note.line == 13 and "re-initializing" in note.message


def test_variable_fetched_with_an_update_comes_back_after_the_update():
    """TF 1.x's variables here are ref variables: the fetched value shares the buffer the update
    writes in place, so sess.run gave it after the update; the step returns it after its update
    (the whole fetch structure, None for the op, since the result is not unpacked)."""
    out = _converted(_DROPOUT.replace("sess.run(train_op,", "sess.run([train_op, w],"))
    step = out.split("def train_step")[1].split("\n\n")[0]
    assert step.index("apply_gradients") < step.index("return [None, w]"), step
    assert "tf.nest.map_structure(lambda t: None if t is None else t.numpy(), train_step(" in out


def test_pairs_of_gradients_and_variables_fetched_with_the_update_are_refused():
    text = _DROPOUT.replace("train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)",
                            "opt = tf.train.GradientDescentOptimizer(0.1)\ngvs = opt.compute_gradients(loss)\n"
                            "train_op = opt.apply_gradients(gvs)").replace(
        "sess.run(train_op,", "_, pairs = sess.run([train_op, gvs],")
    assert "does not order" in _refusal(text).message


def test_fetch_dict_with_a_computed_key_is_refused():
    text = _DROPOUT.replace("sess.run(train_op,", "sess.run({str(1): train_op, 'loss': loss},")
    assert "key `str(1)` is not a literal" in _refusal(text).message


_TWO_LISTS = """import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
w1 = tf.Variable(tf.zeros([2, 2]))
w2 = tf.Variable(tf.zeros([2, 1]))
loss = tf.reduce_mean(tf.matmul(tf.matmul(x, w1), w2))
opt = tf.train.AdamOptimizer(0.1)
a = opt.minimize(loss, var_list=[w1])
b = opt.minimize(-loss, var_list=LIST)
with tf.Session() as sess:
    sess.run(a, feed_dict={x: [[1.0, 2.0]]})
    sess.run(b, feed_dict={x: [[1.0, 2.0]]})
"""


def test_one_optimizer_two_variable_lists_is_built_for_both():
    """TF 1.x's optimizer served both lists with one state (Adam's beta powers): one Keras optimizer built
    for both lists before its first step (fixtures/tf2_safety/printed/ proves the numbers)."""
    out = _converted(_TWO_LISTS.replace("LIST", "[w2]"))
    assert out.count("opt.build([*variables, *variables_2])") == 1
    assert out.index("opt.build(") < out.index("def train_step")


@pytest.mark.parametrize("lists, line", [("[w1, w2]", 9)])
def test_one_optimizer_over_lists_sharing_a_variable_is_refused(lists, line):
    note = _refusal(_TWO_LISTS.replace("LIST", lists))
    assert note.line == line and "second update over another variable list" in note.message


def test_a_step_reads_the_binding_tf1_built_with_or_is_refused():
    """Reaching definitions: a name the step reads must have, where TF 1.x built the graph, the definition
    that reaches the place where the step is traced; the same rebinding before the graph converts, and
    after the whole graph too (the steps traced before it); between the graph's parts it is refused."""
    text = _TWO_LISTS.replace("LIST", "[w2]").replace("opt = tf.train.AdamOptimizer(0.1)\n",
                                                      "lr = 0.1\nopt = tf.train.AdamOptimizer(lr)\n")
    before = text.replace("lr = 0.1\n", "lr = 0.5\nlr = 0.1\n")
    assert "AdamOptimizer(lr)" in _converted(before)
    # bound again after the whole graph: the steps are traced before that line (steps.Steps._traced)
    after = _converted(text.replace("with tf.Session()", "w2 = None\nwith tf.Session()"))
    assert after.rindex("get_concrete_function()") < after.index("w2 = None")
    between = text.replace("b = opt.minimize", "w1_value = w2\nw2 = None\nb = opt.minimize").replace(
        "var_list=[w2]", "var_list=[w1_value]")
    note = _refusal(between)
    assert note.line == 11 and "`w2` is bound again at line 11" in note.message


# -- get_slot ------------------------------------------------------------------------------------------
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
    note = _refusal(_SLOT_SCRIPT.format(opt=opt, before=before, after=after))
    assert reason in note.message and note.line > 0


def test_get_slot_of_adam_m_converts():
    text = _SLOT_SCRIPT.format(opt="AdamOptimizer(0.1)", before="",
                               after='m = tf.global_norm([opt.get_slot(v, "m") for v in tf.trainable_variables()])\n')
    out = _converted(text)
    assert "opt.build(variables)" in out and "opt_m[id(v)] for v in variables" in out
    code_lines = [line for line in out.splitlines() if not line.lstrip().startswith("#")]
    assert 's.path.endswith("_m")' in out and not any("get_slot" in line for line in code_lines)


# -- structure: helpers and classes ----------------------------------------------------------------------
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


def test_helper_creating_state_is_read_at_each_call():
    """Each call creates its own optimizer, as TF 1.x did; the helper's def is gone (all calls read)."""
    out = _converted(_HELPER_SCRIPT.format(
        body="return optimizer.minimize(loss)",
        call="other_op = create_optimizer(loss, 0.5 * 2)\ntrain_op = create_optimizer(loss, 0.1)"))
    assert "def create_optimizer" not in out
    assert "optimizer = tf.keras.optimizers.SGD(lr)" in out and "optimizer_2 = tf.keras.optimizers.SGD(0.1)" in out
    assert "lr = 0.5 * 2" in out  # an expression argument is evaluated once, as Python did


@pytest.mark.parametrize("body, call, line, reason", [
    ("if lr > 1:\n        return None\n    return optimizer.minimize(loss)", "train_op = create_optimizer(loss, 0.1)",
     8, "returns before its end"),
    ("return optimizer.minimize(loss, name=\"x\")", "train_op = create_optimizer(loss, 0.1)", 10,
     "gradient arguments"),
    ("return optimizer.minimize(loss)", "train_op = [create_optimizer(loss, 0.1) for _ in range(1)][0]", 13,
     "inside an expression"),
], ids=["early-return", "refused-inside-at-helper-line", "call-in-expression"])
def test_helper_refused_unless_proven(body, call, line, reason):
    """A refusal of a line read inside a helper points into the helper."""
    note = _refusal(_HELPER_SCRIPT.format(body=body, call=call))
    assert reason in note.message and note.line == line, note


def test_helper_called_in_a_list_literal_is_read_first_and_trains_alike(tmp_path):
    """`[create_optimizer(...)][0]`: Python ran the call first; read so (codemods/tf2/hoist.py)."""
    text = _HELPER_SCRIPT.format(body="return optimizer.minimize(loss)",
                                 call="train_op = [create_optimizer(loss, 0.1)][0]") + "    print(l)\n"
    out = _converted(text)
    assert "train_op = [create_optimizer_out][0]" not in out  # the helper is read inline, its op a step
    assert_parity(tmp_path, text, out)


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


def test_instances_each_make_their_own_state():
    """Two instances of a class that makes tf.Variables and trains its own: two sets of state, one
    __init__ text. (Without var_list, TF 1.x's second update op trained both instances' variables.)"""
    text = _CLASS_SCRIPT.replace('w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())',
                                 "w = tf.Variable(tf.zeros([2, 1]))").replace(
        ".minimize(self.loss)", ".minimize(self.loss, var_list=[w])")
    out = _converted(text.format(extra="", args="0.1", other="other = Model(0.2)\n", fetch="model.loss"))
    assert out.count("self.w = tf.Variable(tf.zeros([2, 1]))") == 1 and "model.w" in out and "other.w" not in out


def test_instances_training_each_others_variables_are_refused():
    text = _CLASS_SCRIPT.replace('w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())',
                                 "w = tf.Variable(tf.zeros([2, 1]))")
    note = _refusal(text.format(extra="", args="0.1", other="other = Model(0.2)\n", fetch="model.loss"))
    assert "reads differently at two calls" in note.message and note.line == 13


def test_instances_sharing_variables_are_refused():
    """Instances reusing one variable scope share variables in TF 1.x: the second __init__ makes
    nothing the first did, so one TF 2 definition cannot say both."""
    text = _CLASS_SCRIPT.replace('        w = tf.get_variable(', '        with tf.variable_scope("m", reuse=tf.AUTO_REUSE):\n'
                                 '            w = tf.get_variable(')
    note = _refusal(text.format(extra="", args="0.1", other="other = Model(0.2)\n", fetch="model.loss"))
    assert "reads differently at two calls" in note.message and note.line == 14


def test_model_class_keeps_state_on_the_instance():
    out = _converted(_CLASS_SCRIPT.format(extra="", args="0.1", other="", fetch="model.loss"))
    init = out.split("class Model")[1].split("\n\n\n")[0]
    assert 'self.w = tf.Variable(tf.zeros_initializer()([2, 1], dtype=tf.float32), name="w")' in init
    assert "self.train_op_optimizer = tf.keras.optimizers.SGD(lr)" in init and "placeholder" not in init
    assert "def train_step(x):" in out and "model.train_op_optimizer.apply_gradients" in out
    assert "l = train_step([[1.0, 2.0]]).numpy()" in out


@pytest.mark.parametrize("extra, args, other, fetch, line, reason", [
    ("\n    def predict(self):\n        return tf.nn.relu(self.loss)\n", "0.1", "", "model.predict()", 18,
     "returns a graph value"),
    ("", "0.1", "", "model.nothing", 15, "does not know it as a graph value"),
    ("", "0.1", "model2 = Model(0.2)\n", "model.loss", 7, "already exists"),
], ids=["value-method", "unknown-attribute", "two-instances-one-name"])
def test_model_class_refused_unless_proven(extra, args, other, fetch, line, reason):
    note = _refusal(_CLASS_SCRIPT.format(extra=extra, args=args, other=other, fetch=fetch))
    assert reason in note.message and note.line == line, note


# -- losses and build-time prints --------------------------------------------------------------------------
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
    div_no_nan); a build-time print of gradient types → printed where TF 1.x printed it, when a
    function computing those gradients is traced."""
    out = _converted(_LOSSES_SCRIPT.format(loss="tf.losses.mean_squared_error(y, pred)", after=_GRAD_TYPES))
    assert ("tf.math.divide_no_nan(tf.reduce_sum(squared_error), tf.reduce_sum(tf.ones_like(squared_error)))"
            in out)
    assert "build_time_print.get_concrete_function()" in out and "= tf.losses" not in out
    assert out.index("build_time_print.get_concrete_function()") < out.index("l = train_step(")


def test_several_losses_sum_as_get_total_loss_did():
    out = _converted(_LOSSES_SCRIPT.format(
        loss="tf.losses.mean_squared_error(y, pred)\ntf.losses.absolute_difference(y, pred)", after=""))
    assert "tf.add_n([mean_squared_error, absolute_difference])" in out


@pytest.mark.parametrize("loss, after, reason", [
    ("tf.losses.mean_squared_error(y, pred, weights=tf.ones([1, 1]))", "", "weights=tf.ones([1, 1])"),
    ("tf.losses.mean_squared_error(y, x)", "", "static shapes"),
    ("tf.losses.mean_squared_error(y, pred)", "print(grads)", "while the graph is built"),
], ids=["weights", "shapes", "print-tensors"])
def test_losses_and_build_time_print_refused_unless_proven(loss, after, reason):
    note = _refusal(_LOSSES_SCRIPT.format(loss=loss, after=after))
    assert reason in note.message and note.line > 0


@pytest.mark.parametrize("labels, logits, expected", [
    ("tf.placeholder(tf.int32, [None])", "tf.matmul(x, w)", "labels=y, logits=logits)"),
    ("tf.placeholder(tf.int32, [None, 1])", "tf.matmul(x, w)", "labels=tf.squeeze(y, [-1]), logits=logits)"),
    ("tf.placeholder(tf.int32)", "tf.matmul(x, w)", "remove_squeezable_dimensions(y, logits, 1)"),
    ("tf.placeholder(tf.int32, [None])", "tf.reshape(tf.matmul(x, w), shape)",
     "remove_squeezable_dimensions(y, logits, 1)"),
], ids=["ranks-1-2", "labels-column", "labels-rank-unknown", "logits-rank-unknown"])
def test_sparse_softmax_loss_squeezes_as_tf1_did(labels, logits, expected):
    """TF 1.x's remove_squeezable_dimensions: decided from known ranks, else by its twin in the step."""
    text = _converted(f"import tensorflow as tf\n\ny = {labels}\nx = tf.placeholder(tf.float32, [None, 3])\n"
                      f"shape = [-1, 4]\nw = tf.Variable(tf.zeros([3, 4]))\nlogits = {logits}\n"
                      "loss = tf.losses.sparse_softmax_cross_entropy(y, logits)\n"
                      "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\nwith tf.Session() as sess:\n"
                      "    sess.run(tf.global_variables_initializer())\n"
                      "    sess.run(train_op, feed_dict={x: [[1.0] * 3], y: [1]})\n")
    assert expected in text
    assert ("def remove_squeezable_dimensions(" in text) == ("remove_squeezable_dimensions(y" in expected)


def test_losses_convert_where_shapes_are_unknown_and_refuse_where_tf1_raised():
    """TF 1.x checked the shapes compatible and broadcast at run time as TF 2 does: shapes unknown here
    convert; ranks known to differ were TF 1.x's ValueError; a loss inside an expression still joins LOSSES."""
    head = ("import tensorflow as tf\n\ny = tf.placeholder(tf.float32, {y})\nx = tf.placeholder(tf.float32, [None, 3])\n"
            "shape = [-1, 2]\nw = tf.Variable(tf.zeros([3, 2]))\npred = tf.reshape(tf.matmul(x, w), shape)\n")
    tail = ("train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\nwith tf.Session() as sess:\n"
            "    sess.run(tf.global_variables_initializer())\n    sess.run(train_op, feed_dict={x: [[1.0] * 3], y: [[1.0, 2.0]]})\n")
    text = _converted(head.format(y="[None, 2]") + "loss = tf.losses.mean_squared_error(y, pred) + tf.nn.l2_loss(w)\n"
                      + tail)
    assert "mean_squared_error = tf.math.divide_no_nan(" in text and "loss = mean_squared_error + tf.nn.l2_loss(w)" in text
    note = _refusal(head.format(y="[None]") + "pred2 = tf.matmul(x, w)\nloss = tf.losses.mean_squared_error(y, pred2)\n"
                    + tail)
    assert note.line == 9 and "incompatible (TF 1.x raised ValueError" in note.message


def test_losses_reduction_sum_is_the_sum_and_none_is_refused():
    head = ("import tensorflow as tf\n\ny = tf.placeholder(tf.int32, [None])\nx = tf.placeholder(tf.float32, [None, 3])\n"
            "w = tf.Variable(tf.zeros([3, 4]))\nlogits = tf.matmul(x, w)\n")
    tail = ("train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\nwith tf.Session() as sess:\n"
            "    sess.run(tf.global_variables_initializer())\n    sess.run(train_op, feed_dict={x: [[1.0] * 3], y: [1]})\n")
    text = _converted(head + "loss = tf.losses.sparse_softmax_cross_entropy(y, logits, "
                      "reduction=tf.losses.Reduction.SUM)\n" + tail)
    assert "loss = tf.reduce_sum(losses)" in text and "divide_no_nan" not in text
    note = _refusal(head + "loss = tf.losses.sparse_softmax_cross_entropy(y, logits, "
                    "reduction=tf.losses.Reduction.NONE)\n" + tail)
    assert note.line == 7 and "Reduction.NONE" in note.message


def test_session_config_set_through_attributes_goes_with_it():
    text = _converted("import tensorflow as tf\n\nv = tf.Variable(1.0)\nconfig = tf.ConfigProto()\n"
                      "config.gpu_options.allow_growth = True\nwith tf.Session(config=config) as sess:\n"
                      "    sess.run(tf.global_variables_initializer())\n    print(sess.run(v))\n")
    assert "config" not in text and "allow_growth" not in text


_DATASET_FUNCTION = '''import numpy as np
import tensorflow as tf


def train(dataset):
    iterator = dataset.make_initializable_iterator()
    x = iterator.get_next()
    w = tf.Variable(tf.zeros([3, 1]))
    loss = tf.reduce_mean(tf.matmul(x, w))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(iterator.initializer)
        sess.run(train_op)


train(tf.data.Dataset.from_tensor_slices(np.ones([4, 3], np.float32)).batch(2))
'''


def test_a_dataset_given_to_the_session_function_is_the_dataset_there():
    text = _converted(_DATASET_FUNCTION)
    assert "def train(dataset):" in text and "iterator = iter(dataset)" in text
    assert "@tf.function(input_signature=[dataset.element_spec])" in text


def test_the_session_function_called_again_with_other_kinds_of_objects_is_refused():
    note = _refusal(_DATASET_FUNCTION + "train(None)\n")
    assert note.line == 18 and "called again with other kinds of objects" in note.message


_SCHEDULE_FETCHED = """import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
data_x = rng.randn(16, 4).astype(np.float32)
data_y = rng.randn(16, 1).astype(np.float32)
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
loss = tf.reduce_mean(tf.square(tf.layers.dense(x, 1) - y))
global_step = tf.Variable(0, trainable=False, name="global_step")
learning_rate = tf.train.exponential_decay(0.05, global_step, decay_steps=4, decay_rate=0.5, staircase=True)
train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(10):
        _, l, lr = sess.run([train_op, loss, learning_rate], feed_dict={x: data_x, y: data_y})
        print("step=%d lr=%.5f" % (step, lr))
"""


def test_a_schedule_fetched_with_its_update_is_the_rate_the_update_used(tmp_path):
    """TF 1.x computes the decayed rate once, before the update that uses it and the global step's
    increment; the step returns that value, not the rate of the next step."""
    from conftest import assert_parity, run_python, run_tf1clip

    text = _converted(_SCHEDULE_FETCHED)
    step = text[text.index("def train_step"):]
    assert step.index("learning_rate(global_step)") < step.index("apply_gradients") < step.index("assign_add(1)")
    (tmp_path / "old.py").write_text(_SCHEDULE_FETCHED)
    (tmp_path / "new.py").write_text(text)
    old = run_tf1clip("run", "old.py", cwd=tmp_path)
    new = run_python("new.py", cwd=tmp_path)
    assert old.returncode == 0 and new.returncode == 0, old.stderr[-2000:] + new.stderr[-2000:]
    rates = [line.split("lr=")[1] for line in old.stdout.splitlines() if "lr=" in line]
    assert rates == ["0.05000"] * 4 + ["0.02500"] * 4 + ["0.01250"] * 2  # 0.05 * 0.5 ** (step // 4)
    assert [line for line in new.stdout.splitlines() if "lr=" in line] == \
        [line for line in old.stdout.splitlines() if "lr=" in line]


def test_get_shape_of_a_variable_item_reads_its_shape():
    """A Keras 3 variable has no get_shape(): an item's is read as `.shape`, the same TensorShape for it and a
    tf.Variable, where the shape is used as TF 1.x and TF 2 answer alike (len, ndims, as_list, num_elements)."""
    text = _converted(_ITEMS_HEAD + "w = tf.Variable(tf.zeros([4, 1]))\n"
                      "big = [v for v in tf.trainable_variables() if v.get_shape().ndims > 1]\n"
                      "n = sum(v.get_shape().num_elements() for v in tf.trainable_variables())\n"
                      "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss + tf.add_n("
                      "[tf.nn.l2_loss(v) for v in tf.trainable_variables() if len(v.get_shape()) > 1]), var_list=big)\n"
                      + _ITEMS_TAIL)
    assert "if v.shape.ndims > 1]" in text and "sum(v.shape.num_elements() for v in" in text
    assert "if len(v.shape) > 1]" in text and "get_shape" not in text


_ITEMS_HEAD = ("import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 4])\n"
               "pred = tf.layers.dense(x, 1, name='out')\nloss = tf.reduce_mean(tf.square(pred))\n")
_ITEMS_TAIL = ("with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
               "    sess.run(train_op, feed_dict={x: [[1.0] * 4]})\n")


@pytest.mark.parametrize("body, fragment, reason", [
    ("picked = [v for v in tf.trainable_variables() if v.op.name.startswith('out')]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=picked)\n",
     "v.op.name", "other names"),
    ("big = [v for v in tf.trainable_variables() if v.get_shape()[0] > 1]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=big)\n",
     "v.get_shape()[0]", "TensorShape, which held Dimension objects"),
    ("class Box:\n    def get_shape(self):\n        return [2]\n\n\nboxes = [Box()]\n"
     "n = [len(b.get_shape()) for b in boxes]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n",
     "b.get_shape()", "not known to be a TensorFlow object"),
    ("opt = tf.train.GradientDescentOptimizer(0.1)\ngvs = opt.compute_gradients(loss)\n"
     "kernel = tf.trainable_variables()[0]\n"
     "train_op = opt.apply_gradients([(g * 2.0, v) if v == kernel else (g, v) for g, v in gvs])\n",
     "v == kernel", "by identity"),
    ("same = pred == x\ntrain_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n",
     "pred == x", "by identity"),
    ("ordered = sorted(tf.trainable_variables(), key=lambda v: v.name)\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=ordered[:1])\n",
     "key=lambda v: v.name", "other names"),
    ("def is_out(var):\n    return var.name.startswith('out')\n\n\n"
     "picked = [v for v in tf.trainable_variables() if is_out(v)]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=picked)\n",
     "if is_out(v)", "other names"),
    ("tvars = tf.trainable_variables()\n"
     "picked = [tvars[i] for i in range(len(tvars)) if tvars[i].name.startswith('out')]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=picked)\n",
     "tvars[i].name", "other names"),
    ("opt = tf.train.GradientDescentOptimizer(0.1)\ngvs = opt.compute_gradients(loss)\n"
     "tvars = tf.trainable_variables()\nscales = [1.0, 2.0]\n"
     "train_op = opt.apply_gradients([(g * scales[tvars.index(v)], v) for g, v in gvs])\n",
     "tvars.index(v)", "by identity"),
    ("picked = [v for v in tf.trainable_variables() if getattr(v, 'name').startswith('out')]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=picked)\n",
     "getattr(v, 'name')", "is given a variable or tensor of a loop"),
    ("picked = [v for v in tf.trainable_variables() if 'out' in str(v)]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=picked)\n",
     "str(v)", "is given a variable or tensor of a loop"),
    ("opt = tf.train.GradientDescentOptimizer(0.1)\ngvs = opt.compute_gradients(loss)\n"
     "grad_of = {v: g for g, v in gvs}\n"
     "train_op = opt.apply_gradients([(grad_of[v], v) for v in tf.trainable_variables()])\n",
     "grad_of = {v: g", "used as a key"),
    ("kept = set(tf.trainable_variables())\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=list(kept))\n",
     "set(tf.trainable_variables())", "is given variables"),
    ("opt = tf.train.GradientDescentOptimizer(0.1)\n"
     "ordered = sorted(opt.compute_gradients(loss), key=lambda gv: gv[1].name)\n"
     "train_op = opt.apply_gradients(ordered)\n",
     "sorted(opt.compute_gradients(loss)", "is given variables"),
    ("for v in tf.trainable_variables():\n    print(v.shape)\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n",
     "print(v.shape)", "TensorShape, which held Dimension objects"),
    ("def scope_of(var):\n    return var.name.split('/')[0]\n\n\ndef is_out(var):\n    return scope_of(var) == 'out'\n"
     "\n\npicked = [v for v in tf.trainable_variables() if is_out(v)]\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=picked)\n",
     "if is_out(v)", "is given a variable or tensor of a loop"),
    ("kernels = [v for v in tf.trainable_variables() if len(v.shape) == 2]\nfirst = kernels[0]\n"
     "rate = 0.2 if 'out' in first.name else 0.1\n"
     "train_op = tf.train.GradientDescentOptimizer(rate).minimize(loss)\n",
     "first.name", "other names"),
    ("opt = tf.train.GradientDescentOptimizer(0.1)\ngrads, tvs = zip(*opt.compute_gradients(loss))\n"
     "print(tvs[-1].name)\ntrain_op = opt.apply_gradients(zip(grads, tvs))\n",
     "tvs[-1].name", "other names"),
    ("decayed = [v for v in tf.trainable_variables() if isinstance(v, tf.Variable)]\n"
     "loss2 = loss + 0.01 * tf.add_n([tf.nn.l2_loss(v) for v in decayed])\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss2)\n",
     "isinstance(v, tf.Variable)", "not `tf.Variable`"),
    ("decayed = [v for v in tf.trainable_variables() if v.dtype == tf.float32]\n"
     "loss2 = loss + 0.01 * tf.add_n([tf.nn.l2_loss(v) for v in decayed])\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss2)\n",
     "v.dtype == tf.float32", "other names"),
    ("NORMS = []\n\n\ndef clip(g):\n    NORMS.append(tf.norm(g))\n    return tf.clip_by_norm(g, 1.0)\n\n\n"
     "opt = tf.train.GradientDescentOptimizer(0.1)\n"
     "train_op = opt.apply_gradients([(clip(g), v) for g, v in opt.compute_gradients(loss)])\n",
     "(clip(g), v)", "a global of the script"),
    ("l2 = 0.0\nfor v in tf.trainable_variables():\n    print('decaying one more')\n    l2 += tf.nn.l2_loss(v)\n"
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss + 0.01 * l2)\n",
     "for v in tf.trainable_variables():", "prints while the graph is built"),
])
def test_an_item_read_as_tf1_gave_it_is_refused_at_its_line(body, fragment, reason):
    """Variables and tensors picked by TF 1.x names, graph ops or identity: TF 2 answers otherwise."""
    text = _ITEMS_HEAD + body + _ITEMS_TAIL
    note = _refusal(text)
    assert note.line == next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line), note
    assert reason in note.message, note


def test_items_tested_for_none_and_lists_filled_in_a_loop_still_convert():
    text = _converted(_ITEMS_HEAD + (
        "opt = tf.train.GradientDescentOptimizer(0.1)\ngvs = opt.compute_gradients(loss)\n"
        "kept = [(g, v) for g, v in gvs if g is not None]\nscaled = []\nfor g, v in kept:\n"
        "    scaled.append((g * 0.5, v))\ntrain_op = opt.apply_gradients(scaled)\n") + _ITEMS_TAIL)
    step = text[text.index("def train_step"):]
    assert step.index("scaled = []") < step.index("scaled.append(") < step.index("apply_gradients(scaled)")
    assert "\nscaled = []" not in text  # made in the step, not once at module level


def test_lines_of_a_gfile_are_host_values_not_tensors(tmp_path):
    """`[line.rstrip() for line in tf.gfile.GFile(path)]`: a host call gives host values; its items are not
    variables or tensors (golbin's Inception predict.py was refused with a false reason at this line)."""
    text = _converted("import tensorflow as tf\n\nlabels = [line.rstrip() for line in tf.gfile.GFile('labels.txt')]\n"
                      + _ITEMS_HEAD.split("\n", 2)[2]
                      + "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n" + _ITEMS_TAIL)
    assert "labels = [line.rstrip() for line in tf.io.gfile.GFile('labels.txt')]" in text

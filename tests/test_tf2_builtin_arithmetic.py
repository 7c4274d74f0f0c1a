"""Python's `abs` and `pow` given graph values in the TF2 tier: they call the tensor's own operators
(`abs(t)` is `t.__abs__()`, i.e. `tf.abs`; `pow(a, b)` is `a ** b`), so TF 1.x built ops with them, and
the step builds the same ops when traced. Real code: the `lrelu` of many 2016-2017 GANs and autoencoders
(`f1 * x + f2 * abs(x)`), an L1 term over `tf.trainable_variables()`. Each variant prints what the
original printed (`tf1clip run`) and trains like it (`tf1clip parity`). A module that binds `abs` is
read through that binding: `abs = tf.abs` converts; `from numpy import abs` and `abs = np.abs` before
the graph stay refused (numpy's function on a symbolic tensor); rebinding the builtin after the graph is
built is refused at that line (the step, traced later, would read the new binding)."""
import sys
from pathlib import Path

import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = SMALL_TRAINING
LINEAR = "pred = tf.matmul(tf.matmul(x, W), V)\nloss = tf.reduce_mean(abs(pred - y))\n"
CONVERTS = {
    # a helper in a variable scope, as pkmital's and carpedm20's GANs wrote it
    "lrelu_in_a_scope": ("", '''def lrelu(t, leak=0.2, name="lrelu"):
    with tf.variable_scope(name):
        f1 = 0.5 * (1 + leak)
        f2 = 0.5 * (1 - leak)
        return f1 * t + f2 * abs(t)
h = lrelu(tf.matmul(x, W))
loss = tf.reduce_mean(tf.square(tf.matmul(h, V) - y))
'''),
    "pow_in_the_loss": ("", '''pred = tf.matmul(tf.nn.relu(tf.matmul(x, W)), V)
loss = tf.reduce_mean(pow(pred - y, 2)) + 0.01 * pow(tf.reduce_sum(W), 2)
'''),
    # a generator over the trainable variables, and a list over a dict's values
    "l1_over_trainables_and_a_dict": ("", '''weights = {"W": W, "V": V}
pred = tf.matmul(tf.tanh(tf.matmul(x, weights["W"])), weights["V"])
l1 = sum(tf.reduce_sum(abs(v)) for v in tf.trainable_variables())
penalty = sum([tf.reduce_sum(abs(w)) for w in weights.values()])
loss = tf.reduce_mean(tf.square(pred - y)) + 0.01 * l1 + 0.001 * penalty
'''),
    "abs_bound_to_tf_abs": ("abs = tf.abs\n", LINEAR),
}


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_abs_and_pow_on_graph_values_convert(variant):
    head, model = CONVERTS[variant]
    tier_output(SCRIPT.format(head=head, model=model, after=""))


# run and parity on CI: abs over the trainable variables and a dict's values; every
# variant in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTS), ("l1_over_trainables_and_a_dict",)))
def test_abs_and_pow_on_graph_values_convert_and_train_like_tf1(variant, tmp_path):
    head, model = CONVERTS[variant]
    assert_prints_and_trains_alike(tmp_path, SCRIPT.format(head=head, model=model, after=""), 4)


def _refusal(head: str, after: str = "") -> str:
    result = translate(SCRIPT.format(head=head, model=LINEAR, after=after), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    return f"{note.line}: {note.message}"


def test_a_module_that_binds_abs_to_numpy_is_refused_where_the_graph_reads_it():
    # line 10 is the loss, the first statement calling abs on a graph value (the head takes line 3)
    for head in ("from numpy import abs\n", "abs = np.abs\n"):
        assert _refusal(head) == ("10: not converted to the TF2 tier: `abs(...)` is given graph values while the graph "
                                  "is built: TF 2 has no symbolic tensors outside a step function")


def test_abs_bound_again_after_the_graph_is_read_as_tf1_built_it(tmp_path):
    # TF 1.x built the builtin abs at line 9; `abs = np.abs` at line 11 comes before the first run. The step
    # is traced before line 11 (steps.Steps._traced), where `abs` is still the builtin: numpy's abs never
    # meets a symbolic tensor. (Refused before, at line 11.)
    text = SCRIPT.format(head="", model=LINEAR, after="abs = np.abs\n")
    out = assert_prints_and_trains_alike(tmp_path, text, 4)
    assert out.index("train_step = train_step.get_concrete_function()") < out.index("abs = np.abs")

"""The TF2 tier's static shapes (codemods/tf2/shapes.py) against TensorFlow's own: the shape a
TF 1.x graph gave `tf.reshape(x, target)`, for inputs of known, partly known and unknown shape.
The translator builds Keras layers from these, where TF 1.x created the variables."""
from pathlib import Path

import pytest
import tensorflow as tf

from codemods.tf2 import shapes

ROOT = Path(__file__).resolve().parents[1]


def _dims(values):
    return None if values is None else [None if v is None else shapes.integer(v) for v in values]


@pytest.mark.parametrize("given, target", [
    (None, [-1, 28, 28, 1]),          # an iterator's element of a dataset made elsewhere: rank unknown
    ([None, 784], [-1, 28, 28, 1]),    # a batch of flat images
    ([6, 4], [-1, 8]),                 # every dimension known
    ([None, 4], [2, -1]),              # the leftover dimension unknown
    (None, [3, 5]),                    # no -1: the target itself
])
def test_reshape_gives_tensorflows_static_shape(given, target):
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, None if given is None else given)
        expected = tf.reshape(x, target).shape.as_list()
    got = shapes.reshape(_dims(given), _dims(target))
    assert [shapes.literal(d) if d is not None else None for d in got] == expected


def test_static_widths_read_through_helpers_are_the_numbers_tf1_computed():
    # fixtures/tf2/constructs/scoped_helpers_static_widths.py (parity: tests/test_tf2_parity.py):
    # 8x8 input, SAME conv of 4 filters, 2x2 VALID pool → 4x4x4 = 64 features, as TF 1.x's Dimensions
    from codemods.tf2 import convert
    text = (ROOT / "fixtures" / "tf2" / "constructs" / "scoped_helpers_static_widths.py").read_text()
    result = convert(text, "scoped.py")
    assert result.text is not None, result.notes
    out = result.text.split('"""', 2)[2]  # the code, after the docstring
    assert "in_channels = 1\n" in out and "feature_dim = 4 * 4 * 4\n" in out and "in_dim = 64\n" in out
    assert "def maxpool" not in out and "tf.variable_scope" not in out  # read at its call, scope and all


def test_a_name_some_function_takes_as_a_parameter_is_not_read_as_a_number():
    # `feature_dim` is bound once at module level, but `widen(t, feature_dim)` takes it as a parameter:
    # a reshape by `feature_dim` there has whatever width each call gives, so the name is not read as
    # 64 anywhere, and the dense width after the reshape is not known: refused, not guessed
    from codemods.tf2 import convert
    text = (ROOT / "fixtures" / "tf2" / "constructs" / "scoped_helpers_static_widths.py").read_text()
    text = text.replace("x = tf.placeholder(", "def widen(t, feature_dim):\n    return tf.reshape(t, [-1, feature_dim])"
                                               "\n\n\nx = tf.placeholder(", 1)
    result = convert(text, "scoped.py")
    assert result.text is None
    assert any("in_dim" in n.message for n in result.notes if n.kind == "human"), result.notes


# `x.get_shape().as_list()[k]`: the list of the same dimensions, indexed as the shape is (`x.shape[k]`): the
# number TF 1.x's graph knew, written in its place (at build time the TF 2 program has no `x`)
AS_LIST = "loss = tf.reduce_mean(tf.square(tf.matmul(h, V2) + tf.matmul(h, V) - y))\n"
AS_LIST_READS = {
    "the_last_of_get_shape": "h = tf.matmul(x, W)\nn = h.get_shape().as_list()[-1]\n"
                             "V2 = tf.Variable(tf.ones([n, 1]) * 0.1)\n",
    "of_shape": "h = tf.matmul(x, W)\nV2 = tf.Variable(tf.ones([h.shape.as_list()[1], 1]) * 0.1)\n",
    "in_a_helper": "def layer(h, n_out):\n    n_in = h.get_shape().as_list()[1]\n"
                   "    return tf.Variable(tf.ones([n_in, n_out]) * 0.1)\nh = tf.matmul(x, W)\nV2 = layer(h, 1)\n",
}


@pytest.mark.parametrize("variant", sorted(AS_LIST_READS))
def test_an_item_of_as_list_is_the_number_tf1_knew(variant, tmp_path):
    from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output
    text = SMALL_TRAINING.format(head="", model=AS_LIST_READS[variant] + AS_LIST, after="")
    out = tier_output(text)
    assert "as_list" not in out and "tf.ones([3, 1])" in out
    if variant in sampled(AS_LIST_READS, ("in_a_helper",)):  # run and parity on CI for one; all in full proofs
        assert_prints_and_trains_alike(tmp_path, text, 4)

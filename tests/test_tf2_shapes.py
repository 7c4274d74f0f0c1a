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


def _proved(cases: dict, variant: str, sample: str, folder: Path) -> str:
    """The TF2 tier's output for the small training script with `cases[variant]` as its model; run and
    proved by parity for the `sample` variant on CI, for each under TF1CLIP_FULL_PROOF."""
    from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output
    text = SMALL_TRAINING.format(head="", model=cases[variant] + AS_LIST, after="")
    out = tier_output(text)
    if variant in sampled(cases, (sample,)):
        assert_prints_and_trains_alike(folder, text, 4)
    return out


@pytest.mark.parametrize("variant", sorted(AS_LIST_READS))
def test_an_item_of_as_list_is_the_number_tf1_knew(variant, tmp_path):
    out = _proved(AS_LIST_READS, variant, "in_a_helper", tmp_path)
    assert "as_list" not in out and "tf.ones([3, 1])" in out


# A static shape bound to a name (`static_shapes`): TF 1.x ran `dims = h.get_shape().as_list()` once, while it
# built the graph. Every dimension known: that list, where it was; else the statement goes and `dims[k]` is
# read as the number TF 1.x knew. h is [None, 3] (the batch unknown), W is [4, 3].
BOUND = {
    "list_indexed": "h = tf.matmul(x, W)\ndims = h.get_shape().as_list()\n"
                    "V2 = tf.Variable(tf.ones([dims[1], 1]) * 0.1)\n",
    "unpacked": "h = tf.matmul(x, W)\n_, n = h.get_shape().as_list()\nV2 = tf.Variable(tf.ones([n, 1]) * 0.1)\n",
    "all_known": "dims = W.get_shape().as_list()\nh = tf.matmul(x, W)\n"
                 "V2 = tf.Variable(tf.ones([dims[1], 1]) * 0.1 + float(np.prod(dims)) * 0.01)\n",
    "tensor_shape": "h = tf.matmul(x, W)\ns = h.shape\nV2 = tf.Variable(tf.ones([s[1], 1]) * 0.1)\n",
    "get_shape_then_as_list": "h = tf.matmul(x, W)\ns = h.get_shape()\n"
                              "V2 = tf.Variable(tf.ones([s.as_list()[-1], 1]) * 0.1)\n",
    "in_a_helper": "def layer(h, n_out):\n    dims = h.get_shape().as_list()\n"
                   "    return tf.Variable(tf.ones([dims[1], n_out]) * 0.1)\nh = tf.matmul(x, W)\nV2 = layer(h, 1)\n",
    "helper_twice": "def layer(h, n_out):\n    dims = h.get_shape().as_list()\n"
                    "    return tf.Variable(tf.ones([dims[1], n_out]) * 0.1)\nh = tf.matmul(x, W)\nV2 = layer(h, 1)\n"
                    "V3 = layer(h, 1)\nV2 = V2 + V3 * 0.0\n",
    "read_in_the_step": "h = tf.matmul(x, W)\ndims = h.get_shape().as_list()\nh = tf.reshape(h * 2.0, [-1, dims[1]])\n"
                        "V2 = tf.Variable(tf.ones([3, 1]) * 0.1)\n",
    "product": "h = tf.matmul(x, W)\nshape = h.get_shape().as_list()\ndim = shape[1] * 1\n"
               "V2 = tf.Variable(tf.ones([dim, 1]) * 0.1)\n",
    # a convnet's flattening, as tutorials wrote it: [None, 3, 1, 1] → 3 features
    "cnn_flatten": "img = tf.reshape(tf.matmul(x, W), [-1, 3, 1, 1])\n"
                   "conv = tf.layers.conv2d(img, 1, 1, padding='same', "
                   "kernel_initializer=tf.constant_initializer(0.5))\nshape = conv.get_shape().as_list()\n"
                   "dim = shape[1] * shape[2] * shape[3]\nh = tf.reshape(conv, [-1, dim])\n"
                   "V2 = tf.Variable(tf.ones([dim, 1]) * 0.1)\n",
    "np_prod_of_a_slice": "img = tf.reshape(tf.matmul(x, W), [-1, 3, 1, 1])\n"
                          "dim = int(np.prod(img.get_shape().as_list()[1:]))\n"
                          "h = tf.reshape(tf.nn.relu(img), [-1, dim])\n"
                          "V2 = tf.Variable(tf.ones([dim, 1]) * 0.1)\n",
    "dimension_value": "h = tf.matmul(x, W)\nn = h.get_shape()[1].value\nV2 = tf.Variable(tf.ones([n, 1]) * 0.1)\n",
    # the number unpacked gives the width of a reshape a dense layer reads (built where TF 1.x made it)
    "unpacked_into_a_layers_width": "h = tf.matmul(x, W)\n_, n = h.get_shape().as_list()\n"
                                    "h = tf.layers.dense(tf.reshape(h * 1.0, [-1, n]), 3, "
                                    "kernel_initializer=tf.constant_initializer(0.2))\n"
                                    "V2 = tf.Variable(tf.ones([n, 1]) * 0.1)\n",
    "through_an_alias": "T = tf\nh = T.matmul(x, W)\ndims = h.get_shape().as_list()\n"
                        "V2 = T.Variable(T.ones([dims[1], 1]) * 0.1)\n",
    "in_a_loop": "h = tf.matmul(x, W)\nfor k in range(1):\n    dims = h.get_shape().as_list()\n"
                 "    V2 = tf.Variable(tf.ones([dims[1], 1]) * 0.1)\n",
}


@pytest.mark.parametrize("variant", sorted(BOUND))
def test_a_static_shape_bound_to_a_name_is_what_tf1_computed(variant, tmp_path):
    out = _proved(BOUND, variant, "list_indexed", tmp_path)
    assert "get_shape" not in out and "as_list" not in out and "h.shape" not in out
    assert ("dims = [4, 3]\n" in out) == (variant == "all_known")


BOUND_REFUSED = {  # variant: (model, the line refused, what the reason says)
    "read_whole": ("h = tf.matmul(x, W)\ndims = h.get_shape().as_list()\nprint(dims)\n"
                   "V2 = tf.Variable(tf.ones([3, 1]))\n",
                   10, "`dims` holds the static shape TF 1.x knew while it built the graph"),
    "the_unknown_batch": ("h = tf.matmul(x, W)\ndims = h.get_shape().as_list()\nV2 = tf.Variable(tf.ones([3, 1]))\n"
                          "b = dims[0]\n", 11, "it reads only `dims[k]` where dimension k is a known number"),
    "an_unknown_dimension": ("h = tf.matmul(x, W)\nn0, n = h.get_shape().as_list()\n"
                             "V2 = tf.Variable(tf.ones([n, 1]) * (n0 or 1))\n", 10, "`n0` holds a dimension"),
    "read_by_a_function": ("h = tf.matmul(x, W)\ndims = h.get_shape().as_list()\ndef width():\n    return dims[1]\n"
                           "V2 = tf.Variable(tf.ones([width(), 1]) * 0.1)\n", 9, "`dims` holds the static shape"),
    # the helper's second call reads its `dims` as `dims_2`, its `t` as the `h` given: the reason names the local
    # as the input does
    "a_helpers_second_call": ("def layer(t):\n    dims = t.get_shape().as_list()\n    first = dims[0]\n"
                              "    return tf.Variable(tf.ones([dims[1], 1]) * 0.1)\nV3 = layer(W)\n"
                              "h = tf.matmul(x, W)\nV2 = layer(h)\n", 10,
                              "`dims` holds the static shape TF 1.x knew while it built the graph "
                              "(`dims = h.get_shape().as_list()`)"),
    "rebound": ("h = tf.matmul(x, W)\ndims = h.get_shape().as_list()\nV2 = tf.Variable(tf.ones([dims[1], 1]))\n"
                "dims = [0]\n", 9, "other statements bind it too"),
}


@pytest.mark.parametrize("variant", sorted(BOUND_REFUSED))
def test_a_static_shape_read_as_tf1_knew_it_and_tf1clip_does_not_is_refused(variant):
    from codemods.tf2 import convert
    from conftest import SMALL_TRAINING
    model, line, reason = BOUND_REFUSED[variant]
    result = convert(SMALL_TRAINING.format(head="", model=model + AS_LIST, after=""), "t.py")
    assert result.text is None
    human = [n for n in result.notes if n.kind == "human"]
    assert len(human) == 1 and reason in human[0].message and human[0].line == line, human

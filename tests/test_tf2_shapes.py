"""The TF2 tier's static shapes (codemods/tf2/shapes.py) against TensorFlow's own: the shape a
TF 1.x graph gave `tf.reshape(x, target)`, for inputs of known, partly known and unknown shape.
The translator builds Keras layers from these, where TF 1.x created the variables."""
import pytest
import tensorflow as tf

from codemods.tf2 import shapes


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

"""tf.contrib.seq2seq.tile_batch (TF 1.15): each batch entry repeated `multiplier` times in a row.

[b0, b1] with multiplier 3 becomes [b0, b0, b0, b1, b1, b1] (the layout beam search expects),
for every tensor of a nested structure.
"""
import tensorflow as tf


def _tile(t, multiplier):
    t = tf.convert_to_tensor(t, name="t")
    if t.shape.rank is None or t.shape.rank < 1:
        raise ValueError("t must have statically known rank")
    shape = tf.shape(t)
    tiling = [1] * (t.shape.rank + 1)
    tiling[1] = multiplier
    tiled = tf.tile(tf.expand_dims(t, 1), tiling)
    tiled = tf.reshape(tiled, tf.concat(([shape[0] * multiplier], shape[1:]), 0))
    static = tf.compat.dimension_value(t.shape[0])
    tiled.set_shape(tf.TensorShape([static * multiplier if static is not None else None]).concatenate(t.shape[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    with tf.name_scope(name or "tile_batch"):
        return tf.nest.map_structure(lambda x: _tile(x, multiplier), t)

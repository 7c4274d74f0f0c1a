"""tf.contrib.data (TF 1.15): its transformations were deprecated aliases of tf.data.experimental,
served from there (`map_and_batch`, `parallel_interleave`, `group_by_window`,
`shuffle_and_repeat`, ...), plus the contrib-only `batch_and_drop_remainder`,
`padded_batch_and_drop_remainder` and `sloppy_interleave` with their TF 1.15 meaning."""
from tf1clip.contrib import forward


def _experimental():
    import tensorflow as tf

    return tf.compat.v1.data.experimental


def batch_and_drop_remainder(batch_size):
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    return lambda dataset: dataset.padded_batch(batch_size, padded_shapes=padded_shapes,
                                                padding_values=padding_values, drop_remainder=True)


def sloppy_interleave(map_func, cycle_length, block_length=1):
    return _experimental().parallel_interleave(map_func, cycle_length, block_length=block_length, sloppy=True)


__getattr__ = forward(__name__, "tf.contrib.data", _experimental)  # hints: tf1clip.contrib.hints

"""tf.contrib.data: the transformations TF 1.15 kept as deprecated wrappers of tf.data.experimental.

TF 1.15's `map_and_batch`, `parallel_interleave` and `shuffle_and_repeat` called the
tf.data.experimental function of the same name with the same arguments; here they are those
functions. The rest of tf.contrib.data stops with one line.
"""
import tensorflow as tf

from tf1clip.contrib import forward

_SAME = ("map_and_batch", "parallel_interleave", "shuffle_and_repeat")


def _experimental():
    return type("contrib_data", (), {name: staticmethod(getattr(tf.data.experimental, name)) for name in _SAME})


__getattr__ = forward(__name__, "tf.contrib.data", _experimental,
                      hints={"sliding_window_batch": "use tf.data.Dataset.window",
                             "batch_and_drop_remainder": "use Dataset.batch(n, drop_remainder=True)"})

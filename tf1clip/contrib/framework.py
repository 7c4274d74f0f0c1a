"""tf.contrib.framework: global-step helpers, arg_scope and variable helpers (tf-slim's)."""
from tf1clip import _slim
from tf1clip.contrib import forward


def _train():
    import tensorflow as tf

    return tf.compat.v1.train


def get_global_step(graph=None):
    """contrib.framework.get_global_step: the graph's global step or None."""
    return _train().get_global_step(graph)


__getattr__ = forward(__name__, "tf.contrib.framework", _train, _slim.load)

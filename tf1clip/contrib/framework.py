"""tf.contrib.framework: global-step helpers, arg_scope and variable helpers (tf-slim's), and
`nest` (TensorFlow's nest module, with TF 1.15's `is_sequence`, now `is_nested`)."""
import types

from tf1clip import _slim
from tf1clip.contrib import forward


def _train():
    import tensorflow as tf

    return tf.compat.v1.train


def get_global_step(graph=None):
    """contrib.framework.get_global_step: the graph's global step or None."""
    return _train().get_global_step(graph)


def _nest():
    from tensorflow.python.util import nest

    module = types.ModuleType("tf.contrib.framework.nest", nest.__doc__)
    module.__dict__.update({k: v for k, v in vars(nest).items() if not k.startswith("__")})
    module.is_sequence = nest.is_nested
    return module


_forward = forward(__name__, "tf.contrib.framework", _train, _slim.load)


def __getattr__(name):
    if name == "nest":
        globals()[name] = _nest()
        return globals()[name]
    return _forward(name)

"""tf-slim 1.1.0 on TensorFlow 2.21.

tf-slim (the newest release) still reaches for names that TensorFlow's private modules no
longer have: `ops.Tensor` and `ops.IndexedSlices` (clip_gradient_norms, multiply_gradients,
optimize_loss crash on them), `control_flow_ops.cond` (slim's smart_cond: batch_norm and
dropout with a Tensor `is_training`), `array_ops.stack`, and the core batch norm layer under
`tf_keras.legacy_tf_layers` (a 4-D batch_norm). Rather than editing TensorFlow's
modules for every library in the process, each tf_slim module gets its own view of those
modules, with the missing names put back pointing at their TF 2.21 homes. The code that
runs is tf-slim's own, so its numerics are tf-slim's (= tf.contrib's).
"""
from __future__ import annotations

import sys
import types

_PATCHED = False


class _ModuleView(types.ModuleType):
    """A module that answers from `extras` first, then from the real module."""

    def __init__(self, real: types.ModuleType, extras: dict):
        super().__init__(real.__name__, real.__doc__)
        self.__dict__.update(extras)
        self._tf1clip_real = real

    def __getattr__(self, name):
        return getattr(self._tf1clip_real, name)


def _views():
    import tensorflow as tf
    from tensorflow.python.framework import ops
    from tensorflow.python.framework.indexed_slices import IndexedSlicesValue
    from tensorflow.python.ops import array_ops, control_flow_ops

    v1 = tf.compat.v1
    return {
        id(ops): (ops, {"Tensor": tf.Tensor, "IndexedSlices": tf.IndexedSlices,
                        "IndexedSlicesValue": IndexedSlicesValue}),
        id(control_flow_ops): (control_flow_ops, {"cond": v1.cond, "while_loop": v1.while_loop,
                                                  "case": v1.case, "Assert": tf.debugging.Assert}),
        id(array_ops): (array_ops, {"stack": tf.stack, "unstack": tf.unstack}),
    }


def _legacy_layers() -> None:
    """TF 2.21's `tensorflow.python.layers.normalization` loads `tf_keras.legacy_tf_layers.normalization`
    lazily, and tf-keras 2.21 ships that package as `tf_keras.src.legacy_tf_layers`: tf-slim's batch_norm of
    a 4-D input (its core-layer path) crashed with ModuleNotFoundError. The old names are given to the
    package tf-keras has."""
    import importlib

    for sub in ("", ".base", ".normalization"):
        if "tf_keras.legacy_tf_layers" + sub not in sys.modules:
            try:
                module = importlib.import_module("tf_keras.src.legacy_tf_layers" + sub)
            except ImportError:  # no tf-keras: the core layer is not there to reach
                return
            sys.modules["tf_keras.legacy_tf_layers" + sub] = module


def load():
    """Import tf_slim with its TF 2.21 breakages mended; returns the tf_slim module."""
    global _PATCHED
    _legacy_layers()
    import tf_slim
    from tf_slim import learning  # noqa: F401 - pulled in so it gets mended too
    from tf_slim.layers import optimizers  # noqa: F401
    from tf_slim.training import training  # noqa: F401

    if not _PATCHED:
        views = {key: _ModuleView(real, extras) for key, (real, extras) in _views().items()}
        for name, module in list(sys.modules.items()):
            if not (name == "tf_slim" or name.startswith("tf_slim.")) or module is None:
                continue
            namespace = vars(module)
            for attr, value in list(namespace.items()):
                view = views.get(id(value))
                if view is not None and isinstance(value, types.ModuleType):
                    namespace[attr] = view
        _PATCHED = True
    return tf_slim

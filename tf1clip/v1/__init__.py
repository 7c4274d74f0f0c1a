"""The TF 1.x face: `import tf1clip.v1 as tf`.

Every `tf.compat.v1` symbol as `tf.X`, graph mode on (`disable_v2_behavior()`, as a TF 1.x
script expects), plus what TF 2 dropped: `tf.contrib` (tf1clip.contrib), `tf.estimator`
(tf1clip.estimator, also as `tf.compat.v1.estimator`) and
`tf.examples.tutorials.mnist.input_data` (reads local files, never downloads); `tf.flags` and
`tf.app.flags` let a script define a flag name absl's logging took (tf1clip.v1.flags).

Importing this module creates no graph ops, so graph-seeded scripts draw the same random
numbers as with `import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()`.
"""
import importlib
import os
import sys
import types
import warnings

# tf.layers and the rnn cells need tf-keras, chosen by this switch at TensorFlow's import.
if "tensorflow" not in sys.modules:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
elif os.environ.get("TF_USE_LEGACY_KERAS") not in ("1", "true", "True"):
    warnings.warn("tf1clip.v1: TensorFlow was imported before tf1clip.v1 without TF_USE_LEGACY_KERAS=1, "
                  "so tf.layers and tf.nn.rnn_cell will refuse to run under Keras 3; import tf1clip.v1 "
                  "first or set TF_USE_LEGACY_KERAS=1 in the environment", stacklevel=2)

import tensorflow as _tf  # noqa: E402

from tensorflow.python.util import deprecation as _deprecation  # noqa: E402

_v1 = _tf.compat.v1
with _deprecation.silence():  # TF 1.x scripts asked for graph mode; no warning about it
    _v1.disable_v2_behavior()

_OWN = {"contrib": "tf1clip.contrib", "examples": "tf1clip.examples", "estimator": "tf1clip.estimator",
        "flags": "tf1clip.v1.flags", "app": "tf1clip.v1.app"}


class _Compat(types.ModuleType):
    """`tf.compat` as the face shows it: `tf.compat.v1` is the face itself, so the TF 1.14/1.15
    spelling `tf.compat.v1.estimator` works too; everything else is TensorFlow's tf.compat."""

    def __getattr__(self, name):
        if name == "v1":
            return sys.modules[__name__]
        return getattr(_tf.compat, name)

    def __dir__(self):
        return dir(_tf.compat)


def __getattr__(name):
    if name in _OWN:
        value = importlib.import_module(_OWN[name])
    elif name == "compat":
        value = _Compat("tensorflow.compat")
    else:
        try:
            value = getattr(_v1, name)
        except AttributeError:
            try:  # TF 2-only attributes scripts reach through `tensorflow`: python, __version__
                value = getattr(_tf, name)
            except AttributeError:
                raise AttributeError(f"module 'tensorflow' (tf1clip.v1) has no attribute {name!r}") from None
    if not name.startswith("__"):
        globals()[name] = value
    return value


def __dir__():
    return sorted(set(dir(_v1)) | set(_OWN))

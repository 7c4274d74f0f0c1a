"""tf.contrib.layers: tf-slim's layers, initializers, regularizers and `optimize_loss`.

tf-slim carries contrib.layers' code; `optimize_loss` is contrib's (float clip_gradients ->
clip_by_global_norm, callable -> called on [(g, v)], anything else -> ValueError
"Unknown type"), mended for TF 2.21 by tf1clip._slim.
"""
import sys

from tf1clip import _slim
from tf1clip.contrib import forward


def _layers():
    _slim.load()
    return sys.modules["tf_slim.layers"]


def _optimizers():
    _slim.load()
    return sys.modules["tf_slim.layers.optimizers"]


__getattr__ = forward(__name__, "tf.contrib.layers", _layers, _optimizers)

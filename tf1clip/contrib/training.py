"""tf.contrib.training: tf-slim's training helpers (clip_gradient_norms, multiply_gradients,
create_train_op, ...), which are the contrib code, mended for TF 2.21; `HParams` and
`parse_values` (tf1clip.contrib.hparam, TF 1.15's semantics)."""
import sys

from tf1clip import _slim
from tf1clip.contrib import forward
from tf1clip.contrib.hparam import HParams, parse_values

__all__ = ["HParams", "parse_values"]


def _training():
    _slim.load()
    return sys.modules["tf_slim.training.training"]


__getattr__ = forward(__name__, "tf.contrib.training", _training)  # hints: tf1clip.contrib.hints

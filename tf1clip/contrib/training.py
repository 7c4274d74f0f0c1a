"""tf.contrib.training: tf-slim's training helpers (clip_gradient_norms, multiply_gradients,
create_train_op, ...), which are the contrib code, mended for TF 2.21."""
import sys

from tf1clip import _slim
from tf1clip.contrib import forward


def _training():
    _slim.load()
    return sys.modules["tf_slim.training.training"]


__getattr__ = forward(__name__, "tf.contrib.training", _training)

"""tf.contrib.losses: the losses tf.losses replaced (TF 1.15's contrib/losses/python/losses/loss_ops.py, deprecated
there since 2016-12), as tf-slim 1.1.0 keeps them: `tf_slim.losses` is that module (the predictions or logits
first, `compute_weighted_loss`, the LOSSES collection), mended for TF 2.21 like the rest of tf.contrib.slim."""
from tf1clip import _slim
from tf1clip.contrib import forward

__getattr__ = forward(__name__, "tf.contrib.losses", lambda: _slim.load().losses)

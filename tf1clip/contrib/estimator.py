"""tf.contrib.estimator: the gradient-clipping decorator (TF 1.15 semantics)."""
from tf1clip.contrib import forward
from tf1clip.optimizer import clip_gradients_by_norm

__all__ = ["clip_gradients_by_norm"]
__getattr__ = forward(__name__, "tf.contrib.estimator")  # hints: tf1clip.contrib.hints

"""tf.contrib.slim: tf-slim 1.1.0 with its TF 2.21 breakages mended (see tf1clip._slim)."""
from tf1clip import _slim
from tf1clip.contrib import forward

__getattr__ = forward(__name__, "tf.contrib.slim", _slim.load)

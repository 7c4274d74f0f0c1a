"""`import tf1clip.slim as slim`: tf-slim 1.1.0 with its TF 2.21 breakages mended."""
from tf1clip import _slim


def __getattr__(name):
    return getattr(_slim.load(), name)

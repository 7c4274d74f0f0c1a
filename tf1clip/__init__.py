"""tf1clip: TF 1.x gradient-clipping training code on TensorFlow 2.

`import tf1clip` stays light (no TensorFlow); the clipping API loads on first use:

    tf1clip.clip_gradients_by_norm(optimizer, clip_norm)   # tf.contrib.estimator's decorator
    tf1clip.ClippedOptimizer(optimizer, mode, clip)        # value / norm / global_norm / average_norm
    import tf1clip.v1 as tf                                # the TF 1.x face
"""
__version__ = "0.1.0"

_LAZY = {
    "ClippedOptimizer": "tf1clip.optimizer",
    "clip_gradients_by_norm": "tf1clip.optimizer",
    "clip_gradients": "tf1clip.clipping",
    "MODES": "tf1clip.clipping",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tf1clip' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

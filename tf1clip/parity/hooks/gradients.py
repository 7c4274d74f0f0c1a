"""Gradient sources: what loss each gradient was taken of, and the raw (pre-clip) gradients.

`Optimizer.compute_gradients(loss)` (and so `minimize`), `tf.gradients(loss, xs)` (also as
tf-keras' get_updates reaches it) and `GradientTape.gradient(loss, sources)`.
"""
from __future__ import annotations

from tf1clip.steps import wrap


def install(rec) -> None:
    import tensorflow as tf
    from tensorflow.python.ops import gradients_impl
    from tensorflow.python.training import optimizer as v1_optimizer

    def make_compute(original):
        def compute_gradients(self, loss, var_list=None, *args, **kwargs):
            result = original(self, loss, var_list, *args, **kwargs)
            try:
                pairs = list(result)
                rec.note_gradients(loss, [v for _, v in pairs], [g for g, _ in pairs])
            except Exception:  # noqa: BLE001 - recording must never break the script
                pass
            return result
        return compute_gradients

    wrap(v1_optimizer.Optimizer, "compute_gradients", make_compute)

    def make_gradients(original):
        def gradients(ys, xs, *args, **kwargs):
            result = original(ys, xs, *args, **kwargs)
            rec.note_gradients(ys, xs, result)
            return result
        return gradients

    # tf-keras' get_updates reaches tf.gradients through tf.compat.v2.compat.v1
    for module in (gradients_impl, tf.compat.v1, tf.compat.v2.compat.v1):
        wrap(module, "gradients", make_gradients)

    def make_tape_gradient(original):
        def gradient(self, target, sources, *args, **kwargs):
            result = original(self, target, sources, *args, **kwargs)
            rec.note_gradients(target, sources, result)
            return result
        return gradient

    wrap(tf.GradientTape, "gradient", make_tape_gradient)

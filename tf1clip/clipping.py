"""Gradient clipping as TF 1.15 did it: None-aware and sparse-aware.

Every function takes and returns `[(gradient, variable)]` lists, the currency of
`Optimizer.compute_gradients` / `apply_gradients`. `None` gradients pass through untouched;
`IndexedSlices` are clipped on `.values` and stay sparse (so a norm over a sparse gradient
counts repeated indices separately, exactly as TF1 did).
"""
from __future__ import annotations

import numbers

import tensorflow as tf

MODES = ("value", "norm", "global_norm", "average_norm")


def _on_values(grad, fn):
    """Apply fn to a dense gradient, or to the values of IndexedSlices keeping it sparse."""
    if grad is None:
        return None
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(fn(grad.values), grad.indices, grad.dense_shape)
    return fn(grad)


def global_norm(grads):
    """Global L2 norm over the non-None gradients (IndexedSlices counted on their values)."""
    present = [g for g in grads if g is not None]
    if not present:
        return tf.constant(0.0)
    return tf.linalg.global_norm(present)


def validate_clip(mode: str, clip):
    """Check a clip argument the way users get it wrong; ValueError names the argument.

    Returns the clip normalised: a (lo, hi) pair for mode 'value', else the scalar.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not a clipping mode; expected one of {', '.join(MODES)}")
    if mode == "value":
        if isinstance(clip, (tuple, list)):
            if len(clip) != 2:
                raise ValueError(f"clip={clip!r}: mode 'value' takes a number c (meaning [-c, c]) or a pair (lo, hi)")
            lo, hi = clip
            lo_v, hi_v = _static_scalar("clip[0] (lo)", lo), _static_scalar("clip[1] (hi)", hi)
            if lo_v is not None and hi_v is not None and lo_v > hi_v:
                raise ValueError(f"clip=({lo!r}, {hi!r}): lo must not exceed hi")
            return lo, hi
        value = _static_scalar("clip", clip)
        if value is not None and value <= 0:
            raise ValueError(f"clip={clip!r} must be > 0 (it clips to [-clip, clip])")
        return -clip if value is None else -value, clip
    value = _static_scalar("clip", clip)
    if value is not None and value <= 0:
        raise ValueError(f"clip={clip!r} must be > 0 for mode {mode!r}")
    return clip


def _static_scalar(arg: str, value):
    """The Python value of a scalar argument, None when it is only known at run time."""
    if isinstance(value, bool):
        raise ValueError(f"{arg}={value!r} must be a number, not a bool")
    if isinstance(value, numbers.Real):
        return float(value)
    if value is None:
        raise ValueError(f"{arg} must be a number or a scalar Tensor, got None")
    shape = getattr(value, "shape", None)
    if shape is None:
        raise ValueError(f"{arg}={value!r} must be a number or a scalar Tensor")
    if shape.rank is not None and shape.rank != 0:
        raise ValueError(f"{arg} must be a scalar, got shape {shape}")
    static = tf.get_static_value(value)
    return None if static is None else float(static)


def clip_gradients(grads_and_vars, mode: str, clip, use_norm=None):
    """Clip a [(g, v)] list by `mode`; returns (clipped list, pre-clip global norm or None).

    The global norm is computed (and returned) only where the clip needs it (mode
    'global_norm') or the caller passes it in `use_norm`, so that the clip adds no more graph
    ops than the TF1 recipe it stands for (op counts decide op seeds in graph mode).

    value: element-wise to [lo, hi]; norm: each tensor to L2 norm <= clip (TF's
    clip_by_norm); global_norm: all gradients by their joint norm (tf.clip_by_global_norm,
    inf/NaN norm -> NaN outputs as in TF1); average_norm: tf.clip_by_average_norm per tensor.
    """
    clip = validate_clip(mode, clip)
    grads_and_vars = list(grads_and_vars)
    grads = [g for g, _ in grads_and_vars]
    variables = [v for _, v in grads_and_vars]
    norm = use_norm
    if mode == "value":
        lo, hi = clip
        clipped = [_on_values(g, lambda t: tf.clip_by_value(t, lo, hi)) for g in grads]
    elif mode == "norm":
        clipped = [_on_values(g, lambda t: tf.clip_by_norm(t, clip)) for g in grads]
    elif mode == "average_norm":
        clipped = [_on_values(g, lambda t: tf.compat.v1.clip_by_average_norm(t, clip)) for g in grads]
    else:
        if norm is None:
            norm = global_norm(grads)
        clipped, _ = tf.clip_by_global_norm(grads, clip, use_norm=norm)
    return list(zip(clipped, variables)), norm

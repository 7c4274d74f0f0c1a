"""ClippedOptimizer: a TF1 `Optimizer` that clips gradients between compute and apply.

It is the structure of TF 1.15's `tf.contrib.estimator` `_TransformGradients`: a private
Optimizer subclass that forwards `compute_gradients`, `apply_gradients`, `get_slot` and
`get_slot_names` to the optimizer it wraps and creates no variables of its own, so slot
names (and checkpoints) are the inner optimizer's. `clip_gradients_by_norm` is contrib's
decorator built on it.
"""
from __future__ import annotations

import tensorflow as tf

from tf1clip.clipping import clip_gradients, global_norm, validate_clip

_Optimizer = tf.compat.v1.train.Optimizer


class ClippedOptimizer(_Optimizer):
    """Wrap a `tf.compat.v1.train.Optimizer` so that `apply_gradients` clips first.

    mode: 'value' (clip c means [-c, c]; or a pair (lo, hi)), 'norm' (each tensor),
    'global_norm' (all together), 'average_norm' (tf.clip_by_average_norm per tensor).
    After each `apply_gradients`, `global_norm` gives the pre-clip global norm tensor and
    `clipped_global_norm` the post-clip one (for summaries).
    skip_nonfinite=True: when the pre-clip global norm is inf/NaN, skip the update and the
    global-step increment. TF1 had no such switch: with it off (the default), an inf/NaN
    global norm writes NaN into every variable, exactly as in TF1.
    """

    def __init__(self, optimizer, mode, clip, skip_nonfinite=False, name=None):
        if not isinstance(optimizer, _Optimizer):
            raise ValueError(
                f"optimizer={optimizer!r} must be a tf.compat.v1.train.Optimizer "
                "(e.g. tf.train.AdamOptimizer); Keras optimizers clip with clipnorm/clipvalue/global_clipnorm")
        validate_clip(mode, clip)
        if not isinstance(skip_nonfinite, bool):
            raise ValueError(f"skip_nonfinite={skip_nonfinite!r} must be True or False")
        super().__init__(use_locking=False, name=name or optimizer.get_name())
        self._optimizer = optimizer
        self._mode = mode
        self._clip = clip
        self._skip_nonfinite = skip_nonfinite
        self._last = None  # (grads_and_vars, pre-clip norm or None, clipped) of the last apply

    @property
    def inner(self):
        """The wrapped optimizer."""
        return self._optimizer

    @property
    def mode(self):
        return self._mode

    @property
    def clip(self):
        return self._clip

    @property
    def global_norm(self):
        """Pre-clip global norm of the last apply_gradients (a tensor; None before the first).

        Built on first access unless the clip already needed it, so the wrapper adds no graph
        ops of its own unless asked.
        """
        if self._last is None:
            return None
        grads_and_vars, norm, clipped = self._last
        if norm is None:
            norm = global_norm([g for g, _ in grads_and_vars])
            self._last = (grads_and_vars, norm, clipped)
        return norm

    @property
    def clipped_global_norm(self):
        """Post-clip global norm of the last apply_gradients (built on access)."""
        if self._last is None:
            return None
        return global_norm([g for g, _ in self._last[2]])

    def compute_gradients(self, *args, **kwargs):
        """See `tf.compat.v1.train.Optimizer.compute_gradients`; forwarded unchanged.

        Gating too is forwarded as given (GATE_OP by default), as TF 1.x's contrib wrappers did.
        Gating orders ops and computes nothing, yet it can change values: on oneDNN builds
        (TensorFlow's default on x86) an ungated graph lets a conv's bias gradient be merged into
        its filter gradient's kernel, which sums it in another order (docs/clipping.md).
        """
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Clip, then let the wrapped optimizer apply (and increment global_step)."""
        grads_and_vars = list(grads_and_vars)
        norm = global_norm([g for g, _ in grads_and_vars]) if self._skip_nonfinite else None
        clipped, norm = clip_gradients(grads_and_vars, self._mode, self._clip, use_norm=norm)
        self._last = (grads_and_vars, norm, clipped)
        if not self._skip_nonfinite:
            return self._optimizer.apply_gradients(clipped, global_step, name)

        def apply():
            return tf.group(self._optimizer.apply_gradients(clipped, global_step, name))

        # Slots are created under init_scope inside apply_gradients, so they land outside
        # the cond and are initialized by global_variables_initializer as usual.
        return tf.cond(tf.math.is_finite(norm), apply, tf.no_op, name="skip_nonfinite")

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)


def clip_gradients_by_norm(optimizer, clip_norm):
    """TF 1.15 `tf.contrib.estimator.clip_gradients_by_norm`: clip by global norm, then apply.

    Named 'ClipByNorm' + the inner optimizer's name; None gradients are kept and left out of
    the norm; `variables()` is [] and slot names are the inner optimizer's, as in contrib.
    """
    if not isinstance(optimizer, _Optimizer):
        raise ValueError(f"optimizer={optimizer!r} must be a tf.compat.v1.train.Optimizer")
    return ClippedOptimizer(optimizer, "global_norm", clip_norm, name="ClipByNorm" + optimizer.get_name())

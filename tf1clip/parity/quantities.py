"""The recorded quantities as TensorFlow computes them: a gradient target's loss, global norms."""
from __future__ import annotations

import numpy as np

from tf1clip.parity.record_values import flatten


def global_norm(grads):
    """tf.linalg.global_norm of the present gradients; None when there are none."""
    import tensorflow as tf

    present = [g for g in grads if g is not None]
    if not present:
        return None
    return tf.linalg.global_norm(present)


def loss_value(target):
    """The loss a gradient was taken of, as a Python float (eager); summed when not scalar."""
    if target is None:
        return None
    import tensorflow as tf

    flat = [t for t in flatten(target) if t is not None]
    if not flat:
        return None
    return float(sum(float(tf.reduce_sum(t)) for t in flat))


def loss_tensor(target):
    """The same as a float64 tensor (graph / tf.function); NaN when there is no target."""
    import tensorflow as tf

    if target is None:
        return tf.constant(np.nan)
    flat = [tf.reduce_sum(tf.cast(t, tf.float64)) for t in flatten(target) if t is not None]
    return tf.add_n(flat) if flat else tf.constant(np.nan, tf.float64)


def magnitudes(variables):
    """max |v| of each variable as one float64 tensor (0 for an empty one): the scale its
    value has on the way, which the final comparison judges its rounding against."""
    import tensorflow as tf

    def largest(v):
        value = tf.convert_to_tensor(v)
        if v.shape.num_elements() == 0 or not (value.dtype.is_floating or value.dtype.is_integer
                                               or value.dtype.is_bool):
            return tf.constant(0.0, tf.float64)  # nothing to round
        if not value.dtype.is_floating:  # integers, booleans: their float64 values
            value = tf.cast(value, tf.float64)
        return tf.cast(tf.reduce_max(tf.abs(value)), tf.float64)

    if not variables:
        return tf.zeros([0], tf.float64)
    return tf.stack([largest(v) for v in variables])

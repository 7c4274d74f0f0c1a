"""What the recorder writes and how it names things: a variable's record key, name, shape and
identity, an optimizer's name, numbers as JSON holds them, arrays with their metadata."""
from __future__ import annotations

import json

import numpy as np

from tf1clip.parity import membership


def var_key(opt_index, var_index):
    """The record's key of an optimizer's j-th variable."""
    return f"opt{opt_index}/var{var_index}"


def save_arrays(path, arrays, ranks, members=None):
    meta = [{"key": key, "shape": list(np.shape(value)), "rank": ranks.get(key, i)}
            for i, (key, value) in enumerate(arrays.items())]
    if members is not None:
        membership.describe_members(meta, members)
    np.savez(path, __meta__=np.array(json.dumps(meta)), **arrays)


def number(value):
    """A recorded number: float, or its repr when not finite (JSON has no inf/nan)."""
    if value is None:
        return None
    value = float(np.asarray(value))
    return value if np.isfinite(value) else repr(value)


def flatten(x):
    import tensorflow as tf

    return tf.nest.flatten(x, expand_composites=False)


def optimizer_name(optimizer):
    if hasattr(optimizer, "get_name"):  # tf.compat.v1.train.Optimizer
        return str(optimizer.get_name())
    return str(getattr(optimizer, "name", type(optimizer).__name__))


def var_identity(var):
    """id of the tf.Variable the creator saw behind `var`: Keras 3 variables wrap one
    (`_value`), tf.distribute variables hold one per replica (`_primary` is the first)."""
    inner = getattr(var, "_value", None)
    if inner is not None and not callable(inner):
        var = inner
    primary = getattr(var, "_primary", None)
    return id(primary if primary is not None else var)


def var_name(var):
    return str(getattr(var, "path", None) or getattr(var, "name", "?"))


def var_shape(var):
    shape = getattr(var, "shape", None)
    try:
        return tuple(int(d) for d in shape)
    except Exception:  # noqa: BLE001
        return ()

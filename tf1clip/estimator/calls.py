"""How Estimator calls the user's functions (TF 1.15): arguments by signature, results parsed.

`input_fn` and `model_fn` get `mode`, `params` and `config` only when their signature names
them (`functools.partial` and callable objects too, through TensorFlow's `fn_args`). An
`input_fn` returns a `tf.data.Dataset` (iterated through an initializable iterator that a hook
initializes when the session starts) or `(features, labels)`, or just `features`.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.python.util import function_utils

_v1 = tf.compat.v1

VALID_MODEL_FN_ARGS = frozenset({"features", "labels", "mode", "params", "self", "config"})


def fn_args(fn) -> tuple:
    return tuple(function_utils.fn_args(fn))


def verify_model_fn_args(model_fn, params):
    args = set(fn_args(model_fn))
    if "features" not in args:
        raise ValueError(f"model_fn ({model_fn}) must include features argument.")
    if params is not None and "params" not in args:
        raise ValueError(f"model_fn ({model_fn}) does not include params argument, but params ({params}) is "
                         "passed to Estimator.")
    if params is None and "params" in args:
        _v1.logging.warning("Estimator's model_fn (%s) includes params argument, but params are not passed to "
                            "Estimator.", model_fn)
    unexpected = sorted(args - VALID_MODEL_FN_ARGS)
    if unexpected:
        raise ValueError(f"model_fn ({model_fn}) has following not expected args: {unexpected}")


def call_input_fn(input_fn, mode, params, config):
    """input_fn(**the arguments it names), built on the CPU as TF 1.15 did."""
    args = fn_args(input_fn)
    kwargs = {}
    if "mode" in args:
        kwargs["mode"] = mode
    if "params" in args:
        kwargs["params"] = params
    if "config" in args:
        kwargs["config"] = config
    with tf.device("/cpu:0"):
        return input_fn(**kwargs)


def call_model_fn(model_fn, features, labels, mode, params, config, spec_type):
    args = fn_args(model_fn)
    kwargs = {}
    if "labels" in args:
        kwargs["labels"] = labels
    elif labels is not None:
        raise ValueError("model_fn does not take labels, but input_fn returns labels.")
    if "mode" in args:
        kwargs["mode"] = mode
    if "params" in args:
        kwargs["params"] = params
    if "config" in args:
        kwargs["config"] = config
    _v1.logging.info("Calling model_fn.")
    result = model_fn(features=features, **kwargs)
    _v1.logging.info("Done calling model_fn.")
    if not isinstance(result, spec_type):
        raise ValueError("model_fn should return an EstimatorSpec.")
    return result


def parse_input_fn_result(result):
    """(features, labels or None, input hooks) from what an input_fn returned."""
    hooks = []
    if isinstance(result, tf.data.Dataset):
        iterator = _v1.data.make_initializable_iterator(result)
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    features, labels = parse_iterator_result(result)
    return features, labels, hooks


def parse_iterator_result(result):
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        return result[0], result[1]
    return result, None


class DatasetInitializerHook(_v1.train.SessionRunHook):
    """Initializes the input_fn's dataset iterator when the session is created."""

    def __init__(self, iterator):
        self._iterator = iterator
        self._initializer = None

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        del coord
        session.run(self._initializer)


def check_hooks(hooks) -> list:
    return _all_of(hooks, _v1.train.SessionRunHook, "Hooks must be a SessionRunHook, given: {}")


def check_listeners(listeners) -> list:
    return _all_of(listeners, _v1.train.CheckpointSaverListener,
                   "saving_listeners must be a list of CheckpointSaverListener, given: {}")


def _all_of(items, cls, message) -> list:
    items = list(items or [])
    for item in items:
        if not isinstance(item, cls):
            raise TypeError(message.format(item))
    return items


def has_dataset_or_queue_runner(features) -> bool:
    tensors = [x for x in tf.nest.flatten(features) if isinstance(x, tf.Tensor)]
    if any(t.op.type == "IteratorGetNext" for t in tensors):
        return True
    return bool(_v1.get_collection(_v1.GraphKeys.QUEUE_RUNNERS))

"""`EstimatorSpec` and `ModeKeys`: what a `model_fn` returns, validated as TF 1.15 did."""
from __future__ import annotations

import collections

import tensorflow as tf
from tensorflow.python.saved_model.model_utils import export_utils
from tensorflow.python.saved_model.model_utils.mode_keys import EstimatorModeKeys as ModeKeys

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"

_v1 = tf.compat.v1

_NOT_DEFAULT_GRAPH = (
    '{0} with "{1}" must be from the default graph. Possible causes of this error include: \n\n'
    "1) {0} was created outside the context of the default graph.\n\n"
    '2) The object passed through to EstimatorSpec was not created in the most recent call to "model_fn".')

_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
           "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """Ops and objects returned from a `model_fn`: TRAIN needs `loss` and `train_op`, EVAL
    `loss`, PREDICT `predictions`; everything must come from the graph model_fn built."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None, scaffold=None,
                evaluation_hooks=None, prediction_hooks=None):
        train_op = validate_train_op(train_op, mode)
        loss = validate_loss(loss, mode)
        predictions = validate_predictions(predictions, mode)
        if mode == ModeKeys.PREDICT:
            export_outputs = export_utils.get_export_outputs(export_outputs, predictions)
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metric_ops=validate_eval_metric_ops(eval_metric_ops), export_outputs=export_outputs,
            training_chief_hooks=validate_hooks(training_chief_hooks), training_hooks=validate_hooks(training_hooks),
            scaffold=validate_scaffold(scaffold), evaluation_hooks=validate_hooks(evaluation_hooks),
            prediction_hooks=validate_hooks(prediction_hooks))

    def _replace(self, **kwds):
        if "mode" in kwds and self.mode != kwds["mode"]:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        return EstimatorSpec(*map(kwds.pop, self._fields, list(self)))


def _in_default_graph(value, what, name):
    if not tf.executing_eagerly() and value.graph is not _v1.get_default_graph():
        raise ValueError(_NOT_DEFAULT_GRAPH.format(what, name))


def _is_tensor(x):
    return isinstance(x, (tf.Tensor, tf.Variable)) or tf.is_tensor(x)


def validate_train_op(train_op, mode):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    if not (isinstance(train_op, tf.Operation) or _is_tensor(train_op)):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op}")
    if isinstance(train_op, tf.Variable):
        train_op = train_op.op
    _in_default_graph(train_op, "train_op", train_op.name)
    return train_op


def validate_loss(loss, mode):
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    if not _is_tensor(loss):
        raise TypeError(f"loss must be Tensor, given: {loss}")
    if loss.shape.num_elements() not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss}")
    if not loss.shape.is_compatible_with(tf.TensorShape([])):
        loss = tf.reshape(loss, [])
    _in_default_graph(loss, "loss", loss.name)
    return loss


def validate_predictions(predictions, mode):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        for key, value in predictions.items():
            if not _is_tensor(value):
                raise TypeError(f"predictions[{key}] must be Tensor, given: {value}")
            _in_default_graph(value, "prediction values", f"{key}: {value.name}")
        return dict(predictions)
    if not _is_tensor(predictions):
        raise TypeError(f"predictions must be Tensor, given: {predictions}")
    _in_default_graph(predictions, "prediction values", predictions.name)
    return predictions


def validate_hooks(hooks):
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, _v1.train.SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
    return hooks


def _is_metric_object(value):
    """A Keras `Metric` (TF 1.15 accepted one updated in model_fn)."""
    return hasattr(value, "update_state") and hasattr(value, "result") and hasattr(value, "variables")


def validate_eval_metric_ops(eval_metric_ops):
    """Dict of name → (value, update_op), Keras Metric objects turned into that pair."""
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops}")
    out = {}
    for key, value in eval_metric_ops.items():
        if _is_metric_object(value):
            updates = list(getattr(value, "updates", None) or [])
            if not updates:
                raise ValueError(f'Please call update_state(...) on the "{value.name}" metric')
            pair = (value.result(), updates[0])
            for variable in value.variables:
                for collection in (_v1.GraphKeys.LOCAL_VARIABLES, _v1.GraphKeys.METRIC_VARIABLES):
                    if variable not in _v1.get_collection(collection):
                        _v1.add_to_collection(collection, variable)
        elif isinstance(value, tuple) and len(value) == 2:
            pair = value
        else:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: {value} "
                            f"for key: {key}")
        for part in tf.nest.flatten(pair):
            _in_default_graph(part, "eval_metric_ops", f"{key}: {part.name}")
        out[key] = pair
    return out


def validate_scaffold(scaffold):
    scaffold = scaffold or _v1.train.Scaffold()
    if not isinstance(scaffold, _v1.train.Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
    return scaffold


__all__ = ["EstimatorSpec", "ModeKeys", "LOSS_METRIC_KEY", "AVERAGE_LOSS_METRIC_KEY"]

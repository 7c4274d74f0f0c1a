"""`tf.estimator.train_and_evaluate` with `TrainSpec`/`EvalSpec`, run locally as TF 1.15 did.

One `train()` call up to `TrainSpec.max_steps`; after every checkpoint the training saves
(the first, at the starting step, excepted) the model is evaluated on `EvalSpec`, at most once
per `throttle_secs`, and once more on the final checkpoint if that one was not evaluated yet.
Returns `(metrics of the last evaluation, [])` (no exporters: see docs/estimator.md).
"""
from __future__ import annotations

import collections
import time

import tensorflow as tf

from tf1clip.errors import ESTIMATOR_GONE, UnsupportedSymbol
from tf1clip.estimator.calls import check_hooks
from tf1clip.estimator.estimator import Estimator

_v1 = tf.compat.v1


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """The training half of train_and_evaluate: input_fn, the global step to stop at, hooks."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        _validate_input_fn(input_fn)
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn=input_fn, max_steps=max_steps, hooks=tuple(check_hooks(hooks)))


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"])):
    """The evaluation half: input_fn, batches per evaluation (None: until input ends), how often."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
                throttle_secs=600):
        _validate_input_fn(input_fn)
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name}")
        if exporters:
            raise UnsupportedSymbol("EvalSpec(exporters=...)", "export from a session with "
                                    "tf.compat.v1.saved_model.Builder after training", ESTIMATOR_GONE)
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(cls, input_fn=input_fn, steps=steps, name=name, hooks=tuple(check_hooks(hooks)),
                               exporters=(), start_delay_secs=start_delay_secs, throttle_secs=throttle_secs)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Train `estimator` per `train_spec`, evaluating per `eval_spec` as checkpoints are saved."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`, given {type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}")
    config = estimator.config
    _v1.logging.info("Start train and evaluate loop. The evaluate will happen after every checkpoint. Checkpoint "
                     "frequency is determined based on RunConfig arguments: save_checkpoints_steps %s or "
                     "save_checkpoints_secs %s.", config.save_checkpoints_steps, config.save_checkpoints_secs)
    listener = _EvaluateOnCheckpoint(estimator, eval_spec)
    estimator.train(input_fn=train_spec.input_fn, max_steps=train_spec.max_steps, hooks=list(train_spec.hooks),
                    saving_listeners=[listener])
    return listener.metrics, []


class _EvaluateOnCheckpoint(_v1.train.CheckpointSaverListener):
    """Evaluate after each checkpoint save, throttled; and at the end on the last checkpoint."""

    def __init__(self, estimator, eval_spec):
        self._estimator = estimator
        self._spec = eval_spec
        self._timer = None
        self._first = True
        self._previous_checkpoint = None
        self.metrics = None

    def begin(self):
        self._timer = _v1.train.SecondOrStepTimer(every_secs=self._spec.throttle_secs)
        self._first = True

    def after_save(self, session, global_step_value):
        del session
        if self._first:  # the checkpoint of the starting step: nothing trained yet
            self._first = False
            return
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            _v1.logging.info("Skip the current checkpoint eval due to throttle secs (%s secs).",
                             self._spec.throttle_secs)

    def end(self, session, global_step_value):
        del session
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value):
        self._timer.update_last_triggered_step(global_step_value)
        checkpoint = self._estimator.latest_checkpoint()
        if not checkpoint or checkpoint == self._previous_checkpoint:
            return
        start = time.time()
        self.metrics = self._estimator.evaluate(input_fn=self._spec.input_fn, steps=self._spec.steps,
                                                name=self._spec.name, checkpoint_path=checkpoint,
                                                hooks=list(self._spec.hooks))
        self._previous_checkpoint = checkpoint
        _v1.logging.info("Evaluation took %.2f s", time.time() - start)


def _validate_input_fn(input_fn):
    if not callable(input_fn):
        raise TypeError(f"`input_fn` must be callable, given: {input_fn}")

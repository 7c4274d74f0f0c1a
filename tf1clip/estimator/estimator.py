"""`tf.estimator.Estimator` (TF 1.15) on `tf.compat.v1` and `MonitoredTrainingSession`.

Each `train`, `evaluate` and `predict` builds a fresh graph: graph seed from
`RunConfig.tf_random_seed`, the global step, then `input_fn`, then `model_fn`. Training runs
`[train_op, loss]` under a `MonitoredTrainingSession` that restores the latest checkpoint in
`model_dir` (so a second `train()` continues from the global step) and saves through a
`CheckpointSaverHook` (at step 0, every `save_checkpoints_steps`/`_secs`, at the end).
`steps` counts from where training resumed, `max_steps` is the global step to stop at.
Evaluation runs TensorFlow's own single-checkpoint loop with the `tf.metrics` of
`eval_metric_ops` plus the mean loss, and writes them to `model_dir/eval[_name]`.

One deliberate difference: a `tf.variable_creator_scope` around a call reaches the model's
variables (TF 1.15's fresh graph did not carry it), so tools that watch variable creation
(`tf1clip parity`) see them.
"""
from __future__ import annotations

import contextlib
import copy
import os

import numpy as np
import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.training import evaluation as tf_evaluation
from tensorflow.python.training import training_util

from tf1clip.errors import ESTIMATOR_GONE, UnsupportedSymbol
from tf1clip.estimator import calls
from tf1clip.estimator import run_config as run_config_lib
from tf1clip.estimator import warm_start
from tf1clip.estimator.spec import LOSS_METRIC_KEY, EstimatorSpec, ModeKeys

_v1 = tf.compat.v1
_EXPORT_HINT = "export from a session with tf.compat.v1.saved_model.Builder, or move the model to Keras and save()"


class Estimator:
    """Trains, evaluates and predicts with a `model_fn`; checkpoints live in `model_dir`."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        self._config = run_config_lib.resolve(config, model_dir)
        self._model_dir = self._config.model_dir
        self._session_config = self._config.session_config
        _v1.logging.info("Using config: %s", self._config)
        if model_fn is None:
            raise ValueError("model_fn must be provided to Estimator.")
        calls.verify_model_fn_args(model_fn, params)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = warm_start.default_settings(warm_start_from)

    # -- properties ------------------------------------------------------------------------
    @property
    def model_dir(self):
        return self._model_dir

    @property
    def config(self):
        return copy.deepcopy(self._config)

    @property
    def params(self):
        return copy.deepcopy(self._params)

    @property
    def model_fn(self):
        """The model_fn bound to this Estimator's params: `fn(features, labels, mode, config)`."""

        def public_model_fn(features, labels, mode, config):
            return self._call_model_fn(features, labels, mode, config)

        return public_model_fn

    def get_variable_value(self, name):
        _check_checkpoint_available(self._model_dir)
        with context.graph_mode():
            return _v1.train.load_variable(self._model_dir, name)

    def get_variable_names(self):
        _check_checkpoint_available(self._model_dir)
        return [name for name, _ in _v1.train.list_variables(self._model_dir)]

    def latest_checkpoint(self):
        return _v1.train.latest_checkpoint(self._model_dir)

    def eval_dir(self, name=None):
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    # -- train ------------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Train until `input_fn` runs out, `steps` more steps, or global step `max_steps`."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= _global_step_in(self._model_dir):
            _v1.logging.info("Skipping training since max_steps has already saved.")
            return self
        hooks = calls.check_hooks(hooks) + self._convert_train_steps_to_hooks(steps, max_steps)
        listeners = calls.check_listeners(saving_listeners)
        with context.graph_mode():  # TF 1.15: also when called eagerly
            loss = self._train_model(input_fn, hooks, listeners)
        _v1.logging.info("Loss for final step: %s.", loss)
        return self

    def _convert_train_steps_to_hooks(self, steps, max_steps):
        if steps is None and max_steps is None:
            return []
        return [_v1.train.StopAtStepHook(steps, max_steps)]

    def _train_model(self, input_fn, hooks, listeners):
        with _fresh_graph() as g, g.device(self._config.device_fn):
            _v1.set_random_seed(self._config.tf_random_seed)
            global_step = self._create_and_assert_global_step(g)
            if global_step is not None:
                training_util._get_or_create_global_step_read(g)  # noqa: SLF001 - TF 1.15 made it here, before input_fn
            features, labels, input_hooks = self._get_features_and_labels_from_input_fn(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self.config)
            global_step = _v1.train.get_global_step(g)
            return self._train_with_estimator_spec(spec, input_hooks, hooks, global_step, listeners)

    def _train_with_estimator_spec(self, spec, input_hooks, hooks, global_step, listeners):
        config = self._config
        if self._warm_start_settings:
            _v1.logging.info("Warm-starting with WarmStartSettings: %s", self._warm_start_settings)
            _v1.train.warm_start(*self._warm_start_settings)
        if not any(x.op.name == "loss" for x in _v1.get_collection(_v1.GraphKeys.SUMMARIES)):
            _v1.summary.scalar("loss", spec.loss)
        _v1.add_to_collection(_v1.GraphKeys.LOSSES, spec.loss)
        worker_hooks = [*input_hooks, *hooks, _v1.train.NanTensorHook(spec.loss)]
        if config.log_step_count_steps is not None:
            worker_hooks.append(_v1.train.LoggingTensorHook({"loss": spec.loss, "step": global_step},
                                                            every_n_iter=config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        if not (spec.scaffold.saver or _v1.get_collection(_v1.GraphKeys.SAVERS)):
            _v1.add_to_collection(_v1.GraphKeys.SAVERS, _v1.train.Saver(
                sharded=True, max_to_keep=config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
                defer_build=True, save_relative_paths=True))
        chief_hooks = []
        saver_hooks = [h for h in [*worker_hooks, *spec.training_chief_hooks]
                       if isinstance(h, _v1.train.CheckpointSaverHook)]
        if (config.save_checkpoints_secs or config.save_checkpoints_steps) and not saver_hooks:
            chief_hooks = [_v1.train.CheckpointSaverHook(
                self._model_dir, save_secs=config.save_checkpoints_secs, save_steps=config.save_checkpoints_steps,
                scaffold=spec.scaffold)]
            saver_hooks = chief_hooks
        if listeners:
            if not saver_hooks:
                raise ValueError("There should be a CheckpointSaverHook to use saving_listeners. Please set one of "
                                 "the RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs.")
            # TF 1.15 added them to the first saver hook, the user's own included.
            known = saver_hooks[0]._listeners  # noqa: SLF001
            known.extend(listener for listener in listeners if listener not in known)
        with _v1.train.MonitoredTrainingSession(
                master=config.master, is_chief=config.is_chief, checkpoint_dir=self._model_dir,
                scaffold=spec.scaffold, hooks=worker_hooks,
                chief_only_hooks=(*chief_hooks, *spec.training_chief_hooks),
                save_checkpoint_secs=0,  # the CheckpointSaverHook above saves
                save_summaries_steps=config.save_summary_steps, config=self._session_config,
                max_wait_secs=config.session_creation_timeout_secs,
                log_step_count_steps=config.log_step_count_steps) as session:
            loss, any_step_done = None, False
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
                any_step_done = True
        if not any_step_done:
            _v1.logging.warning("Training with estimator made no steps. Perhaps input is empty or misspecified.")
        return loss

    # -- evaluate ---------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Metrics of `eval_metric_ops` (plus `loss` and `global_step`) at one checkpoint.

        Runs until `input_fn` runs out or `steps` batches; without a checkpoint in model_dir,
        on freshly initialized variables.
        """
        with context.graph_mode():  # TF 1.15: also when called eagerly
            return self._evaluate(input_fn, steps, hooks, checkpoint_path, name)

    def _evaluate(self, input_fn, steps, hooks, checkpoint_path, name):
        hooks = calls.check_hooks(hooks) + self._convert_eval_steps_to_hooks(steps)
        if not checkpoint_path:
            checkpoint_path = _v1.train.latest_checkpoint(self._model_dir)
            if not checkpoint_path:
                _v1.logging.info("Could not find trained model in model_dir: %s, running initialization to "
                                 "evaluate.", self._model_dir)
        with _fresh_graph() as g:
            _v1.set_random_seed(self._config.tf_random_seed)
            self._create_and_assert_global_step(g)
            features, labels, input_hooks = self._get_features_and_labels_from_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self.config)
            metric_ops = dict(spec.eval_metric_ops)
            if LOSS_METRIC_KEY in metric_ops:
                raise ValueError(f'Metric with name "{LOSS_METRIC_KEY}" is not allowed, because Estimator already '
                                 "defines a default metric with the same name.")
            metric_ops[LOSS_METRIC_KEY] = _v1.metrics.mean(spec.loss)
            update_op, eval_dict = _extract_metric_update_ops(metric_ops)
            self._maybe_warm_start(checkpoint_path)
            if _v1.GraphKeys.GLOBAL_STEP in eval_dict:
                raise ValueError("Metric with name `global_step` is not allowed, because Estimator already defines a "
                                 "default metric with the same name.")
            eval_dict[_v1.GraphKeys.GLOBAL_STEP] = _v1.train.get_global_step(g)
            all_hooks = [*input_hooks, *hooks, *spec.evaluation_hooks]
            scaffold = spec.scaffold
            if scaffold and scaffold.local_init_op:
                tf_evaluation._get_or_create_eval_step()  # noqa: SLF001 - before the local init op groups it
                scaffold = _v1.train.Scaffold(
                    local_init_op=tf.group(scaffold.local_init_op, _v1.train.Scaffold.default_local_init_op()),
                    copy_from_scaffold=scaffold)
            # TensorFlow's own single-checkpoint loop, the one TF 1.15's Estimator ran.
            results = tf_evaluation._evaluate_once(  # noqa: SLF001
                checkpoint_path=checkpoint_path, master=self._config.evaluation_master, scaffold=scaffold,
                eval_ops=update_op, final_ops=eval_dict, hooks=all_hooks, config=self._session_config)
        _write_dict_to_summary(self.eval_dir(name), results, results[_v1.GraphKeys.GLOBAL_STEP])
        return results

    def _convert_eval_steps_to_hooks(self, steps):
        if steps is None:
            return []
        if steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        return [tf_evaluation._StopAfterNEvalsHook(num_evals=steps)]  # noqa: SLF001

    # -- predict ----------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yield predictions (one dict per example when predictions is a dict) until input_fn ends."""
        with context.graph_mode():  # TF 1.15: also when called eagerly
            yield from self._predict(input_fn, predict_keys, hooks, checkpoint_path, yield_single_examples)

    def _predict(self, input_fn, predict_keys, hooks, checkpoint_path, yield_single_examples):
        hooks = calls.check_hooks(hooks)
        if not checkpoint_path:
            checkpoint_path = _v1.train.latest_checkpoint(self._model_dir)
        if not checkpoint_path:
            _v1.logging.info("Could not find trained model in model_dir: %s, running initialization to predict.",
                             self._model_dir)
        with _fresh_graph() as g:
            _v1.set_random_seed(self._config.tf_random_seed)
            self._create_and_assert_global_step(g)
            features, _, input_hooks = calls.parse_input_fn_result(
                self._call_input_fn(input_fn, ModeKeys.PREDICT))
            self._validate_features_in_predict_input(features)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self.config)
            self._maybe_warm_start(checkpoint_path)
            predictions = _extract_keys(spec.predictions, predict_keys)
            creator = _v1.train.ChiefSessionCreator(checkpoint_filename_with_path=checkpoint_path,
                                                    master=self._config.master, scaffold=spec.scaffold,
                                                    config=self._session_config)
            with _v1.train.MonitoredSession(session_creator=creator,
                                            hooks=[*input_hooks, *hooks, *spec.prediction_hooks]) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(predictions, dict):
                        yield from values
                    else:
                        for i in range(_extract_batch_length(values)):
                            yield {key: value[i] for key, value in values.items()}

    def _validate_features_in_predict_input(self, features):
        if not calls.has_dataset_or_queue_runner(features):
            _v1.logging.warning("Input graph does not use tf.data.Dataset or contain a QueueRunner. That means "
                                "predict yields forever. This is probably a mistake.")

    # -- export: not provided ----------------------------------------------------------------
    def export_saved_model(self, *args, **kwargs):
        raise UnsupportedSymbol("Estimator.export_saved_model", _EXPORT_HINT, ESTIMATOR_GONE)

    def export_savedmodel(self, *args, **kwargs):
        raise UnsupportedSymbol("Estimator.export_savedmodel", _EXPORT_HINT, ESTIMATOR_GONE)

    def experimental_export_all_saved_models(self, *args, **kwargs):
        raise UnsupportedSymbol("Estimator.experimental_export_all_saved_models", _EXPORT_HINT, ESTIMATOR_GONE)

    # -- pieces subclasses (TPUEstimator) adjust ----------------------------------------------
    def _create_global_step(self, graph):
        return _v1.train.create_global_step(graph)

    def _create_and_assert_global_step(self, graph):
        step = self._create_global_step(graph)
        assert step is _v1.train.get_global_step()
        assert step.dtype.is_integer
        return step

    def _call_input_fn(self, input_fn, mode):
        return calls.call_input_fn(input_fn, mode, self.params, self.config)

    def _get_features_and_labels_from_input_fn(self, input_fn, mode):
        return calls.parse_input_fn_result(self._call_input_fn(input_fn, mode))

    def _call_model_fn(self, features, labels, mode, config):
        return calls.call_model_fn(self._model_fn, features, labels, mode, self.params, config, EstimatorSpec)

    def _maybe_warm_start(self, checkpoint_path):
        if not checkpoint_path and self._warm_start_settings:
            _v1.logging.info("Warm-starting with WarmStartSettings: %s", self._warm_start_settings)
            _v1.train.warm_start(*self._warm_start_settings)


# ---- helpers -----------------------------------------------------------------------------------
@contextlib.contextmanager
def _fresh_graph():
    """A new default graph that keeps the caller's variable creator scopes (see the module doc)."""
    outer = _v1.get_default_graph()
    graph = tf.Graph()
    graph._variable_creator_stack = list(outer._variable_creator_stack)  # noqa: SLF001
    with graph.as_default():
        yield graph


def _global_step_in(model_dir) -> int:
    try:
        reader = _v1.train.NewCheckpointReader(_v1.train.latest_checkpoint(model_dir))
        return int(reader.get_tensor(_v1.GraphKeys.GLOBAL_STEP))
    except Exception:  # noqa: BLE001 - no checkpoint yet: step 0, as TF 1.15
        return 0


def _check_checkpoint_available(model_dir):
    if not _v1.train.latest_checkpoint(model_dir):
        raise ValueError(f"Could not find trained model in model_dir: {model_dir}.")


def _extract_metric_update_ops(metric_ops):
    """(one group of every update op, {name: value}); sorted so the graph is the same each time."""
    update_ops, values = [], {}
    for name, (value, update) in sorted(metric_ops.items()):
        values[name] = value
        update_ops.append(update)
    return (tf.group(*update_ops) if update_ops else None), values


def _extract_keys(predictions, predict_keys):
    if not predict_keys:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    chosen = {key: value for key, value in predictions.items() if key in predict_keys}
    if not chosen:
        raise ValueError(f"Expected to run at least one output from {list(predictions)}, provided {predict_keys}.")
    return chosen


def _extract_batch_length(values):
    length = None
    for key, value in values.items():
        length = length or value.shape[0]
        if value.shape[0] != length:
            raise ValueError(f"Batch length of predictions should be same. {key} has different batch length than "
                             "others.")
    return length


def _write_dict_to_summary(output_dir, dictionary, global_step):
    """The evaluation results as scalar summaries in `output_dir` (TensorBoard's eval curve)."""
    _v1.logging.info("Saving dict for global step %d: %s", global_step,
                     ", ".join(f"{k} = {v}" for k, v in sorted(dictionary.items()) if not isinstance(v, bytes)))
    writer = _v1.summary.FileWriterCache.get(output_dir)
    summary = _v1.Summary()
    for key, value in dictionary.items():
        if value is None or key == "global_step":
            continue
        if isinstance(value, (np.floating, float, np.integer, int)):
            summary.value.add(tag=key, simple_value=float(value))
        elif isinstance(value, np.ndarray):
            entry = summary.value.add()
            entry.tag = entry.node_name = key
            entry.tensor.CopyFrom(tf.make_tensor_proto(value))
    writer.add_summary(summary, global_step)
    writer.flush()

"""`TPUEstimator` and its configuration as TF 1.15 ran them with `use_tpu=False`: on the CPU.

What BERT-style code relies on, kept: `input_fn` and `model_fn` must take `params`, and get
`params["batch_size"]` (the train/eval/predict batch size of the mode, when given) and, for
`model_fn`, `params["use_tpu"] = False`; a `TPUEstimatorSpec` becomes an `EstimatorSpec`
(`scaffold_fn()` called, `eval_metrics=(metric_fn, tensors)` called with the tensors,
`host_call` run every step); the global step is an int64 resource variable; the loss log is
replaced by `global_step/sec` and `examples/sec`, every ceil(log_step_count_steps /
iterations_per_loop) steps. `use_tpu=True` stops with one line: there is no TPU here.
"""
from __future__ import annotations

import collections
import math
import re

import tensorflow as tf

from tf1clip.errors import ESTIMATOR_GONE, UnsupportedSymbol, refuse_unknown
from tf1clip.estimator import calls
from tf1clip.estimator import run_config as run_config_lib
from tf1clip.estimator.estimator import Estimator
from tf1clip.estimator.spec import EstimatorSpec, ModeKeys

_v1 = tf.compat.v1
_BATCH_SIZE_KEY = "batch_size"
_USE_TPU_KEY = "use_tpu"
_RESERVED_PARAMS_KEYS = (_BATCH_SIZE_KEY, "context")
_NO_TPU = "TensorFlow here runs on CPU/GPU: pass use_tpu=False (TPUEstimator then trains on the CPU as in TF 1.15)"
_ITERATIONS = re.compile(r"^(?P<value>[1-9]\d*)((?P<suffix>[s|m|h])$|$)")


class InputPipelineConfig:
    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


class TPUConfig(collections.namedtuple("TPUConfig", [
        "iterations_per_loop", "num_shards", "num_cores_per_replica", "per_host_input_for_training",
        "tpu_job_name", "initial_infeed_sleep_secs", "input_partition_dims", "eval_training_input_configuration",
        "experimental_host_call_every_n_steps"])):
    """TPU settings; off the TPU only `iterations_per_loop` matters (the logging interval)."""

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None, initial_infeed_sleep_secs=None,
                input_partition_dims=None, eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1):
        parse_iterations_per_loop(iterations_per_loop)
        if per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        elif per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        return super().__new__(cls, iterations_per_loop, num_shards, num_cores_per_replica,
                               per_host_input_for_training, tpu_job_name, initial_infeed_sleep_secs,
                               input_partition_dims, eval_training_input_configuration,
                               experimental_host_call_every_n_steps)


def parse_iterations_per_loop(iterations_per_loop):
    """(value, 'count' | 'seconds') of TPUConfig.iterations_per_loop (`1000`, `60s`, `10m`, `1h`)."""
    match = _ITERATIONS.match(str(iterations_per_loop))
    if match is None:
        raise ValueError("Invalid TPUConfig `iterations_per_loop` value. Value must be positive integer value or "
                         "time-based value `<N><s|m|h>`; examples of valid values: `3600s`, `60m`, `1h`.")
    value = int(match.group("value")) * {"m": 60, "h": 3600}.get(match.group("suffix"), 1)
    return value, "seconds" if match.group("suffix") in ("h", "m", "s") else "count"


class RunConfig(run_config_lib.RunConfig):
    """`tf.contrib.tpu.RunConfig`: a RunConfig with a `tpu_config`, a master and a cluster."""

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None, **kwargs):
        super().__init__(**kwargs)
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        if master is not None:
            if cluster is not None:
                raise ValueError("Both master and cluster are set.")
            self._master = master
        elif cluster:
            self._master = cluster.master()
        self._evaluation_master = evaluation_master if evaluation_master is not None else self._master

    tpu_config = property(lambda self: self._tpu_config)
    cluster = property(lambda self: self._cluster)

    def replace(self, **kwargs):
        tpu_config = kwargs.pop("tpu_config", None)
        new = super().replace(**kwargs)
        if tpu_config is not None:
            new._tpu_config = tpu_config
        return new


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs", "scaffold_fn", "host_call",
        "training_hooks", "evaluation_hooks", "prediction_hooks"])):
    """What a TPUEstimator model_fn returns; `as_estimator_spec()` is its CPU form."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None, export_outputs=None,
                scaffold_fn=None, host_call=None, training_hooks=None, evaluation_hooks=None, prediction_hooks=None):
        for name, call in (("eval_metrics", eval_metrics), ("host_call", host_call)):
            if call is not None:
                _validate_host_call(name, call)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics, export_outputs, scaffold_fn,
                               host_call, tuple(training_hooks or ()), tuple(evaluation_hooks or ()),
                               tuple(prediction_hooks or ()))

    def as_estimator_spec(self):
        """The EstimatorSpec TF 1.15 made of it on the CPU."""
        eval_metric_ops = _call_host_fn(self.eval_metrics) if self.eval_metrics is not None else None
        hooks = (_HostCallHook(_call_host_fn(self.host_call)),) if self.host_call is not None else ()
        return EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss, train_op=self.train_op,
            eval_metric_ops=eval_metric_ops, export_outputs=self.export_outputs,
            scaffold=self.scaffold_fn() if self.scaffold_fn else None,
            training_hooks=self.training_hooks + hooks, evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks)


class TPUEstimator(Estimator):
    """Estimator that runs TPU model code on the CPU (`use_tpu=False`)."""

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True, train_batch_size=None,
                 eval_batch_size=None, predict_batch_size=None, batch_axis=None, eval_on_tpu=True,
                 export_to_tpu=True, export_to_cpu=True, warm_start_from=None, embedding_config_spec=None,
                 export_saved_model_api_version=None):
        if config is None or not isinstance(config, RunConfig):
            raise ValueError("`config` must be provided with type `tpu_config.RunConfig`")
        if params is not None and any(k in params for k in _RESERVED_PARAMS_KEYS):
            raise ValueError(f"{list(_RESERVED_PARAMS_KEYS)} are reserved keys but existed in params {params}.")
        if use_tpu:
            raise UnsupportedSymbol("TPUEstimator(use_tpu=True)", _NO_TPU, ESTIMATOR_GONE)
        if embedding_config_spec is not None:
            raise UnsupportedSymbol("TPUEstimator(embedding_config_spec=...)", _NO_TPU, ESTIMATOR_GONE)
        log_every = config.log_step_count_steps
        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config.replace(log_step_count_steps=None),
                         params=params or {}, warm_start_from=warm_start_from)
        value, unit = parse_iterations_per_loop(self._config.tpu_config.iterations_per_loop)
        self._log_every_n_secs = value if unit == "seconds" else None
        self._log_every_n_steps = None if unit == "seconds" or log_every is None \
            else int(math.ceil(float(log_every) / value))
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}

    def _create_global_step(self, graph):
        if _v1.train.get_global_step(graph) is not None:
            raise ValueError('"global_step" already exists.')
        with graph.as_default() as g, g.name_scope(None):
            return _v1.get_variable(
                _v1.GraphKeys.GLOBAL_STEP, shape=[], dtype=tf.int64, initializer=_v1.zeros_initializer(),
                trainable=False, use_resource=True,
                collections=[_v1.GraphKeys.GLOBAL_VARIABLES, _v1.GraphKeys.GLOBAL_STEP])

    def _call_input_fn(self, input_fn, mode):
        args = calls.fn_args(input_fn)
        if "params" not in args:
            raise ValueError(f"input_fn ({input_fn}) does not include params argument, required by TPUEstimator to "
                             'pass batch size as params["batch_size"]')
        kwargs = {"params": self.params}
        if "config" in args:
            kwargs["config"] = self.config
        if "mode" in args:
            kwargs["mode"] = mode
        if self._batch_sizes.get(mode) is not None:
            _add_item_to_params(kwargs["params"], _BATCH_SIZE_KEY, self._batch_sizes[mode])
        with tf.device("/device:CPU:0"):
            return input_fn(**kwargs)

    def _call_model_fn(self, features, labels, mode, config):
        if "params" not in calls.fn_args(self._model_fn):
            raise ValueError(f"model_fn ({self._model_fn}) does not include params argument, required by "
                             "TPUEstimator to pass batch size as params['batch_size']")
        params = self.params
        if self._batch_sizes.get(mode) is not None:
            _add_item_to_params(params, _BATCH_SIZE_KEY, self._batch_sizes[mode])
        _add_item_to_params(params, _USE_TPU_KEY, False)
        _v1.logging.info("Running %s on CPU", mode)
        spec = calls.call_model_fn(self._model_fn, features, labels, mode, params, config,
                                   (EstimatorSpec, TPUEstimatorSpec))
        if isinstance(spec, TPUEstimatorSpec):
            spec = spec.as_estimator_spec()
        if self._log_every_n_steps is not None or self._log_every_n_secs is not None:
            examples = ExamplesPerSecondHook(self._batch_sizes.get(mode),
                                             output_dir=self.model_dir if config.save_summary_steps else None,
                                             every_n_steps=self._log_every_n_steps,
                                             every_n_secs=self._log_every_n_secs)
            spec = spec._replace(training_hooks=spec.training_hooks + (examples,))
        return spec


class ExamplesPerSecondHook(_v1.train.StepCounterHook):
    """Logs (and writes as summaries) global_step/sec and examples/sec."""

    def __init__(self, batch_size, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        self._batch_size = batch_size
        super().__init__(every_n_steps=every_n_steps, every_n_secs=every_n_secs, output_dir=output_dir,
                         summary_writer=summary_writer)

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):  # StepCounterHook's extension point
        steps_per_sec = elapsed_steps / elapsed_time
        examples_per_sec = (self._batch_size or 0) * steps_per_sec
        if self._summary_writer is not None:
            self._summary_writer.add_summary(_v1.Summary(value=[
                _v1.Summary.Value(tag="global_step/sec", simple_value=steps_per_sec)]), global_step)
            self._summary_writer.add_summary(_v1.Summary(value=[
                _v1.Summary.Value(tag="examples/sec", simple_value=examples_per_sec)]), global_step)
        _v1.logging.info("global_step/sec: %g", steps_per_sec)
        _v1.logging.info("examples/sec: %g", examples_per_sec)


class _HostCallHook(_v1.train.SessionRunHook):
    """Runs a TPUEstimatorSpec's host_call outputs with every step (its CPU form)."""

    def __init__(self, tensors):
        self._tensors = tensors

    def before_run(self, run_context):
        return _v1.train.SessionRunArgs(self._tensors)


def _validate_host_call(name, host_call):
    if not isinstance(host_call, (tuple, list)):
        raise ValueError(f"{name} should be tuple or list")
    if len(host_call) != 2:
        raise ValueError(f"{name} should have two elements.")
    if not callable(host_call[0]):
        raise TypeError(f"{name}[0] should be callable.")
    if not isinstance(host_call[1], (tuple, list, dict)):
        raise ValueError(f"{name}[1] should be tuple or list, or dict.")


def _call_host_fn(host_call):
    fn, tensors = host_call
    return fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)


def _add_item_to_params(params, key, value):
    if hasattr(params, "set_hparam"):  # an HParams object
        if key in params:
            params.set_hparam(key, value)
        else:
            params.add_hparam(key, value)
    else:
        params[key] = value


__getattr__ = refuse_unknown("tf.estimator.tpu", ESTIMATOR_GONE, default_hint=_NO_TPU)

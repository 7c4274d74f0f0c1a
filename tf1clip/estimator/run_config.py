"""`tf.estimator.RunConfig` (TF 1.15): where checkpoints go, how often, the seed, the session.

Single-machine training only: a `TF_CONFIG` that describes a cluster is refused with one line
(tf1clip runs the whole job in this process).
"""
from __future__ import annotations

import copy
import json
import os

import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from tf1clip.errors import ESTIMATOR_GONE, UnsupportedSymbol

_USE_DEFAULT = object()

# The properties `RunConfig.replace` may change (TF 1.15's _DEFAULT_REPLACEABLE_LIST).
REPLACEABLE = (
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute", "device_fn",
    "protocol", "eval_distribute", "experimental_distribute", "experimental_max_worker_delay_secs",
    "session_creation_timeout_secs",
)


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def get_default_session_config():
    """TF 1.15's default: soft placement, one round of Grappler's meta optimizer."""
    rewrite = rewriter_config_pb2.RewriterConfig(meta_optimizer_iterations=rewriter_config_pb2.RewriterConfig.ONE)
    return tf.compat.v1.ConfigProto(allow_soft_placement=True,
                                    graph_options=tf.compat.v1.GraphOptions(rewrite_options=rewrite))


class RunConfig:
    """The configuration of an Estimator run, with TF 1.15's defaults.

    Checkpoints every 600 s unless `save_checkpoints_steps` is given (not both), 5 kept,
    summaries and the loss log every 100 steps, no graph seed unless `tf_random_seed`.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, train_distribute=None, device_fn=None, protocol=None,
                 eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.")
        tf_config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
        if tf_config.get("cluster"):
            raise UnsupportedSymbol("RunConfig with a TF_CONFIG cluster", "unset TF_CONFIG to train in this "
                                    "process, or move the job to tf.distribute", ESTIMATOR_GONE)
        for name, strategy in (("train_distribute", train_distribute), ("eval_distribute", eval_distribute),
                               ("experimental_distribute", experimental_distribute)):
            if strategy is not None:
                raise UnsupportedSymbol(f"RunConfig({name}=...)", "drop the strategy (tf1clip's Estimator "
                                        "trains on one device) or move the model to Keras + tf.distribute",
                                        ESTIMATOR_GONE)
        self._model_dir = _model_dir(tf_config, model_dir)
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = self._eval_distribute = self._experimental_distribute = None
        self._device_fn = device_fn
        self._protocol = protocol
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        # One local worker (TF 1.15 without a cluster in TF_CONFIG).
        self._service = None
        self._cluster_spec = tf.train.ClusterSpec({})
        self._task_type = TaskType.WORKER
        self._task_id = 0
        self._master = tf_config.get("session_master", "")
        self._evaluation_master = tf_config.get("eval_session_master", "")
        self._is_chief = True
        self._num_ps_replicas = 0
        self._num_worker_replicas = 1
        self._global_id_in_cluster = 0
        _validate(self)

    def replace(self, **kwargs):
        """A copy with the given properties changed (only those TF 1.15 allowed)."""
        new = copy.deepcopy(self)
        for key, value in kwargs.items():
            if key not in REPLACEABLE:
                raise ValueError(f"Replacing {key} is not supported. Allowed properties are {list(REPLACEABLE)}.")
            setattr(new, "_" + key, value)
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" in kwargs \
                and kwargs["save_checkpoints_steps"] is not None and kwargs["save_checkpoints_secs"] is not None:
            raise ValueError("`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.")
        if kwargs.get("save_checkpoints_steps") is not None:
            new._save_checkpoints_secs = None
        if kwargs.get("save_checkpoints_secs") is not None:
            new._save_checkpoints_steps = None
        _validate(new)
        return new

    def __repr__(self):
        fields = ", ".join(f"{k[1:]}={v!r}" for k, v in sorted(vars(self).items()) if k[1:] in REPLACEABLE)
        return f"RunConfig({fields})"


def _property(name):
    return property(lambda self: getattr(self, "_" + name))


for _name in (*REPLACEABLE, "service", "cluster_spec", "task_type", "task_id", "master", "evaluation_master",
              "is_chief", "num_ps_replicas", "num_worker_replicas", "global_id_in_cluster"):
    setattr(RunConfig, _name, _property(_name))


def _model_dir(tf_config, model_dir):
    if model_dir is not None:
        model_dir = os.fspath(model_dir)
    if model_dir == "":
        raise ValueError("model_dir should be non-empty.")
    from_env = tf_config.get("model_dir")
    if from_env == "":
        raise ValueError("model_dir in TF_CONFIG should be non-empty.")
    if from_env and model_dir and from_env != model_dir:
        raise ValueError("`model_dir` provided in RunConfig construct, if set, must have the same value as the "
                         f"model_dir in TF_CONFIG. model_dir: {model_dir}\nTF_CONFIG[\"model_dir\"]: {from_env}.\n")
    return model_dir or from_env


def _validate(config):
    checks = (
        ("save_summary_steps", lambda v: v >= 0, "save_summary_steps should be >= 0"),
        ("save_checkpoints_steps", lambda v: v >= 0, "save_checkpoints_steps should be >= 0"),
        ("save_checkpoints_secs", lambda v: v >= 0, "save_checkpoints_secs should be >= 0"),
        ("session_config", lambda v: isinstance(v, tf.compat.v1.ConfigProto),
         "session_config must be instance of ConfigProto"),
        ("keep_checkpoint_max", lambda v: v >= 0, "keep_checkpoint_max should be >= 0"),
        ("keep_checkpoint_every_n_hours", lambda v: v > 0, "keep_checkpoint_every_n_hours should be > 0"),
        ("log_step_count_steps", lambda v: v >= 0, "log_step_count_steps should be >= 0"),
        ("tf_random_seed", lambda v: isinstance(v, int), "tf_random_seed must be integer."),
        ("session_creation_timeout_secs", lambda v: v > 0, "session_creation_timeout_secs should be > 0"),
        ("device_fn", callable, "device_fn must be callable with exactly one argument \"op\"."),
    )
    for name, ok, message in checks:
        value = getattr(config, "_" + name)
        if value is not None and not ok(value):
            raise ValueError(message)


def resolve(config, model_dir):
    """The Estimator's config: model_dir and session_config filled in as TF 1.15 did."""
    import tempfile

    if config is None:
        config = RunConfig()
        tf.compat.v1.logging.info("Using default config.")
    if not isinstance(config, RunConfig):
        raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
    if config.session_config is None:
        config = config.replace(session_config=get_default_session_config())
    if model_dir is not None:
        model_dir = os.fspath(model_dir)
        if config.model_dir is not None and config.model_dir != model_dir:
            raise ValueError("`model_dir` are set both in constructor and `RunConfig`, but with different values. "
                             f"In constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' ")
    if model_dir:
        config = config.replace(model_dir=model_dir)
    elif config.model_dir is None:
        model_dir = tempfile.mkdtemp()
        tf.compat.v1.logging.warning("Using temporary folder as model directory: %s", model_dir)
        config = config.replace(model_dir=model_dir)
    return config

"""`tf.estimator` (TF 1.15) for TF 2.21, which ships no Estimator: `import tf1clip.estimator`.

Provided, with TF 1.15's semantics (docs/estimator.md): `Estimator` with a `model_fn`,
`EstimatorSpec`, `ModeKeys`, `RunConfig`, `train_and_evaluate` with `TrainSpec`/`EvalSpec`,
`inputs.numpy_input_fn`/`pandas_input_fn`, `WarmStartSettings`, the session-run hooks
tf.estimator re-exported (TensorFlow's own, from `tf.compat.v1.train`), and `tpu`
(`TPUEstimator` on the CPU). Anything else, canned estimators and export included, stops
with one line naming it. Importing this module creates no graph ops.
"""
from __future__ import annotations

import tensorflow as _tf

from tf1clip.errors import ESTIMATOR_GONE, refuse_unknown
from tf1clip.estimator import inputs, tpu  # noqa: F401 - tf.estimator.inputs / tf.estimator.tpu
from tf1clip.estimator.estimator import Estimator
from tf1clip.estimator.run_config import RunConfig
from tf1clip.estimator.spec import EstimatorSpec, ModeKeys
from tf1clip.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from tf1clip.estimator.warm_start import VocabInfo, WarmStartSettings

_train = _tf.compat.v1.train
# The hooks TF 1.15 exported as tf.estimator.X are tf.compat.v1.train.X in TF 2.21: the same classes.
CheckpointSaverHook = _train.CheckpointSaverHook
CheckpointSaverListener = _train.CheckpointSaverListener
FeedFnHook = _train.FeedFnHook
FinalOpsHook = _train.FinalOpsHook
GlobalStepWaiterHook = _train.GlobalStepWaiterHook
LoggingTensorHook = _train.LoggingTensorHook
NanLossDuringTrainingError = _train.NanLossDuringTrainingError
NanTensorHook = _train.NanTensorHook
ProfilerHook = _train.ProfilerHook
SecondOrStepTimer = _train.SecondOrStepTimer
SessionRunArgs = _train.SessionRunArgs
SessionRunContext = _train.SessionRunContext
SessionRunHook = _train.SessionRunHook
SessionRunValues = _train.SessionRunValues
StepCounterHook = _train.StepCounterHook
StopAtStepHook = _train.StopAtStepHook
SummarySaverHook = _train.SummarySaverHook

_CANNED = "write a model_fn for tf.estimator.Estimator, or build the model in Keras"
_EXPORT = "export from a session with tf.compat.v1.saved_model.Builder, or move the model to Keras and save()"
_HINTS = {name: _CANNED for name in (
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BoostedTreesClassifier",
    "BoostedTreesRegressor", "DNNClassifier", "DNNEstimator", "DNNRegressor", "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator", "DNNLinearCombinedRegressor", "KMeansClustering", "LinearClassifier",
    "LinearEstimator", "LinearRegressor", "RNNClassifier", "RNNEstimator", "Head", "MultiHead",
    "BinaryClassHead", "MultiClassHead", "MultiLabelHead", "RegressionHead", "LogisticRegressionHead",
    "PoissonRegressionHead", "add_metrics", "classifier_parse_example_spec", "regressor_parse_example_spec")}
_HINTS.update({name: _EXPORT for name in ("export", "Exporter", "FinalExporter", "LatestExporter", "BestExporter")})
_HINTS["experimental"] = "write the hook (a tf.compat.v1.train.SessionRunHook) in your script"
_HINTS["model_to_estimator"] = "train the Keras model with fit(), or write a model_fn around it"

__getattr__ = refuse_unknown("tf.estimator", ESTIMATOR_GONE, _HINTS)

__all__ = [
    "CheckpointSaverHook", "CheckpointSaverListener", "Estimator", "EstimatorSpec", "EvalSpec", "FeedFnHook",
    "FinalOpsHook", "GlobalStepWaiterHook", "LoggingTensorHook", "ModeKeys", "NanLossDuringTrainingError",
    "NanTensorHook", "ProfilerHook", "RunConfig", "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext",
    "SessionRunHook", "SessionRunValues", "StepCounterHook", "StopAtStepHook", "SummarySaverHook", "TrainSpec",
    "VocabInfo", "WarmStartSettings", "inputs", "tpu", "train_and_evaluate",
]

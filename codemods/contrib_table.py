"""tf.contrib symbol → what stands in for it on TF 2.21, as data (one row, one fact).

A TensorFlow target (`tensorflow.compat.v1...`) is used only where TF 1.15's contrib name was
the very same object as a core one (contrib re-exported it), so the numbers cannot change.
Everything else goes to the tf1clip runtime (`tf1clip...`), which mirrors
`tensorflow.contrib.<sub>`; the report says which file needs it. A contrib name that is in
neither column is left in place and reported for a human.

tests/test_codemod_tables.py proves each row: the TensorFlow target exists in TF 2.21, the
runtime target exists in tf1clip.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Row:
    old: str              # qualified TF 1.15 name
    new: str              # qualified replacement
    why: str              # one line for the report
    module: bool = False  # a module row also maps every name under it (old.x → new.x)
    imports: Optional[str] = None  # the module to import, when not the one right above `new`

    @property
    def runtime(self) -> bool:
        return self.new.startswith("tf1clip")

    @property
    def import_module(self) -> str:
        """The module to import so that `new` resolves as a dotted name."""
        if self.imports:
            return self.imports
        if self.module:
            return self.new
        if self.new.startswith("tensorflow.compat.v1."):
            return "tensorflow.compat.v1"
        return self.new.rpartition(".")[0]


def lookup(rows: "dict[str, Row]", qname: str) -> Optional[tuple[Row, str]]:
    """The row for `qname` (exact, or the longest module row above it) and the new name."""
    row = rows.get(qname)
    if row is not None:
        return row, row.new
    parts = qname.split(".")
    for i in range(len(parts) - 1, 0, -1):
        row = rows.get(".".join(parts[:i]))
        if row is not None and row.module:
            return row, ".".join([row.new, *parts[i:]])
    return None


_SAME = "TF 1.15's contrib name was this same core object"
_RUNTIME = "tf.contrib is gone in TF 2 and nothing in TF 2.21 stands in: tf1clip runtime"

_TF_ROWS = {
    # tf.contrib.rnn re-exported tensorflow.python.ops.rnn_cell (TF 1.15 contrib/rnn/__init__.py).
    "rnn.RNNCell": "nn.rnn_cell.RNNCell",
    "rnn.BasicRNNCell": "nn.rnn_cell.BasicRNNCell",
    "rnn.BasicLSTMCell": "nn.rnn_cell.BasicLSTMCell",
    "rnn.LSTMCell": "nn.rnn_cell.LSTMCell",
    "rnn.GRUCell": "nn.rnn_cell.GRUCell",
    "rnn.MultiRNNCell": "nn.rnn_cell.MultiRNNCell",
    "rnn.LSTMStateTuple": "nn.rnn_cell.LSTMStateTuple",
    "rnn.DropoutWrapper": "nn.rnn_cell.DropoutWrapper",
    "rnn.ResidualWrapper": "nn.rnn_cell.ResidualWrapper",
    "rnn.DeviceWrapper": "nn.rnn_cell.DeviceWrapper",
    "rnn.static_rnn": "nn.static_rnn",
    "rnn.static_bidirectional_rnn": "nn.static_bidirectional_rnn",
    "rnn.static_state_saving_rnn": "nn.static_state_saving_rnn",
    # tf.contrib.framework's global-step helpers were thin deprecated aliases of training_util.
    "framework.get_global_step": "train.get_global_step",
    "framework.get_or_create_global_step": "train.get_or_create_global_step",
    "framework.create_global_step": "train.create_global_step",
    "framework.is_tensor": "is_tensor",
    "framework.sort": "sort",
    "framework.argsort": "argsort",
    "framework.nest.flatten": "nest.flatten",
    "framework.nest.map_structure": "nest.map_structure",
    "framework.nest.pack_sequence_as": "nest.pack_sequence_as",
    "framework.nest.assert_same_structure": "nest.assert_same_structure",
    "framework.load_variable": "train.load_variable",
    "framework.list_variables": "train.list_variables",
    "util.constant_value": "get_static_value",
    "framework.nest.is_sequence": "nest.is_nested",
}
# TF 1.15's contrib.data kept these as deprecated wrappers calling the tf.data.experimental
# function of the same name with the same arguments.
_TF_WRAPPED_ROWS = {f"data.{name}": f"data.experimental.{name}" for name in (
    "map_and_batch", "parallel_interleave", "group_by_window", "shuffle_and_repeat", "bucket_by_sequence_length",
    "unbatch", "ignore_errors", "prefetch_to_device", "copy_to_device", "scan", "sample_from_datasets",
    "choose_from_datasets", "get_single_element", "rejection_resample", "dense_to_sparse_batch", "Counter",
    "CsvDataset", "make_csv_dataset", "make_batched_features_dataset", "TFRecordWriter", "enumerate_dataset",
    "get_next_as_optional", "Reducer", "group_by_reducer", "SqlDataset", "RandomDataset")}
_WRAPPED = "TF 1.15's contrib name was a deprecated wrapper calling this core function with the same arguments"

# What the tf1clip runtime provides under tf1clip.contrib.<sub> (mirroring tf.contrib.<sub>).
_RUNTIME_ROWS = {
    "estimator": ["clip_gradients_by_norm"],
    "layers": [
        "optimize_loss",
        "xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer",
        "l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer",
        "apply_regularization",
        # tf-slim's layers (tf.contrib.layers re-exported them in TF 1.15)
        "avg_pool2d", "avg_pool3d", "batch_norm", "bias_add", "conv1d", "conv2d",
        "conv2d_in_plane", "conv2d_transpose", "conv3d", "conv3d_transpose", "convolution",
        "convolution1d", "convolution2d", "convolution2d_in_plane", "convolution2d_transpose",
        "convolution3d", "convolution3d_transpose", "dropout", "elu", "flatten",
        "fully_connected", "gdn", "group_norm", "instance_norm", "layer_norm", "linear",
        "max_pool2d", "max_pool3d", "maxout", "one_hot_encoding", "pool", "relu", "relu6",
        "repeat", "separable_conv2d", "separable_convolution2d", "softmax", "spatial_softmax",
        "stack", "unit_norm",
    ],
    "framework": [
        "arg_scope", "add_arg_scope", "get_variables", "get_model_variables",
        "get_trainable_variables", "get_local_variables", "get_variables_to_restore",
        "get_variables_by_name", "get_variables_by_suffix", "get_unique_variable",
        "model_variable", "variable", "local_variable", "global_variable",
        "add_model_variable", "assign_from_checkpoint", "assign_from_checkpoint_fn",
        "assign_from_values", "assign_from_values_fn", "filter_variables",
    ],
    "training": ["clip_gradient_norms", "multiply_gradients", "create_train_op",
                 "add_gradients_summaries", "HParams"],
    # TPUEstimator code run with use_tpu=False (tf1clip.estimator.tpu); the resolver refuses a TPU.
    "tpu": ["TPUEstimator", "TPUEstimatorSpec", "RunConfig", "TPUConfig", "InputPipelineConfig",
            "CrossShardOptimizer"],
    "cluster_resolver": ["TPUClusterResolver"],
    "seq2seq": ["sequence_loss", "Decoder", "BasicDecoder", "BasicDecoderOutput", "dynamic_decode", "Helper",
                "TrainingHelper", "GreedyEmbeddingHelper", "SampleEmbeddingHelper", "InferenceHelper", "CustomHelper",
                "AttentionMechanism", "LuongAttention", "BahdanauAttention", "AttentionWrapper",
                "AttentionWrapperState", "hardmax", "tile_batch", "BeamSearchDecoder", "BeamSearchDecoderOutput",
                "BeamSearchDecoderState", "FinalBeamSearchDecoderOutput", "gather_tree"],
    "legacy_seq2seq": ["rnn_decoder", "basic_rnn_seq2seq", "tied_rnn_seq2seq", "embedding_rnn_decoder",
                       "embedding_rnn_seq2seq", "attention_decoder", "embedding_attention_decoder",
                       "embedding_attention_seq2seq", "sequence_loss_by_example", "sequence_loss",
                       "model_with_buckets"],
    "rnn": ["LSTMBlockCell", "GRUBlockCell", "LayerNormBasicLSTMCell", "EmbeddingWrapper", "InputProjectionWrapper",
            "OutputProjectionWrapper", "stack_bidirectional_dynamic_rnn", "stack_bidirectional_rnn"],
    "opt": ["LazyAdamOptimizer", "AdamWOptimizer", "MomentumWOptimizer", "DecoupledWeightDecayExtension",
            "extend_with_decoupled_weight_decay"],
    "data": ["batch_and_drop_remainder", "padded_batch_and_drop_remainder", "sloppy_interleave"],
    "learn": ["ModeKeys"],
    "crf": ["crf_sequence_score", "crf_log_norm", "crf_log_likelihood", "crf_unary_score", "crf_binary_score",
            "CrfForwardRnnCell", "viterbi_decode", "crf_decode", "CrfDecodeForwardRnnCell", "CrfDecodeBackwardRnnCell"],
}
# Whole modules of the runtime: every name under them maps (aliases like `tfe = tf.contrib.eager`).
_RUNTIME_MODULES = ("eager", "learn.preprocessing", "lookup", "tensorboard.plugins.projector")


def _build() -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for table, why in ((_TF_ROWS, _SAME), (_TF_WRAPPED_ROWS, _WRAPPED)):
        for old, new in table.items():
            rows[f"tensorflow.contrib.{old}"] = Row(
                f"tensorflow.contrib.{old}", f"tensorflow.compat.v1.{new}", why)
    for sub, names in _RUNTIME_ROWS.items():
        for name in names:
            rows[f"tensorflow.contrib.{sub}.{name}"] = Row(
                f"tensorflow.contrib.{sub}.{name}", f"tf1clip.contrib.{sub}.{name}", _RUNTIME)
    for sub in _RUNTIME_MODULES:
        rows[f"tensorflow.contrib.{sub}"] = Row(f"tensorflow.contrib.{sub}", f"tf1clip.contrib.{sub}", _RUNTIME,
                                                module=True)
    # The decorator users know by name: tf1clip's top-level export (exact TF 1.15 semantics).
    rows["tensorflow.contrib.estimator.clip_gradients_by_norm"] = Row(
        "tensorflow.contrib.estimator.clip_gradients_by_norm", "tf1clip.clip_gradients_by_norm",
        "tf.contrib.estimator's optimizer decorator has no TF 2.21 counterpart: tf1clip runtime "
        "(same ClipByNorm optimizer and global-norm clip as TF 1.15)")
    return rows


CONTRIB_ROWS: dict[str, Row] = _build()

SLIM = "tensorflow.contrib.slim"
# tf_slim 1.1.0 names verified to run unmodified on TF 2.21 (tests/test_codemod_tables.py runs
# each). A file whose slim use stays inside this set gets plain `tf_slim`; any other use
# (slim.learning, batch_norm, optimize_loss, ...) crashes there and gets the fixed `tf1clip.slim`.
TF_SLIM_SAFE = frozenset({
    "fully_connected", "conv2d", "conv2d_transpose", "max_pool2d", "avg_pool2d", "flatten",
    "dropout", "repeat", "stack", "arg_scope", "l1_regularizer", "l2_regularizer",
    "xavier_initializer", "variance_scaling_initializer", "get_variables",
    "get_model_variables", "get_trainable_variables", "model_variable", "variable",
    "layers.fully_connected", "layers.conv2d", "layers.max_pool2d", "layers.flatten",
})

# tf.estimator (and tf.compat.v1.estimator): TF 2.21 has neither; tf1clip.estimator provides
# these names with TF 1.15's semantics. Others (canned estimators, export) are left for a human.
ESTIMATOR_NAMES = (
    "Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "TrainSpec", "EvalSpec", "train_and_evaluate",
    "WarmStartSettings", "VocabInfo",
    "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook",
    "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "SecondOrStepTimer",
    "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook",
    "StopAtStepHook", "SummarySaverHook",
    "inputs.numpy_input_fn", "inputs.pandas_input_fn",
    "tpu.TPUEstimator", "tpu.TPUEstimatorSpec", "tpu.RunConfig", "tpu.TPUConfig", "tpu.InputPipelineConfig",
)
_ESTIMATOR_WHY = ("TF 2.21 ships no Estimator (tf.estimator and tf.compat.v1.estimator are gone): tf1clip "
                  "runtime, TF 1.15's Estimator on tf.compat.v1 and MonitoredTrainingSession")


def _estimator_rows() -> dict[str, Row]:
    rows = {}
    for prefix in ("tensorflow.estimator", "tensorflow.compat.v1.estimator"):
        for name in ESTIMATOR_NAMES:
            # `import tf1clip.estimator` also loads its inputs and tpu modules
            rows[f"{prefix}.{name}"] = Row(f"{prefix}.{name}", f"tf1clip.estimator.{name}", _ESTIMATOR_WHY,
                                           imports="tf1clip.estimator")
    return rows


ESTIMATOR_ROWS: dict[str, Row] = _estimator_rows()

MNIST_ROWS: dict[str, Row] = {
    "tensorflow.examples.tutorials.mnist": Row(
        "tensorflow.examples.tutorials.mnist", "tf1clip.examples.tutorials.mnist",
        "tensorflow.examples.tutorials is not shipped with TF 2: tf1clip runtime (reads local "
        "MNIST files, never downloads)", module=True),
}

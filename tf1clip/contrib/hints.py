"""What to use instead of each tf.contrib name tf1clip does not provide: the data of the runtime's
one-line "not provided" message (`tf1clip.errors.UnsupportedSymbol`), in one place.

Pure data (no TensorFlow), so that `tf1clip migrate` writes the very message the runtime raises
into a migrated module where such a name is used (codemods/contrib_symbols.py).
"""
from __future__ import annotations

from tf1clip.errors import UnsupportedSymbol

# The tf.contrib submodules tf1clip provides (tf1clip.contrib.<name>).
PROVIDED = ("cluster_resolver", "crf", "data", "eager", "estimator", "framework", "layers", "learn", "legacy_seq2seq",
            "lookup", "losses", "opt", "rnn", "seq2seq", "slim", "tensorboard", "tpu", "training")

# tf.contrib.<submodule> that tf1clip does not provide.
SUBMODULES = {
    "distribute": "use tf.distribute",
    "keras": "use tf.keras",
    "metrics": "use tf.compat.v1.metrics or tf.keras.metrics",
    "summary": "use tf.compat.v2.summary (create_file_writer, scalar, ...)",
    "distributions": "use TensorFlow Probability (tfp.distributions)",
    "cudnn_rnn": "use tf.keras.layers.LSTM / GRU (they run cuDNN kernels on a GPU)",
    "image": "use tf.image", "signal": "use tf.signal", "lite": "use tf.lite",
    "quantize": "use the TensorFlow Model Optimization toolkit (tfmot.quantization)",
    "predictor": "load the SavedModel with tf.saved_model.load",
    "checkpoint": "use tf.train.Checkpoint",
    "compiler": "use tf.function(jit_compile=True)",
    "nccl": "use a tf.distribute strategy's all-reduce",
    "graph_editor": "edit the graph with tf.compat.v1.graph_util or rebuild it",
}

_LSTM = "use LSTMBlockCell, tf.nn.rnn_cell.LSTMCell or LayerNormBasicLSTMCell"
_QUEUES = "use tf.data (tf.data.experimental.bucket_by_sequence_length / sample_from_datasets)"
_ESTIMATOR = "use tf.estimator.Estimator with a model_fn (tf1clip.estimator) or Keras"
NO_TPU = "no TPU here: run TPUEstimator code with use_tpu=False (it trains on the CPU)"

# Names inside a provided submodule that it does not provide, by submodule.
SYMBOLS = {
    "tf.contrib.rnn": {
        "LSTMBlockFusedCell": "use LSTMBlockCell with tf.nn.dynamic_rnn (same kernel, one step at a time)",
        "GRUBlockCellV2": "use GRUBlockCell", "NASCell": _LSTM, "UGRNNCell": "use tf.nn.rnn_cell.GRUCell",
        "CoupledInputForgetGateLSTMCell": _LSTM, "TimeFreqLSTMCell": _LSTM, "GridLSTMCell": _LSTM,
        "AttentionCellWrapper": "use tf.contrib.seq2seq.AttentionWrapper",
        "HighwayWrapper": "write the highway connection around the cell's output",
    },
    "tf.contrib.opt": {
        "ScipyOptimizerInterface": "call scipy.optimize.minimize on a loss-and-gradient function",
        "MovingAverageOptimizer": "keep tf.train.ExponentialMovingAverage of the variables yourself",
        "NadamOptimizer": "use tf.keras.optimizers.Nadam", "AdaMaxOptimizer": "use tf.keras.optimizers.Adamax",
        "LARSOptimizer": "use tf.keras.optimizers.Lion or SGD with layer-wise scaling by hand",
        "MultitaskOptimizerWrapper": "clip or mask the per-task gradients before apply_gradients",
        "clip_gradients_by_global_norm": "use tf.clip_by_global_norm on the gradients",
        "VariableClippingOptimizer": "apply tf.clip_by_norm to the variables after each update",
    },
    "tf.contrib.seq2seq": {
        "ScheduledEmbeddingTrainingHelper": "feed sampled ids yourself with a CustomHelper",
        "ScheduledOutputTrainingHelper": "feed sampled outputs yourself with a CustomHelper",
        "BahdanauMonotonicAttention": "use BahdanauAttention", "LuongMonotonicAttention": "use LuongAttention",
        "monotonic_attention": "use BahdanauAttention or LuongAttention",
        "safe_cumprod": "use tf.math.cumprod on tf.math.log / tf.exp",
    },
    "tf.contrib.legacy_seq2seq": {
        "one2many_rnn_seq2seq": "build one embedding_rnn_decoder per task on a shared encoder state",
        "embedding_tied_rnn_seq2seq": "use tied_rnn_seq2seq on embedding lookups",
    },
    "tf.contrib.training": {
        "bucket_by_sequence_length": _QUEUES, "stratified_sample": _QUEUES, "rejection_sample": _QUEUES,
        "batch_sequences_with_states": _QUEUES, "SequenceQueueingStateSaver": _QUEUES,
        "evaluate_repeatedly": "loop over tf.train.checkpoints_iterator and run your evaluation",
    },
    "tf.contrib.data": {
        "sliding_window_batch": "use Dataset.window(size, shift, stride).flat_map(lambda w: w.batch(size))",
        "read_batch_features": "use tf.data.experimental.make_batched_features_dataset",
        "assert_element_shape": "use Dataset.map with tf.ensure_shape",
    },
    "tf.contrib.learn": {
        name: _ESTIMATOR for name in ("Estimator", "Experiment", "RunConfig", "DNNClassifier", "DNNRegressor",
                                      "LinearClassifier", "LinearRegressor", "SKCompat", "learn_runner", "ModelFnOps",
                                      "estimators", "monitors", "infer_real_valued_columns_from_input", "InputFnOps")},
    "tf.contrib.tpu": {
        name: NO_TPU for name in ("TPUDistributionStrategy", "keras_to_tpu_model", "rewrite", "shard", "batch_parallel",
                                  "replicate", "initialize_system", "shutdown_system", "outside_compilation")},
    "tf.contrib.estimator": {"add_metrics": "build the metrics in your model_fn"},
}


def not_provided(dotted: str) -> tuple:
    """For a name under tf.contrib that no module of tf1clip's provides ("tf.contrib.rnn.NASCell",
    "tf.contrib.distributions.Normal"): the name the runtime stops at (the first that is not
    provided: "tf.contrib.rnn.NASCell", "tf.contrib.distributions") and its one-line message; (None, "")
    for a submodule tf1clip provides ("tf.contrib.rnn")."""
    parts = dotted.split(".")
    sub = parts[2]
    if sub in PROVIDED and len(parts) < 4:
        return None, ""  # a provided module itself
    if sub not in PROVIDED:
        symbol, hint = ".".join(parts[:3]), SUBMODULES.get(sub, "")
    else:
        symbol, hint = ".".join(parts[:4]), SYMBOLS.get(".".join(parts[:3]), {}).get(parts[3], "")
    return symbol, str(UnsupportedSymbol(symbol, hint))

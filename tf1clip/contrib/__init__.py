"""`tf.contrib` as far as TF 1.x training scripts need it, on TF 2.21.

Submodules load on first use (`tf.contrib.layers` pulls in tf-slim, `tf.contrib.rnn` the
legacy Keras cells), so scripts that never touch contrib pay nothing and no graph op is made
at import. Anything not provided fails with one line naming the symbol
(`tf1clip.errors.UnsupportedSymbol`), not an AttributeError deep in a stack.
"""
import importlib

from tf1clip.errors import UnsupportedSymbol

PROVIDED = ("cluster_resolver", "crf", "data", "eager", "estimator", "framework", "layers", "learn", "legacy_seq2seq",
            "lookup", "opt", "rnn", "seq2seq", "slim", "tensorboard", "tpu", "training")

_HINTS = {
    "distribute": "use tf.distribute",
    "keras": "use tf.keras",
    "metrics": "use tf.compat.v1.metrics or tf.keras.metrics",
    "losses": "use tf.compat.v1.losses",
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


def __getattr__(name):
    if name in PROVIDED:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedSymbol(f"tf.contrib.{name}", _HINTS.get(name, ""))


def __dir__():
    return sorted(set(globals()) | set(PROVIDED))


def forward(module_name: str, symbol_prefix: str, *backing, hints=None):
    """A module __getattr__ that answers from the `backing` namespaces, else one clear error."""

    def __getattr__(name):
        for namespace in backing:
            ns = namespace() if callable(namespace) else namespace
            if hasattr(ns, name):
                return getattr(ns, name)
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedSymbol(f"{symbol_prefix}.{name}", (hints or {}).get(name, ""))

    return __getattr__

"""`tf.contrib` as far as TF 1.x training scripts need it, on TF 2.21.

Submodules load on first use (`tf.contrib.layers` pulls in tf-slim, `tf.contrib.rnn` the
legacy Keras cells), so scripts that never touch contrib pay nothing and no graph op is made
at import. Anything not provided fails with one line naming the symbol
(`tf1clip.errors.UnsupportedSymbol`), not an AttributeError deep in a stack.
"""
import importlib

from tf1clip.errors import UnsupportedSymbol

PROVIDED = ("eager", "estimator", "framework", "layers", "legacy_seq2seq", "rnn", "seq2seq", "slim", "training")

_HINTS = {
    "learn": "use tf.estimator or Keras",
    "opt": "use the matching tf.compat.v1.train optimizer or a tf.keras optimizer",
    "distribute": "use tf.distribute",
    "keras": "use tf.keras",
    "data": "use tf.data",
    "metrics": "use tf.compat.v1.metrics or tf.keras.metrics",
    "losses": "use tf.compat.v1.losses",
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

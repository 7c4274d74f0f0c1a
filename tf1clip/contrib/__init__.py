"""`tf.contrib` as far as TF 1.x training scripts need it, on TF 2.21.

Submodules load on first use (`tf.contrib.layers` pulls in tf-slim, `tf.contrib.rnn` the
legacy Keras cells), so scripts that never touch contrib pay nothing and no graph op is made
at import. Anything not provided fails with one line naming the symbol
(`tf1clip.errors.UnsupportedSymbol`), not an AttributeError deep in a stack.
"""
import importlib

from tf1clip.contrib.hints import PROVIDED, SUBMODULES, SYMBOLS
from tf1clip.errors import UnsupportedSymbol


def __getattr__(name):
    if name in PROVIDED:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedSymbol(f"tf.contrib.{name}", SUBMODULES.get(name, ""))


def __dir__():
    return sorted(set(globals()) | set(PROVIDED))


def forward(module_name: str, symbol_prefix: str, *backing, hints=None):
    """A module __getattr__ that answers from the `backing` namespaces, else one clear error (its hint from
    `hints`, else from tf1clip.contrib.hints, the table `tf1clip migrate` writes the same message from)."""
    hints = {**SYMBOLS.get(symbol_prefix, {}), **(hints or {})}

    def __getattr__(name):
        for namespace in backing:
            ns = namespace() if callable(namespace) else namespace
            if hasattr(ns, name):
                return getattr(ns, name)
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedSymbol(f"{symbol_prefix}.{name}", hints.get(name, ""))

    return __getattr__

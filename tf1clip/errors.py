"""Errors tf1clip raises at users' code, each meant to be read as one line."""
from __future__ import annotations

CONTRIB_GONE = "tf.contrib was removed in TensorFlow 2"
ESTIMATOR_GONE = "TensorFlow 2.21 ships no Estimator; tf1clip provides Estimator with a model_fn and TPUEstimator on CPU"


class UnsupportedSymbol(AttributeError):
    """A TF 1.x symbol (mostly tf.contrib) that tf1clip does not provide."""

    tf1clip_unsupported = True

    def __init__(self, symbol: str, hint: str = "", reason: str = CONTRIB_GONE):
        self.symbol, self.hint, self.reason = symbol, hint, reason
        message = (f"{symbol} is not provided by tf1clip ({reason})"
                   + (f"; {hint}" if hint else "; replace it with its TF 2 equivalent or tf.compat.v1"))
        super().__init__(message)


class UnsupportedImport(ImportError):
    """`import tensorflow.contrib.X` (or `from ... import Y`) for something not provided."""

    tf1clip_unsupported = True

    def __init__(self, symbol: str, hint: str = "", reason: str = CONTRIB_GONE):
        self.symbol = symbol
        super().__init__(str(UnsupportedSymbol(symbol, hint, reason)), name=symbol)


def refuse_unknown(prefix: str, reason: str, hints: dict | None = None, default_hint: str = ""):
    """A module `__getattr__` for a TF 1.x namespace: any other public name fails in one line."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedSymbol(f"{prefix}.{name}", (hints or {}).get(name, default_hint), reason)

    return __getattr__


class KernelDefect(RuntimeError):
    """A TF 2.21 kernel that computes what TF 1.x computed differently (tf1clip.empty_batch)."""

    tf1clip_unsupported = True

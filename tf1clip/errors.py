"""Errors tf1clip raises at users' code, each meant to be read as one line."""


class UnsupportedSymbol(AttributeError):
    """A TF 1.x symbol (mostly tf.contrib) that tf1clip does not provide."""

    tf1clip_unsupported = True

    def __init__(self, symbol: str, hint: str = ""):
        self.symbol = symbol
        message = (f"{symbol} is not provided by tf1clip (tf.contrib was removed in TensorFlow 2)"
                   + (f"; {hint}" if hint else "; replace it with its TF 2 equivalent or tf.compat.v1"))
        super().__init__(message)


class UnsupportedImport(ImportError):
    """`import tensorflow.contrib.X` (or `from ... import Y`) for something not provided."""

    tf1clip_unsupported = True

    def __init__(self, symbol: str, hint: str = ""):
        self.symbol = symbol
        super().__init__(str(UnsupportedSymbol(symbol, hint)), name=symbol)

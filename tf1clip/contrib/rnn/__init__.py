"""tf.contrib.rnn: the TF 1.x RNN cells, wrappers and static RNN functions.

The core cells live on in tf.compat.v1.nn.rnn_cell / tf.compat.v1.nn, backed by tf-keras:
they need TF_USE_LEGACY_KERAS=1 before TensorFlow is imported (tf1clip run and tf1clip.v1 set
it). contrib's own pieces are here with TF 1.15's math: `LSTMBlockCell`, `GRUBlockCell`,
`LayerNormBasicLSTMCell`, `EmbeddingWrapper`, `InputProjectionWrapper`,
`OutputProjectionWrapper`, `stack_bidirectional_dynamic_rnn`, `stack_bidirectional_rnn`
(tf1clip.contrib.rnn.cells / .wrappers).
"""
import importlib

from tf1clip.contrib import forward

_OWN = {
    "LSTMBlockCell": "cells", "GRUBlockCell": "cells", "LayerNormBasicLSTMCell": "cells",
    "stack_bidirectional_dynamic_rnn": "cells", "stack_bidirectional_rnn": "cells",
    "EmbeddingWrapper": "wrappers", "InputProjectionWrapper": "wrappers", "OutputProjectionWrapper": "wrappers",
}
PROVIDED_HERE = tuple(sorted(_OWN))


def _cells():
    import tensorflow as tf

    return tf.compat.v1.nn.rnn_cell


def _static_rnn():
    import tensorflow as tf

    nn = tf.compat.v1.nn
    return type("static", (), {name: staticmethod(getattr(nn, name)) for name in
                               ("static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn")})


_forward = forward(__name__, "tf.contrib.rnn", _cells, _static_rnn)  # hints: tf1clip.contrib.hints


def __getattr__(name):
    if name in _OWN:
        value = getattr(importlib.import_module(f"{__name__}.{_OWN[name]}"), name)
        globals()[name] = value
        return value
    return _forward(name)

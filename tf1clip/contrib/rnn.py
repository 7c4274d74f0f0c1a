"""tf.contrib.rnn: the TF 1.x RNN cells and static RNN functions.

They live on in tf.compat.v1.nn.rnn_cell / tf.compat.v1.nn, backed by tf-keras: they need
TF_USE_LEGACY_KERAS=1 before TensorFlow is imported (tf1clip run and tf1clip.v1 set it).
"""
from tf1clip.contrib import forward


def _cells():
    import tensorflow as tf

    return tf.compat.v1.nn.rnn_cell


def _static_rnn():
    import tensorflow as tf

    nn = tf.compat.v1.nn
    return type("static", (), {name: staticmethod(getattr(nn, name)) for name in
                               ("static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn")})


__getattr__ = forward(__name__, "tf.contrib.rnn", _cells, _static_rnn,
                      hints={"LayerNormBasicLSTMCell": "use tf.keras.layers.LSTMCell with LayerNormalization",
                             "stack_bidirectional_dynamic_rnn": "stack tf.compat.v1.nn.bidirectional_dynamic_rnn calls"})

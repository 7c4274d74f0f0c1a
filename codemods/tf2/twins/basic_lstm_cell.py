"""Twin of `tf.nn.rnn_cell.BasicLSTMCell` (TF 1.x): Keras' LSTM orders and splits its weights
differently and adds no forget bias, so the TF2 tier emits this layer instead.

TF 1.15 rnn_cell_impl.BasicLSTMCell: one kernel [input_depth + num_units, 4 * num_units] over
`concat([inputs, h])`, gates split in the order i, j, f, o, `forget_bias` added to f before
its sigmoid, new_c = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j), new_h =
tanh(new_c) * sigmoid(o); state LSTMStateTuple(c, h). Variables `<scope>/basic_lstm_cell/kernel`
(Glorot uniform) and `.../bias` (zeros), in that order.
"""

CLASS = "BasicLSTMCell"
NEEDS = ("lstm_state_tuple",)
TF1 = ("tensorflow.nn.rnn_cell.BasicLSTMCell", "tensorflow.contrib.rnn.BasicLSTMCell")
KIND = "cell"
# TF 1 parameters in signature order → what the twin does with each (see twins.instantiate).
PARAMS = (
    ("num_units", "pass"),
    ("forget_bias", "pass"),
    ("state_is_tuple", ("only", "True", "a state concatenated into one tensor is not converted")),
    ("activation", "pass"),
    ("reuse", ("drop", "variables are reused by reusing the layer object")),
    ("name", "pass"),
    ("dtype", ("only_float32", "the twin computes in float32")),
)
DEFAULT_NAME = "basic_lstm_cell"
SOURCE = '''\
class BasicLSTMCell(tf.keras.layers.Layer):
    """TF 1.x's BasicLSTMCell: one kernel for the gates i, j, f, o (in that order), forget_bias
    added to f; state (c, h). Variables: <name>/kernel, <name>/bias, as TF 1 named them."""

    def __init__(self, num_units, forget_bias=1.0, activation=None, name="basic_lstm_cell", **kwargs):
        super().__init__(name=name, **kwargs)
        self.num_units = num_units
        self.forget_bias = forget_bias
        self.activation = activation or tf.math.tanh
        self.state_size = LSTMStateTuple(num_units, num_units)
        self.output_size = num_units

    def build(self, input_shape):
        depth = int(input_shape[-1])
        self.kernel = self.add_weight(name="kernel", shape=(depth + self.num_units, 4 * self.num_units),
                                      initializer=tf.keras.initializers.GlorotUniform())
        self.bias = self.add_weight(name="bias", shape=(4 * self.num_units,), initializer="zeros")

    def zero_state(self, batch_size, dtype=tf.float32):
        zeros = tf.zeros([batch_size, self.num_units], dtype)
        return LSTMStateTuple(zeros, zeros)

    def call(self, inputs, state):
        c, h = state
        gate_inputs = tf.nn.bias_add(tf.matmul(tf.concat([inputs, h], 1), self.kernel), self.bias)
        i, j, f, o = tf.split(gate_inputs, 4, axis=1)
        new_c = c * tf.sigmoid(f + self.forget_bias) + tf.sigmoid(i) * self.activation(j)
        new_h = self.activation(new_c) * tf.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)
'''

"""Twin of `tf.nn.rnn_cell.GRUCell` (TF 1.x): Keras' GRU orders its gates z, r and (by default)
applies the reset gate after the matmul; TF 1's does neither, so the TF2 tier emits this layer.

TF 1.15 rnn_cell_impl.GRUCell: `gates/kernel` [input_depth + units, 2 * units] and `gates/bias`
(ones) give sigmoid(r, u) in that order; `candidate/kernel` [input_depth + units, units] and
`candidate/bias` (zeros) act on concat([inputs, r * h]); new_h = u * h + (1 - u) * tanh(candidate).
"""

CLASS = "GRUCell"
NEEDS: tuple = ()
TF1 = ("tensorflow.nn.rnn_cell.GRUCell", "tensorflow.contrib.rnn.GRUCell")
KIND = "cell"
PARAMS = (
    ("num_units", "pass"),
    ("activation", "pass"),
    ("reuse", ("drop", "variables are reused by reusing the layer object")),
    ("kernel_initializer", "pass"),
    ("bias_initializer", "pass"),
    ("name", "pass"),
    ("dtype", ("only_float32", "the twin computes in float32")),
)
DEFAULT_NAME = "gru_cell"
SOURCE = '''\
class GRUCell(tf.keras.layers.Layer):
    """TF 1.x's GRUCell: gates r, u (in that order) from gates/kernel, the reset gate applied to the
    state before candidate/kernel; new_h = u * h + (1 - u) * tanh(candidate). TF 1's variable names."""

    def __init__(self, num_units, activation=None, kernel_initializer=None, bias_initializer=None,
                 name="gru_cell", **kwargs):
        super().__init__(name=name, **kwargs)
        self.num_units = num_units
        self.activation = activation or tf.math.tanh
        self.kernel_initializer = kernel_initializer or tf.keras.initializers.GlorotUniform()
        self.bias_initializer = bias_initializer
        self.state_size = num_units
        self.output_size = num_units

    def build(self, input_shape):
        depth = int(input_shape[-1])
        units = self.num_units
        # sub-layers named as TF 1's variable scopes: gates/kernel, gates/bias, candidate/kernel, ...
        self.gates = tf.keras.layers.Dense(2 * units, kernel_initializer=self.kernel_initializer,
                                           bias_initializer=self.bias_initializer or tf.keras.initializers.Ones(),
                                           name="gates")
        self.gates.build((None, depth + units))
        self.candidate = tf.keras.layers.Dense(units, kernel_initializer=self.kernel_initializer,
                                               bias_initializer=self.bias_initializer or "zeros", name="candidate")
        self.candidate.build((None, depth + units))

    def zero_state(self, batch_size, dtype=tf.float32):
        return tf.zeros([batch_size, self.num_units], dtype)

    def call(self, inputs, state):
        gate_inputs = tf.nn.bias_add(tf.matmul(tf.concat([inputs, state], 1), self.gates.kernel), self.gates.bias)
        r, u = tf.split(tf.sigmoid(gate_inputs), 2, axis=1)
        candidate = tf.nn.bias_add(tf.matmul(tf.concat([inputs, r * state], 1), self.candidate.kernel),
                                   self.candidate.bias)
        c = self.activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h
'''

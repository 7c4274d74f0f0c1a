"""Twin of `tf.nn.rnn_cell.BasicRNNCell` (TF 1.x): Keras' SimpleRNNCell keeps two kernels
(`kernel`, `recurrent_kernel`), TF 1's one kernel over `concat([inputs, state])`, so the TF2 tier
emits this layer to keep TF 1's variables and their names.

TF 1.15 rnn_cell_impl.BasicRNNCell: kernel [input_depth + num_units, num_units] (the variable
scope's default initializer: Glorot uniform), bias [num_units] (zeros);
output = new_state = activation(concat([inputs, state]) @ kernel + bias), activation tanh unless
given. Variables `<scope>/basic_rnn_cell/kernel` and `.../bias`, in that order.
"""

CLASS = "BasicRNNCell"
NEEDS: tuple = ()
TF1 = ("tensorflow.nn.rnn_cell.BasicRNNCell", "tensorflow.contrib.rnn.BasicRNNCell")
KIND = "cell"
PARAMS = (
    ("num_units", "pass"),
    ("activation", "pass"),
    ("reuse", ("drop", "variables are reused by reusing the layer object")),
    ("name", "pass"),
    ("dtype", ("only_float32", "the twin computes in float32")),
)
DEFAULT_NAME = "basic_rnn_cell"
SOURCE = '''\
class BasicRNNCell(tf.keras.layers.Layer):
    """TF 1.x's BasicRNNCell: new_h = tanh(concat([inputs, h]) @ kernel + bias), one kernel over
    inputs and state. Variables: <name>/kernel, <name>/bias, as TF 1 named them."""

    def __init__(self, num_units, activation=None, name="basic_rnn_cell", **kwargs):
        super().__init__(name=name, **kwargs)
        self.num_units = num_units
        self.activation = activation or tf.math.tanh
        self.state_size = num_units
        self.output_size = num_units

    def build(self, input_shape):
        depth = int(input_shape[-1])
        self.kernel = self.add_weight(name="kernel", shape=(depth + self.num_units, self.num_units),
                                      initializer=tf.keras.initializers.GlorotUniform())
        self.bias = self.add_weight(name="bias", shape=(self.num_units,), initializer="zeros")

    def zero_state(self, batch_size, dtype=tf.float32):
        return tf.zeros([batch_size, self.num_units], dtype)

    def call(self, inputs, state):
        output = self.activation(tf.nn.bias_add(tf.matmul(tf.concat([inputs, state], 1), self.kernel), self.bias))
        return output, output
'''

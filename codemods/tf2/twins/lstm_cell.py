"""Twin of `tf.nn.rnn_cell.LSTMCell` (TF 1.x), with or without peepholes, a projection and clipping.

TF 1.15 rnn_cell_impl.LSTMCell: kernel [input_depth + h_depth, 4 * num_units] (h_depth =
num_proj or num_units), bias zeros, gates i, j, f, o; with peepholes
c = sigmoid(f + forget_bias + w_f_diag * c_prev) * c_prev + sigmoid(i + w_i_diag * c_prev) *
tanh(j) and m = sigmoid(o + w_o_diag * c) * tanh(c), else the BasicLSTMCell formulas; c clipped
to [-cell_clip, cell_clip]; m projected by `projection/kernel` [num_units, num_proj] and clipped to
[-proj_clip, proj_clip]. State (c, m). Variables, in TF 1's order: kernel, bias, w_f_diag,
w_i_diag, w_o_diag, projection/kernel.
"""

CLASS = "LSTMCell"
NEEDS = ("lstm_state_tuple",)
TF1 = ("tensorflow.nn.rnn_cell.LSTMCell", "tensorflow.contrib.rnn.LSTMCell")
KIND = "cell"
PARAMS = (
    ("num_units", "pass"),
    ("use_peepholes", "pass"),
    ("cell_clip", "pass"),
    ("initializer", "pass"),
    ("num_proj", "pass"),
    ("proj_clip", "pass"),
    ("num_unit_shards", ("only", "None", "sharded (partitioned) weights are not converted")),
    ("num_proj_shards", ("only", "None", "sharded (partitioned) weights are not converted")),
    ("forget_bias", "pass"),
    ("state_is_tuple", ("only", "True", "a state concatenated into one tensor is not converted")),
    ("activation", "pass"),
    ("reuse", ("drop", "variables are reused by reusing the layer object")),
    ("name", "pass"),
    ("dtype", ("only_float32", "the twin computes in float32")),
)
DEFAULT_NAME = "lstm_cell"
SOURCE = '''\
class LSTMCell(tf.keras.layers.Layer):
    """TF 1.x's LSTMCell: gates i, j, f, o from one kernel, forget_bias added to f, optional
    peepholes (w_f_diag, w_i_diag, w_o_diag), cell clipping, a projection (projection/kernel) and
    its clipping; state (c, m). Variables named as TF 1 named them."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, forget_bias=1.0, activation=None, name="lstm_cell", **kwargs):
        super().__init__(name=name, **kwargs)
        self.num_units = num_units
        self.use_peepholes = use_peepholes
        self.cell_clip = cell_clip
        self.initializer = initializer or tf.keras.initializers.GlorotUniform()
        self.num_proj = num_proj
        self.proj_clip = proj_clip
        self.forget_bias = forget_bias
        self.activation = activation or tf.math.tanh
        self.output_size = num_proj or num_units
        self.state_size = LSTMStateTuple(num_units, self.output_size)

    def build(self, input_shape):
        depth = int(input_shape[-1])
        units = self.num_units
        self.kernel = self.add_weight(name="kernel", shape=(depth + self.output_size, 4 * units),
                                      initializer=self.initializer)
        self.bias = self.add_weight(name="bias", shape=(4 * units,), initializer="zeros")
        if self.use_peepholes:
            self.w_f_diag = self.add_weight(name="w_f_diag", shape=(units,), initializer=self.initializer)
            self.w_i_diag = self.add_weight(name="w_i_diag", shape=(units,), initializer=self.initializer)
            self.w_o_diag = self.add_weight(name="w_o_diag", shape=(units,), initializer=self.initializer)
        if self.num_proj is not None:  # a sub-layer named as TF 1's scope: projection/kernel
            self.projection = tf.keras.layers.Dense(self.num_proj, use_bias=False, kernel_initializer=self.initializer,
                                                    name="projection")
            self.projection.build((None, units))

    def zero_state(self, batch_size, dtype=tf.float32):
        return LSTMStateTuple(tf.zeros([batch_size, self.num_units], dtype),
                              tf.zeros([batch_size, self.output_size], dtype))

    def call(self, inputs, state):
        c_prev, m_prev = state
        lstm_matrix = tf.nn.bias_add(tf.matmul(tf.concat([inputs, m_prev], 1), self.kernel), self.bias)
        i, j, f, o = tf.split(lstm_matrix, 4, axis=1)
        if self.use_peepholes:
            c = (tf.sigmoid(f + self.forget_bias + self.w_f_diag * c_prev) * c_prev
                 + tf.sigmoid(i + self.w_i_diag * c_prev) * self.activation(j))
        else:
            c = tf.sigmoid(f + self.forget_bias) * c_prev + tf.sigmoid(i) * self.activation(j)
        if self.cell_clip is not None:
            c = tf.clip_by_value(c, -self.cell_clip, self.cell_clip)
        if self.use_peepholes:
            m = tf.sigmoid(o + self.w_o_diag * c) * self.activation(c)
        else:
            m = tf.sigmoid(o) * self.activation(c)
        if self.num_proj is not None:
            m = tf.matmul(m, self.projection.kernel)
            if self.proj_clip is not None:
                m = tf.clip_by_value(m, -self.proj_clip, self.proj_clip)
        return m, LSTMStateTuple(c, m)
'''

"""Twin of `tf.nn.rnn_cell.DropoutWrapper` (TF 1.x): dropout on a cell's inputs, outputs and state.

TF 1.15 rnn_cell_impl.DropoutWrapper (rnn_cell_wrapper_impl.DropoutWrapperBase): a keep
probability known as a number is a float and adds no dropout when it is 1; any other (a number
below 1, a fed tensor) applies `dropout(v, rate=1 - keep_prob, seed=...)` with a new mask at each
step, on the inputs before the cell, on the new state (every tensor of it but an LSTM state's
`c`, the default `dropout_state_filter_visitor`) and on the output. With `seed`, each tensor's
op seed is md5(str(seed) + "<input|state|output>_<i>")[:8] & 0x7FFFFFFF (`_gen_seed`), i the
tensor's index in its structure. The wrapper opens no variable scope: it calls the cell with
scope=None, so the cell's variables have the names they have unwrapped (`rnn/basic_lstm_cell/
kernel`). Keras' dropout arguments of its own cells draw other masks in another way, so the TF2
tier emits this layer. `variational_recurrent` (one mask for all steps) is not reproduced.
"""

CLASS = "DropoutWrapper"
NEEDS = ("lstm_state_tuple",)
TF1 = ("tensorflow.nn.rnn_cell.DropoutWrapper", "tensorflow.contrib.rnn.DropoutWrapper")
KIND = "cell"
IMPORTS = ("hashlib",)
PARAMS = (
    ("cell", "pass"),
    ("input_keep_prob", "pass"),
    ("output_keep_prob", "pass"),
    ("state_keep_prob", "pass"),
    ("variational_recurrent", ("only", "False", "one dropout mask for every step is not converted")),
    ("input_size", ("drop", "used only with variational_recurrent")),
    ("dtype", ("only_float32", "the twin computes in float32")),
    ("seed", "pass"),
    ("dropout_state_filter_visitor", ("only", "None", "a state filter of the script's own is not converted")),
    ("name", ("drop", "the wrapper names no variables")),
)
KEEP_PROBS = ("input_keep_prob", "output_keep_prob", "state_keep_prob")
DEFAULT_NAME = "dropout_wrapper"
SOURCE = '''\
class DropoutWrapper(tf.keras.layers.Layer):
    """TF 1.x's DropoutWrapper: tf.nn.dropout on the cell's inputs, its new state (never an LSTM
    state's c) and its output, a new mask at each step; a keep probability that is the number 1
    adds none. It names no variables: the cell's keep the names they have unwrapped. A keep
    probability fed at each run is set on the wrapper in the step, before the rnn runs."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0, seed=None,
                 name="dropout_wrapper", **kwargs):
        super().__init__(name=name, **kwargs)
        self.cell = cell
        self.input_keep_prob = input_keep_prob
        self.output_keep_prob = output_keep_prob
        self.state_keep_prob = state_keep_prob
        self.seed = seed
        self.state_size = cell.state_size
        self.output_size = cell.output_size

    def build(self, input_shape):
        # TF 1's wrapper opens no variable scope: the cell is built where the wrapper stands
        with tf.keras.name_scope(self.cell.name, caller=self.cell, override_parent=self.path.rpartition("/")[0]):
            self.cell.build(input_shape)

    def zero_state(self, batch_size, dtype=tf.float32):
        return self.cell.zero_state(batch_size, dtype)

    def dropout(self, values, keep_prob, salt, filtered=None):
        if isinstance(keep_prob, (int, float)) and keep_prob >= 1:
            return values  # a keep probability that is the number 1: no dropout op (TF 1's rule)
        flat = tf.nest.flatten(values)
        filtered = filtered or [True] * len(flat)
        for i, (drop, value) in enumerate(zip(filtered, flat)):
            if drop:
                seed = None
                if self.seed is not None:
                    digest = hashlib.md5(f"{self.seed}{salt}_{i}".encode("utf-8")).hexdigest()
                    seed = int(digest[:8], 16) & 0x7FFFFFFF
                flat[i] = tf.nn.dropout(value, rate=1.0 - keep_prob, seed=seed)
        return tf.nest.pack_sequence_as(values, flat)

    def call(self, inputs, state):
        inputs = self.dropout(inputs, self.input_keep_prob, "input")
        output, new_state = self.cell(inputs, state)
        filtered = []  # TF 1's default state filter: every tensor of the state but an LSTM state's c

        def visit(part):
            if isinstance(part, LSTMStateTuple):
                filtered.extend([False, True])
            elif isinstance(part, (tuple, list)):
                for item in part:
                    visit(item)
            else:
                filtered.append(True)

        visit(new_state)
        new_state = self.dropout(new_state, self.state_keep_prob, "state", filtered)
        output = self.dropout(output, self.output_keep_prob, "output")
        return output, new_state
'''

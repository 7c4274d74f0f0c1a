"""Twin of `tf.nn.bidirectional_dynamic_rnn` (TF 1.x): a forward and a backward DynamicRNN.

TF 1.15 rnn.bidirectional_dynamic_rnn: under `bidirectional_rnn/fw` the forward cell runs on the
inputs; under `bidirectional_rnn/bw` the backward cell runs on the inputs reversed in time (each
sequence within its `sequence_length`, by reverse_sequence), and its outputs are reversed back.
Returns ((output_fw, output_bw), (state_fw, state_bw)).
"""

CLASS = "BidirectionalDynamicRNN"
NEEDS = ("dynamic_rnn",)
TF1 = ("tensorflow.nn.bidirectional_dynamic_rnn",)
KIND = "rnn"
PARAMS = (
    ("cell_fw", "init"),
    ("cell_bw", "init"),
    ("inputs", "call"),
    ("sequence_length", "call"),
    ("initial_state_fw", "call"),
    ("initial_state_bw", "call"),
    ("dtype", ("only_float32", "the twin computes in float32")),
    ("parallel_iterations", ("drop", "how many steps TF 1 ran at once: the same numbers")),
    ("swap_memory", ("drop", "memory placement only")),
    ("time_major", "init"),
    ("scope", ("name", "the variable scope names the layer")),
)
DEFAULT_NAME = "bidirectional_rnn"
SOURCE = '''\
class BidirectionalDynamicRNN(tf.keras.layers.Layer):
    """TF 1.x's tf.nn.bidirectional_dynamic_rnn as a layer: fw on the inputs, bw on them reversed in
    time within each sequence_length (outputs reversed back); variables under fw/ and bw/."""

    def __init__(self, cell_fw, cell_bw, time_major=False, name="bidirectional_rnn", **kwargs):
        super().__init__(name=name, **kwargs)
        self.time_major = time_major
        self.fw = DynamicRNN(cell_fw, time_major=time_major, name="fw")
        self.bw = DynamicRNN(cell_bw, time_major=time_major, name="bw")

    def build(self, input_shape):
        self.fw.build(input_shape)
        self.bw.build(input_shape)

    def call(self, inputs, sequence_length=None, initial_state_fw=None, initial_state_bw=None):
        time_axis, batch_axis = (0, 1) if self.time_major else (1, 0)

        def reverse(x):
            if sequence_length is None:
                return tf.reverse(x, [time_axis])
            return tf.reverse_sequence(x, sequence_length, seq_axis=time_axis, batch_axis=batch_axis)

        output_fw, state_fw = self.fw(inputs, sequence_length=sequence_length, initial_state=initial_state_fw)
        output_bw, state_bw = self.bw(reverse(inputs), sequence_length=sequence_length,
                                      initial_state=initial_state_bw)
        return (output_fw, reverse(output_bw)), (state_fw, state_bw)
'''

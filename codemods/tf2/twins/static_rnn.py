"""Twin of `tf.nn.static_rnn` (TF 1.x): the same cell loop over a Python list of time steps.

TF 1.15 rnn.static_rnn: inputs a list of [batch, depth] tensors, outputs the list of outputs and
the final state; `sequence_length` zeroes outputs and carries the state as in dynamic_rnn.
Variables under `rnn/<cell>/...` (or the `scope=`).
"""

CLASS = "StaticRNN"
NEEDS = ("dynamic_rnn",)
TF1 = ("tensorflow.nn.static_rnn", "tensorflow.contrib.rnn.static_rnn")
KIND = "rnn"
PARAMS = (
    ("cell", "init"),
    ("inputs", "call"),
    ("initial_state", "call"),
    ("dtype", ("only_float32", "the twin computes in float32")),
    ("sequence_length", "call"),
    ("scope", ("name", "the variable scope names the layer")),
)
DEFAULT_NAME = "rnn"
SOURCE = '''\
class StaticRNN(DynamicRNN):
    """TF 1.x's tf.nn.static_rnn as a layer: a list of time steps in, a list of outputs out."""

    def __init__(self, cell, name="rnn", **kwargs):
        super().__init__(cell, time_major=True, name=name, **kwargs)

    def build(self, input_shape):
        self.cell.build((None, int(input_shape[0][-1])))

    def call(self, inputs, sequence_length=None, initial_state=None):
        outputs, state = super().call(tf.stack(inputs), sequence_length, initial_state)
        return tf.unstack(outputs, num=len(inputs)), state
'''

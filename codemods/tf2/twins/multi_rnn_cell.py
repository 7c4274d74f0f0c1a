"""Twin of `tf.nn.rnn_cell.MultiRNNCell` (TF 1.x): cells stacked, each under `cell_<i>`.

TF 1.15: each cell runs in `variable_scope("cell_%d" % i)` on the previous cell's output; the
state is the tuple of the cells' states. Variables `<scope>/multi_rnn_cell/cell_0/<cell>/...`.
"""

CLASS = "MultiRNNCell"
NEEDS: tuple = ()
TF1 = ("tensorflow.nn.rnn_cell.MultiRNNCell", "tensorflow.contrib.rnn.MultiRNNCell")
KIND = "cell"
PARAMS = (
    ("cells", "pass"),
    ("state_is_tuple", ("only", "True", "a state concatenated into one tensor is not converted")),
)
DEFAULT_NAME = "multi_rnn_cell"
SOURCE = '''\
class MultiRNNCell(tf.keras.layers.Layer):
    """TF 1.x's MultiRNNCell: the cells run in turn, cell i under the name cell_<i>; the state is the
    tuple of their states."""

    def __init__(self, cells, name="multi_rnn_cell", **kwargs):
        super().__init__(name=name, **kwargs)
        self.cells = list(cells)
        self.state_size = tuple(cell.state_size for cell in self.cells)
        self.output_size = self.cells[-1].output_size

    def build(self, input_shape):
        depth = int(input_shape[-1])
        for i, cell in enumerate(self.cells):
            with tf.keras.name_scope(f"cell_{i}"):
                cell.build((None, depth))
            depth = cell.output_size

    def zero_state(self, batch_size, dtype=tf.float32):
        return tuple(cell.zero_state(batch_size, dtype) for cell in self.cells)

    def call(self, inputs, state):
        new_states = []
        for cell, cell_state in zip(self.cells, state):
            inputs, cell_state = cell(inputs, cell_state)
            new_states.append(cell_state)
        return inputs, tuple(new_states)
'''

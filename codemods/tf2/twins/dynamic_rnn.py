"""Twin of `tf.nn.dynamic_rnn` (TF 1.x): a cell run over time, with TF 1's `sequence_length` rule.

TF 1.15 rnn.dynamic_rnn: inputs [batch, time, depth] (time-major with `time_major=True`); the
state starts at `initial_state` or the cell's zero state; with `sequence_length`, at every step
t >= length the output is zeros and the state is carried through unchanged, so the final state
is each sequence's last real state. Keras' RNN masks differently (it repeats the last output),
so the TF2 tier emits this layer, named `rnn` (or the TF 1 `scope=`), as TF 1 scoped the cell's
variables: `rnn/<cell>/...`. `parallel_iterations` (32 by default, as TF 1's) changes no number
of a deterministic cell; steps drawing dropout masks draw them in the order the loop schedules them.
"""

CLASS = "DynamicRNN"
NEEDS: tuple = ()
TF1 = ("tensorflow.nn.dynamic_rnn",)
KIND = "rnn"
# role of each TF 1 argument: "init" → the layer's constructor, "call" → its call in the step.
PARAMS = (
    ("cell", "init"),
    ("inputs", "call"),
    ("sequence_length", "call"),
    ("initial_state", "call"),
    ("dtype", ("only_float32", "the twin computes in float32")),
    ("parallel_iterations", "init"),
    ("swap_memory", ("drop", "memory placement only")),
    ("time_major", "init"),
    ("scope", ("name", "the variable scope names the layer")),
)
DEFAULT_NAME = "rnn"
SOURCE = '''\
class DynamicRNN(tf.keras.layers.Layer):
    """TF 1.x's tf.nn.dynamic_rnn as a layer: the cell over time; with sequence_length, outputs are
    zeros and the state is carried through after each sequence's end (TF 1's rule)."""

    def __init__(self, cell, time_major=False, parallel_iterations=None, name="rnn", **kwargs):
        super().__init__(name=name, **kwargs)
        self.cell = cell
        self.time_major = time_major
        self.parallel_iterations = parallel_iterations or 32  # steps run at once: where random ops draw

    def build(self, input_shape):
        self.cell.build((None, int(input_shape[-1])))

    def call(self, inputs, sequence_length=None, initial_state=None):
        inputs = tf.convert_to_tensor(inputs)
        if not self.time_major:
            inputs = tf.transpose(inputs, [1, 0, 2])  # [time, batch, depth]
        steps, batch = tf.shape(inputs)[0], tf.shape(inputs)[1]
        state = initial_state if initial_state is not None else self.cell.zero_state(batch, inputs.dtype)

        def step(t, state, outputs):
            output, new_state = self.cell(inputs[t], state)
            if sequence_length is not None:  # past its end, a sequence outputs zeros and keeps its state
                done = tf.expand_dims(t >= tf.cast(sequence_length, t.dtype), 1)
                output = tf.where(done, tf.zeros_like(output), output)
                new_state = tf.nest.map_structure(lambda old, new: tf.where(done, old, new), state, new_state)
            return t + 1, new_state, outputs.write(t, output)

        outputs = tf.TensorArray(inputs.dtype, size=steps)
        _, state, outputs = tf.while_loop(lambda t, *_: t < steps, step, (tf.constant(0), state, outputs),
                                         parallel_iterations=self.parallel_iterations)
        outputs = outputs.stack()
        if not self.time_major:
            outputs = tf.transpose(outputs, [1, 0, 2])
        return outputs, state
'''

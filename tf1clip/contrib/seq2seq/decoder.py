"""tf.contrib.seq2seq's decoding loop: `Decoder`, `dynamic_decode`, `BasicDecoder` (TF 1.15).

`dynamic_decode` runs `decoder.step` in a `tf.while_loop` until every batch entry is finished
or `maximum_iterations` is reached, writes each step's outputs to TensorArrays and returns
`(final_outputs, final_state, final_sequence_lengths)`. A sequence's length is the step at
which it first reported finished, plus one. With `impute_finished`, outputs past a sequence's
end are zeros and its state is copied through, so backprop ignores those steps.
"""
from __future__ import annotations

import abc
import collections

import tensorflow as tf

nest = tf.nest
_v1 = tf.compat.v1


def transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...] (rank < 2: unchanged)."""
    rank = x.shape.rank
    if rank is not None and rank < 2:
        return x
    perm = tf.concat(([1, 0], tf.range(2, tf.rank(x))), axis=0)
    out = tf.transpose(x, perm)
    if x.shape.rank is not None:
        out.set_shape(tf.TensorShape([x.shape[1], x.shape[0]]).concatenate(x.shape[2:]))
    return out


def zero_state_tensors(size, batch_size, dtype):
    """Zeros of shape [batch_size] + size for every size in the structure `size`."""

    def zeros(s, d):
        shape = tf.TensorShape(s)
        if not shape.is_fully_defined():
            raise ValueError(f"cannot make zeros of partially known shape {shape}")
        out = tf.zeros([batch_size, *shape.as_list()], dtype=d)
        static = tf.get_static_value(batch_size)
        out.set_shape(tf.TensorShape([static]).concatenate(shape))
        return out

    dtypes = dtype if nest.is_nested(dtype) else nest.map_structure(lambda _: dtype, size)
    return nest.map_structure(zeros, size, dtypes)


class Decoder(metaclass=abc.ABCMeta):
    """The interface `dynamic_decode` drives: initialize once, then step until finished."""

    @property
    def batch_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    @property
    def output_dtype(self):
        raise NotImplementedError

    @abc.abstractmethod
    def initialize(self, name=None):
        """`(finished, initial_inputs, initial_state)`."""

    @abc.abstractmethod
    def step(self, time, inputs, state, name=None):
        """`(outputs, next_state, next_inputs, finished)`."""

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        return False


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput", ("rnn_output", "sample_id"))):
    pass


class BasicDecoder(Decoder):
    """One cell call per step, then the optional `output_layer`, then the helper samples and feeds."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        if not callable(cell):
            raise TypeError(f"cell must be callable, saw type: {type(cell).__name__}")
        if output_layer is not None and not callable(output_layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer).__name__}")
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        # The layer's output shape for a batch of unknown size, without building it.
        shapes = nest.map_structure(lambda s: tf.TensorShape([None]).concatenate(s), size)
        out = self._output_layer.compute_output_shape(shapes)
        return nest.map_structure(lambda s: s[1:], out)

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(), sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(nest.map_structure(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        with tf.name_scope(name or "BasicDecoderStep"):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished


def dynamic_decode(decoder, output_time_major=False, impute_finished=False, maximum_iterations=None,
                   parallel_iterations=32, swap_memory=False, scope=None):
    """Run `decoder` to the end: `(final_outputs, final_state, final_sequence_lengths)` (TF 1.15)."""
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with _v1.variable_scope(scope, "decoder") as varscope:
        # TF 1.15 caches variable reads outside any while loop (numbers unchanged).
        if not tf.executing_eagerly() and not _in_while_loop() and varscope.caching_device is None:
            varscope.set_caching_device(lambda op: op.device)
        if maximum_iterations is not None:
            maximum_iterations = tf.convert_to_tensor(maximum_iterations, dtype=tf.int32, name="maximum_iterations")
            if maximum_iterations.shape.rank != 0:
                raise ValueError("maximum_iterations must be a scalar")

        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = zero_state_tensors(decoder.output_size, decoder.batch_size, decoder.output_dtype)
        if maximum_iterations is not None:
            initial_finished = tf.logical_or(initial_finished, 0 >= maximum_iterations)
        initial_sequence_lengths = tf.zeros_like(initial_finished, dtype=tf.int32)
        initial_time = tf.constant(0, dtype=tf.int32)
        batch = tf.get_static_value(tf.convert_to_tensor(decoder.batch_size, name="batch_size"))

        def element_shape(s):
            if not isinstance(s, tf.TensorShape) or s.rank == 0:
                return tf.TensorShape(None)
            return tf.TensorShape([batch]).concatenate(s)

        outputs_ta = nest.map_structure(
            lambda s, d: tf.TensorArray(dtype=d, size=0, dynamic_size=True, element_shape=element_shape(s)),
            decoder.output_size, decoder.output_dtype)

        def condition(unused_time, unused_outputs_ta, unused_state, unused_inputs, finished, unused_lengths):
            return tf.logical_not(tf.reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, sequence_lengths):
            next_outputs, decoder_state, next_inputs, decoder_finished = decoder.step(time, inputs, state)
            next_finished = decoder_finished if decoder.tracks_own_finished else \
                tf.logical_or(decoder_finished, finished)
            next_sequence_lengths = tf.where(tf.logical_not(finished),
                                             tf.fill(tf.shape(sequence_lengths), time + 1), sequence_lengths)
            nest.assert_same_structure(state, decoder_state)
            nest.assert_same_structure(outputs_ta, next_outputs)
            nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                emit = nest.map_structure(lambda out, zero: tf.where(_expand(finished, out), zero, out),
                                          next_outputs, zero_outputs)

                def copy_through(new, cur):
                    if isinstance(cur, tf.TensorArray):
                        return new
                    new.set_shape(cur.shape)
                    return new if new.shape.rank == 0 else tf.where(_expand(finished, new), cur, new)

                next_state = nest.map_structure(copy_through, decoder_state, state)
            else:
                emit, next_state = next_outputs, decoder_state
            outputs_ta = nest.map_structure(lambda ta, out: ta.write(time, out), outputs_ta, emit)
            return time + 1, outputs_ta, next_state, next_inputs, next_finished, next_sequence_lengths

        res = tf.compat.v1.while_loop(
            condition, body,
            loop_vars=(initial_time, outputs_ta, initial_state, initial_inputs, initial_finished,
                       initial_sequence_lengths),
            parallel_iterations=parallel_iterations, maximum_iterations=maximum_iterations,
            swap_memory=swap_memory)
        final_outputs = nest.map_structure(lambda ta: ta.stack(), res[1])
        final_state, final_sequence_lengths = res[2], res[5]
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state, final_sequence_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_sequence_lengths


def _expand(finished, like):
    """`finished` [batch] broadcast to `like`'s rank, as TF 1's rank-1 `where` selected rows."""
    rank = like.shape.rank
    if rank is None or rank <= 1:
        return finished
    return tf.reshape(finished, tf.concat(([-1], tf.ones([rank - 1], tf.int32)), axis=0))


def _in_while_loop() -> bool:
    from tensorflow.python.ops import control_flow_util

    graph = tf.compat.v1.get_default_graph()
    context = graph._get_control_flow_context()  # noqa: SLF001 - what TF 1.15 itself asked
    return control_flow_util.GetContainingWhileContext(context) is not None

"""tf.contrib.seq2seq helpers (TF 1.15): what `BasicDecoder` feeds the cell and how it samples.

- `TrainingHelper`: reads the given inputs step by step (teacher forcing); a sequence is
  finished once its `sequence_length` is reached; sample ids are the argmax of the outputs.
- `GreedyEmbeddingHelper`: feeds the embedding of the argmax id; finished at `end_token`.
- `SampleEmbeddingHelper`: the same with ids drawn from softmax(outputs / temperature) (the
  same multinomial kernel and seed as TF 1.15's Categorical sampler).
- `InferenceHelper`, `CustomHelper`: caller-supplied sampling and next inputs.
"""
from __future__ import annotations

import abc

import tensorflow as tf

from tf1clip.contrib.seq2seq.decoder import transpose_batch_time

nest = tf.nest


def _unstack_ta(inp):
    return tf.TensorArray(dtype=inp.dtype, size=tf.shape(inp)[0], element_shape=inp.shape[1:]).unstack(inp)


def _embedding_fn(embedding):
    if callable(embedding):
        return embedding
    return lambda ids: tf.nn.embedding_lookup(embedding, ids)


class Helper(metaclass=abc.ABCMeta):
    """The sampling interface `BasicDecoder` uses (ids: int32 scalars per batch entry, unless a
    helper says otherwise)."""

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return tf.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return tf.int32

    @abc.abstractmethod
    def initialize(self, name=None):
        """`(initial_finished, initial_inputs)`."""

    @abc.abstractmethod
    def sample(self, time, outputs, state, name=None):
        """`sample_ids`."""

    @abc.abstractmethod
    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        """`(finished, next_inputs, next_state)`."""


class CustomHelper(Helper):
    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None, sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = tf.TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = sample_ids_dtype or tf.int32

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("batch_size accessed before initialize was called")
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype

    def initialize(self, name=None):
        with tf.name_scope(name or f"{type(self).__name__}Initialize"):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = tf.size(finished)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with tf.name_scope(name or f"{type(self).__name__}Sample"):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.name_scope(name or f"{type(self).__name__}NextInputs"):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state, sample_ids=sample_ids)


class TrainingHelper(Helper):
    """Reads `inputs` ([batch, time, ...], or time major); finished at `sequence_length`."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with tf.name_scope(name or "TrainingHelper"):
            inputs = nest.map_structure(lambda x: tf.convert_to_tensor(x, name="inputs"), inputs)
            if not time_major:
                inputs = nest.map_structure(transpose_batch_time, inputs)
            self._input_tas = nest.map_structure(_unstack_ta, inputs)
            self._sequence_length = tf.convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.rank != 1:
                raise ValueError("Expected sequence_length to be a vector, but received shape: "
                                 f"{self._sequence_length.shape}")
            self._zero_inputs = nest.map_structure(lambda inp: tf.zeros_like(inp[0, :]), inputs)
            self._batch_size = tf.size(sequence_length)

    @property
    def inputs(self):
        return self._input_tas

    @property
    def sequence_length(self):
        return self._sequence_length

    def initialize(self, name=None):
        with tf.name_scope(name or "TrainingHelperInitialize"):
            finished = tf.equal(0, self._sequence_length)
            next_inputs = tf.cond(tf.reduce_all(finished), lambda: self._zero_inputs,
                                  lambda: nest.map_structure(lambda inp: inp.read(0), self._input_tas))
            return finished, next_inputs

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with tf.name_scope(name or "TrainingHelperSample"):
            return tf.cast(tf.argmax(outputs, axis=-1), tf.int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with tf.name_scope(name or "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = next_time >= self._sequence_length
            next_inputs = tf.cond(tf.reduce_all(finished), lambda: self._zero_inputs,
                                  lambda: nest.map_structure(lambda inp: inp.read(next_time), self._input_tas))
            return finished, next_inputs, state


class GreedyEmbeddingHelper(Helper):
    """Feeds embedding(argmax(outputs)); a sequence is finished when it emits `end_token`."""

    def __init__(self, embedding, start_tokens, end_token):
        self._embedding_fn = _embedding_fn(embedding)
        self._start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32, name="start_tokens")
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._start_tokens.shape.rank != 1:
            raise ValueError("start_tokens must be a vector")
        self._batch_size = tf.size(start_tokens)
        if self._end_token.shape.rank != 0:
            raise ValueError("end_token must be a scalar")
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def initialize(self, name=None):
        return tf.tile([False], [self._batch_size]), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, tf.Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        return tf.argmax(outputs, axis=-1, output_type=tf.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = tf.equal(sample_ids, self._end_token)
        next_inputs = tf.cond(tf.reduce_all(finished), lambda: self._start_inputs,
                              lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Ids drawn from softmax(outputs / softmax_temperature) instead of the argmax."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None, seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        if not isinstance(outputs, tf.Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        logits = outputs if self._softmax_temperature is None else outputs / self._softmax_temperature
        # TF 1.15's Categorical(logits).sample(seed): one multinomial draw per row, int32.
        draws = tf.compat.v1.multinomial(logits, 1, seed=self._seed, output_dtype=tf.int32)
        return tf.reshape(draws, tf.shape(logits)[:-1])


class InferenceHelper(Helper):
    """Next inputs are `next_inputs_fn(sample_ids)` of `sample_fn(outputs)`; finished by `end_fn`."""

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn, next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = tf.TensorShape(sample_shape)
        self._sample_dtype = sample_dtype
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = tf.shape(start_inputs)[0]
        self._start_inputs = tf.convert_to_tensor(start_inputs, name="start_inputs")

    @property
    def sample_ids_shape(self):
        return self._sample_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_dtype

    def initialize(self, name=None):
        return tf.tile([False], [self._batch_size]), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        next_inputs = sample_ids if self._next_inputs_fn is None else self._next_inputs_fn(sample_ids)
        return self._end_fn(sample_ids), next_inputs, state

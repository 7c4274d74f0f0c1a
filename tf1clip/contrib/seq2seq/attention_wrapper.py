"""tf.contrib.seq2seq attention (TF 1.15): Luong and Bahdanau mechanisms, `AttentionWrapper`.

A mechanism keeps the encoder `memory` (zeroed past `memory_sequence_length`) as `values` and
its projection (`memory_layer`, a bias-free Dense) as `keys`. Called with the decoder's cell
output it scores every memory step, masks steps past the length with `score_mask_value`
(-inf by default) and turns the scores into alignments (softmax by default):

- Luong: score = query . key (times a learned scalar `attention_g` with `scale=True`);
- Bahdanau: score = v . tanh(key + query_layer(query)) (`normalize=True`: weight-normalized v
  with a bias, `attention_g` starting at sqrt(1 / num_units)).

`AttentionWrapper` feeds the cell `cell_input_fn(inputs, previous attention)` (concatenation by
default), then computes context = alignments . values and the attention
`attention_layer([cell_output, context])` (or the context itself without an attention layer);
its output is the attention (`output_attention=True`) or the cell output. Variable names are
TF 1.15's (`memory_layer`, `query_layer`, `attention_layer`, `luong_attention/attention_g`,
`bahdanau_attention/attention_v`...), so TF 1.x checkpoints restore.
"""
from __future__ import annotations

import collections
import math

import tensorflow as tf

from tf1clip.contrib.seq2seq.decoder import zero_state_tensors

nest = tf.nest
_v1 = tf.compat.v1


class AttentionMechanism:
    pass


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined):
    memory = nest.map_structure(lambda m: tf.convert_to_tensor(m, name="memory"), memory)
    if memory_sequence_length is not None:
        memory_sequence_length = tf.convert_to_tensor(memory_sequence_length, name="memory_sequence_length")
    if check_inner_dims_defined:
        for m in nest.flatten(memory):
            if not m.shape[2:].is_fully_defined():
                raise ValueError(f"Expected memory {m.name} to have fully defined inner dims, but saw shape: {m.shape}")
    if memory_sequence_length is None:
        return memory
    first = nest.flatten(memory)[0]
    mask = tf.sequence_mask(memory_sequence_length, maxlen=tf.shape(first)[1], dtype=first.dtype)
    batch = tf.compat.dimension_value(memory_sequence_length.shape[0]) or tf.shape(memory_sequence_length)[0]

    def masked(m):
        rank = m.shape.rank if m.shape.rank is not None else tf.rank(m)
        m_batch = tf.compat.dimension_value(m.shape[0]) or tf.shape(m)[0]
        check = tf.debugging.assert_equal(batch, m_batch, message=(
            "memory_sequence_length and memory tensor batch sizes do not match."))
        with tf.control_dependencies([check]):
            shaped = tf.reshape(mask, tf.concat((tf.shape(mask), tf.ones(rank - 2, dtype=tf.int32)), 0))
            return m * shaped

    return nest.map_structure(masked, memory)


def _mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    check = tf.debugging.assert_positive(memory_sequence_length,
                                         message="All values in memory_sequence_length must greater than zero.")
    with tf.control_dependencies([check]):
        mask = tf.sequence_mask(memory_sequence_length, maxlen=tf.shape(score)[1])
        return tf.where(mask, score, score_mask_value * tf.ones_like(score))


class _BaseAttentionMechanism(AttentionMechanism):
    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None, memory_layer=None,
                 check_inner_dims_defined=True, score_mask_value=None, name=None):
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: {type(probability_fn).__name__}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = memory_layer.dtype if memory_layer is not None else tf.float32
        if score_mask_value is None:
            score_mask_value = tf.as_dtype(self.dtype).as_numpy_dtype(-math.inf)
        self._probability_fn = lambda score, prev: probability_fn(
            _mask_score(score, memory_sequence_length, score_mask_value), prev)
        with tf.name_scope(name or "BaseAttentionMechanismInit"):
            self._values = _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined)
            self._keys = self._memory_layer(self._values) if self._memory_layer else self._values
            self._batch_size = tf.compat.dimension_value(self._keys.shape[0]) or tf.shape(self._keys)[0]
            self._alignments_size = tf.compat.dimension_value(self._keys.shape[1]) or tf.shape(self._keys)[1]

    memory_layer = property(lambda self: self._memory_layer)
    query_layer = property(lambda self: self._query_layer)
    values = property(lambda self: self._values)
    keys = property(lambda self: self._keys)
    batch_size = property(lambda self: self._batch_size)
    alignments_size = property(lambda self: self._alignments_size)
    state_size = property(lambda self: self._alignments_size)

    def initial_alignments(self, batch_size, dtype):
        return zero_state_tensors(self._alignments_size, batch_size, dtype) if isinstance(
            self._alignments_size, int) else tf.zeros(tf.stack([batch_size, self._alignments_size]), dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


def _luong_score(query, keys, attention_g):
    depth, key_units = tf.compat.dimension_value(query.shape[-1]), tf.compat.dimension_value(keys.shape[-1])
    if depth != key_units:
        raise ValueError(f"Incompatible or unknown inner dimensions between query and keys. Query ({query}) has units: "
                         f"{depth}. Keys ({keys}) have units: {key_units}. Perhaps you need to set num_units to the "
                         f"keys' dimension ({key_units})?")
    score = tf.squeeze(tf.matmul(tf.expand_dims(query, 1), keys, transpose_b=True), [1])
    return score if attention_g is None else attention_g * score


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention: score = query . (memory_layer(memory)), optionally scaled by g."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False, probability_fn=None,
                 score_mask_value=None, dtype=None, custom_key_value_fn=None, name="LuongAttention"):
        probability_fn = probability_fn or tf.nn.softmax
        super().__init__(
            query_layer=None,
            memory_layer=_v1.layers.Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype or tf.float32),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value, name=name)
        if custom_key_value_fn is not None:
            self._keys, self._values = custom_key_value_fn(self._keys, self._values)
        self._num_units, self._scale, self._name = num_units, scale, name

    def __call__(self, query, state):
        with _v1.variable_scope(None, "luong_attention", [query]):
            attention_g = None
            if self._scale:
                attention_g = _v1.get_variable("attention_g", dtype=query.dtype,
                                               initializer=_v1.ones_initializer, shape=())
            score = _luong_score(query, self._keys, attention_g)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _bahdanau_score(processed_query, keys, attention_v, attention_g=None, attention_b=None):
    processed_query = tf.expand_dims(processed_query, 1)
    if attention_g is not None and attention_b is not None:
        normed_v = attention_g * attention_v * tf.math.rsqrt(tf.reduce_sum(tf.square(attention_v)))
        return tf.reduce_sum(normed_v * tf.tanh(keys + processed_query + attention_b), [2])
    return tf.reduce_sum(attention_v * tf.tanh(keys + processed_query), [2])


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention: score = v . tanh(memory_layer(memory) + query_layer(query))."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False, probability_fn=None,
                 score_mask_value=None, dtype=None, custom_key_value_fn=None, name="BahdanauAttention"):
        probability_fn = probability_fn or tf.nn.softmax
        dtype = dtype or tf.float32
        super().__init__(
            query_layer=_v1.layers.Dense(num_units, name="query_layer", use_bias=False, dtype=dtype),
            memory_layer=_v1.layers.Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value, name=name)
        if custom_key_value_fn is not None:
            self._keys, self._values = custom_key_value_fn(self._keys, self._values)
        self._num_units, self._normalize, self._name = num_units, normalize, name

    def __call__(self, query, state):
        with _v1.variable_scope(None, "bahdanau_attention", [query]):
            processed_query = self.query_layer(query) if self.query_layer else query
            attention_v = _v1.get_variable("attention_v", [self._num_units], dtype=query.dtype)
            attention_g = attention_b = None
            if self._normalize:
                attention_g = _v1.get_variable("attention_g", dtype=query.dtype, shape=(),
                                               initializer=_v1.constant_initializer(math.sqrt(1.0 / self._num_units)))
                attention_b = _v1.get_variable("attention_b", [self._num_units], dtype=query.dtype,
                                               initializer=_v1.zeros_initializer())
            score = _bahdanau_score(processed_query, self._keys, attention_v, attention_g, attention_b)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def hardmax(logits, name=None):
    """One-hot of the argmax along the last axis, in the logits' dtype."""
    with tf.name_scope(name or "Hardmax"):
        logits = tf.convert_to_tensor(logits, name="logits")
        depth = tf.compat.dimension_value(logits.shape[-1]) or tf.shape(logits)[-1]
        return tf.one_hot(tf.argmax(logits, -1), depth, dtype=logits.dtype)


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState",
        ("cell_state", "attention", "time", "alignments", "alignment_history", "attention_state"))):
    """The wrapper's state; `clone(cell_state=...)` replaces fields and keeps the static shapes."""

    def clone(self, **kwargs):
        def same_shape(old, new):
            if isinstance(old, tf.Tensor) and isinstance(new, tf.Tensor) and not tf.executing_eagerly():
                new.set_shape(old.shape)
            return new

        return nest.map_structure(same_shape, self, super()._replace(**kwargs))


def _compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = tf.squeeze(tf.matmul(tf.expand_dims(alignments, 1), attention_mechanism.values), [1])
    attention = context if attention_layer is None else attention_layer(tf.concat([cell_output, context], 1))
    return attention, alignments, next_attention_state


def attention_wrapper_class():
    """AttentionWrapper on TF 1.x's RNNCell base (tf-keras' legacy cells), made on first use."""
    base = _v1.nn.rnn_cell.RNNCell

    class AttentionWrapper(base):
        """Wraps `cell` with one attention mechanism (or a list of them), as TF 1.15 did."""

        def __init__(self, cell, attention_mechanism, attention_layer_size=None, alignment_history=False,
                     cell_input_fn=None, output_attention=True, initial_cell_state=None, name=None,
                     attention_layer=None, attention_fn=None):
            super().__init__(name=name)
            self._is_multi = isinstance(attention_mechanism, (list, tuple))
            mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
            for mechanism in mechanisms:
                if not isinstance(mechanism, AttentionMechanism):
                    raise TypeError(f"attention_mechanism must be an AttentionMechanism or list of multiple "
                                    f"AttentionMechanism instances, saw type: {type(mechanism).__name__}")
            if cell_input_fn is None:
                cell_input_fn = lambda inputs, attention: tf.concat([inputs, attention], -1)  # noqa: E731
            elif not callable(cell_input_fn):
                raise TypeError(f"cell_input_fn must be callable, saw type: {type(cell_input_fn).__name__}")
            if attention_layer_size is not None and attention_layer is not None:
                raise ValueError("Only one of attention_layer_size and attention_layer should be set")
            if attention_layer_size is not None:
                sizes = tuple(attention_layer_size if isinstance(attention_layer_size, (list, tuple))
                              else (attention_layer_size,))
                if len(sizes) != len(mechanisms):
                    raise ValueError(f"If provided, attention_layer_size must contain exactly one integer per "
                                     f"attention_mechanism, saw: {len(sizes)} vs {len(mechanisms)}")
                self._attention_layers = tuple(
                    _v1.layers.Dense(size, name="attention_layer", use_bias=False, dtype=mechanisms[i].dtype)
                    for i, size in enumerate(sizes))
                self._attention_layer_size = sum(sizes)
            elif attention_layer is not None:
                self._attention_layers = tuple(attention_layer if isinstance(attention_layer, (list, tuple))
                                               else (attention_layer,))
                if len(self._attention_layers) != len(mechanisms):
                    raise ValueError("If provided, attention_layer must contain exactly one layer per "
                                     "attention_mechanism")
                self._attention_layer_size = sum(
                    tf.compat.dimension_value(layer.compute_output_shape(
                        [None, cell.output_size + tf.compat.dimension_value(m.values.shape[-1])])[-1])
                    for layer, m in zip(self._attention_layers, mechanisms))
            else:
                self._attention_layers = None
                self._attention_layer_size = sum(tf.compat.dimension_value(m.values.shape[-1]) for m in mechanisms)
            self._attention_fn = attention_fn or _compute_attention
            self._cell = cell
            self._attention_mechanisms = mechanisms
            self._cell_input_fn = cell_input_fn
            self._output_attention = output_attention
            self._alignment_history = alignment_history
            with tf.name_scope(name or "AttentionWrapperInit"):
                if initial_cell_state is None:
                    self._initial_cell_state = None
                else:
                    last = nest.flatten(initial_cell_state)[-1]
                    batch = tf.compat.dimension_value(last.shape[0]) or tf.shape(last)[0]
                    with tf.control_dependencies(self._batch_size_checks(batch, "initial_cell_state")):
                        self._initial_cell_state = nest.map_structure(
                            lambda s: tf.identity(s, name="check_initial_cell_state"), initial_cell_state)

        def _batch_size_checks(self, batch_size, what):
            message = (f"When constructing AttentionWrapper {self.name}: the batch size of {what} does not match "
                       "the batch_size of the attention mechanism (its memory)")
            return [tf.debugging.assert_equal(batch_size, m.batch_size, message=message)
                    for m in self._attention_mechanisms]

        def _item_or_tuple(self, seq):
            t = tuple(seq)
            return t if self._is_multi else t[0]

        @property
        def output_size(self):
            return self._attention_layer_size if self._output_attention else self._cell.output_size

        @property
        def state_size(self):
            return AttentionWrapperState(
                cell_state=self._cell.state_size, time=tf.TensorShape([]), attention=self._attention_layer_size,
                alignments=self._item_or_tuple(m.alignments_size for m in self._attention_mechanisms),
                attention_state=self._item_or_tuple(m.state_size for m in self._attention_mechanisms),
                alignment_history=self._item_or_tuple(
                    m.alignments_size if self._alignment_history else () for m in self._attention_mechanisms))

        def zero_state(self, batch_size, dtype):
            with tf.name_scope(type(self).__name__ + "ZeroState"):
                cell_state = self._initial_cell_state if self._initial_cell_state is not None \
                    else self._cell.zero_state(batch_size, dtype)
                with tf.control_dependencies(self._batch_size_checks(batch_size, "the zero_state batch_size")):
                    cell_state = nest.map_structure(lambda s: tf.identity(s, name="checked_cell_state"), cell_state)
                initial_alignments = [m.initial_alignments(batch_size, dtype) for m in self._attention_mechanisms]
                return AttentionWrapperState(
                    cell_state=cell_state, time=tf.zeros([], dtype=tf.int32),
                    attention=zero_state_tensors(self._attention_layer_size, batch_size, dtype),
                    alignments=self._item_or_tuple(initial_alignments),
                    attention_state=self._item_or_tuple(m.initial_state(batch_size, dtype)
                                                        for m in self._attention_mechanisms),
                    alignment_history=self._item_or_tuple(
                        tf.TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                        if self._alignment_history else () for a in initial_alignments))

        def call(self, inputs, state):
            if not isinstance(state, AttentionWrapperState):
                raise TypeError(f"Expected state to be instance of AttentionWrapperState. Received type "
                                f"{type(state)} instead.")
            cell_inputs = self._cell_input_fn(inputs, state.attention)
            cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
            batch = tf.compat.dimension_value(cell_output.shape[0]) or tf.shape(cell_output)[0]
            with tf.control_dependencies(self._batch_size_checks(batch, "the cell output")):
                cell_output = tf.identity(cell_output, name="checked_cell_output")
            previous_states = state.attention_state if self._is_multi else [state.attention_state]
            previous_histories = state.alignment_history if self._is_multi else [state.alignment_history]
            alignments_all, attentions, attention_states, histories = [], [], [], []
            for i, mechanism in enumerate(self._attention_mechanisms):
                attention, alignments, next_attention_state = self._attention_fn(
                    mechanism, cell_output, previous_states[i],
                    self._attention_layers[i] if self._attention_layers else None)
                history = previous_histories[i].write(state.time, alignments) if self._alignment_history else ()
                attention_states.append(next_attention_state)
                alignments_all.append(alignments)
                histories.append(history)
                attentions.append(attention)
            attention = tf.concat(attentions, 1)
            next_state = AttentionWrapperState(
                time=state.time + 1, cell_state=next_cell_state, attention=attention,
                attention_state=self._item_or_tuple(attention_states),
                alignments=self._item_or_tuple(alignments_all), alignment_history=self._item_or_tuple(histories))
            return (attention if self._output_attention else cell_output), next_state

    return AttentionWrapper

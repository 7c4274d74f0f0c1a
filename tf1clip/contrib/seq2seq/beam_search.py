"""tf.contrib.seq2seq beam search (TF 1.15): `BeamSearchDecoder`, `gather_tree`, `tile_batch`.

Each step takes the log-softmax of every beam's logits (a finished beam may only emit
`end_token`, at log-probability 0), adds it to the beam's log-probability, scores each
continuation (divided by the length penalty ((5 + length) / 6) ** weight; plus the coverage
penalty of attention models), keeps the best `beam_width` of the beam_width x vocab
continuations per batch entry, and gathers the cell states of their parent beams. A beam's
length grows by one until it has emitted `end_token` (the end token counts), but the length
that scores the end-token continuation itself does not count it yet: TF 1.15's arithmetic,
kept (tests/test_contrib_seq2seq.py enumerates every hypothesis to check it). `finalize`
rebuilds each beam's ids from the parent pointers (`gather_tree`: after the first end token
every id is `end_token`). TF 2.21 has no GatherTree kernel; `gather_tree` is a backward
`tf.while_loop` over time with the kernel's semantics.
"""
from __future__ import annotations

import collections

import numpy as np
import tensorflow as tf

from tf1clip.contrib.seq2seq.attention_wrapper import AttentionWrapperState
from tf1clip.contrib.seq2seq.decoder import Decoder

nest = tf.nest


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths", "accumulated_attention_probs"))):
    pass


class BeamSearchDecoderOutput(collections.namedtuple("BeamSearchDecoderOutput",
                                                     ("scores", "predicted_ids", "parent_ids"))):
    pass


class FinalBeamSearchDecoderOutput(collections.namedtuple("FinalBeamDecoderOutput",
                                                          ["predicted_ids", "beam_search_decoder_output"])):
    pass


def _tile(t, multiplier):
    t = tf.convert_to_tensor(t, name="t")
    if t.shape.rank is None or t.shape.rank < 1:
        raise ValueError("t must have statically known rank")
    shape = tf.shape(t)
    tiling = [1] * (t.shape.rank + 1)
    tiling[1] = multiplier
    tiled = tf.tile(tf.expand_dims(t, 1), tiling)
    tiled = tf.reshape(tiled, tf.concat(([shape[0] * multiplier], shape[1:]), 0))
    static = tf.compat.dimension_value(t.shape[0])
    tiled.set_shape(tf.TensorShape([static * multiplier if static is not None else None]).concatenate(t.shape[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    """Each batch entry repeated `multiplier` times in a row ([b0, b1] -> [b0, b0, b1, b1])."""
    with tf.name_scope(name or "tile_batch"):
        return nest.map_structure(lambda x: _tile(x, multiplier), t)


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The ids of each final beam, followed back through its parents ([time, batch, beam])."""
    with tf.name_scope(name or "gather_tree"):
        step_ids = tf.convert_to_tensor(step_ids)
        parent_ids = tf.cast(parent_ids, step_ids.dtype)
        end_token = tf.cast(end_token, step_ids.dtype)
        max_time, batch, beam = tf.shape(step_ids)[0], tf.shape(step_ids)[1], tf.shape(step_ids)[2]
        lengths = tf.minimum(tf.cast(max_sequence_lengths, tf.int32), max_time)  # [batch]
        batch_index = tf.tile(tf.range(batch)[:, None], [1, beam])
        last = tf.maximum(lengths - 1, 0)
        parent = tf.tile(tf.range(beam, dtype=step_ids.dtype)[None, :], [batch, 1])  # the beam followed
        out = tf.TensorArray(step_ids.dtype, size=max_time)

        def body(t, parent, out):
            in_range = t <= last[:, None]                       # within the beam's sequence
            idx = tf.stack([batch_index, tf.cast(parent, tf.int32)], -1)
            ids = tf.gather_nd(step_ids[t], idx)
            new_parent = tf.gather_nd(parent_ids[t], idx)
            out = out.write(t, tf.where(in_range, ids, tf.fill(tf.shape(ids), end_token)))
            return t - 1, tf.where(in_range, new_parent, parent), out

        _, _, out = tf.while_loop(lambda t, *_: t >= 0, body, (max_time - 1, parent, out))
        beams = out.stack()                                      # [time, batch, beam]
        # After the first end token, every id is the end token (GatherTree's last pass).
        is_end = tf.cast(tf.equal(beams, end_token), tf.int32)
        ended_before = tf.cumsum(is_end, axis=0, exclusive=True) > 0
        beams = tf.where(ended_before, tf.fill(tf.shape(beams), end_token), beams)
        empty = tf.reshape(lengths <= 0, [1, -1, 1])
        return tf.where(tf.broadcast_to(empty, tf.shape(beams)), tf.fill(tf.shape(beams), end_token), beams)


def _check_maybe(t):
    if t.shape.rank is None:
        raise ValueError(f"Expected tensor ({t.name}) to have known rank, but ndims == None.")


def _tensor_gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape, name=None):
    with tf.name_scope(name or "tensor_gather_helper"):
        range_ = tf.expand_dims(tf.range(batch_size) * range_size, 1)
        gather_indices = tf.reshape(gather_indices + range_, [-1])
        output = tf.gather(tf.reshape(gather_from, gather_shape), gather_indices)
        final_shape = tf.shape(gather_from)[:1 + len(gather_shape)]
        static_batch_size = tf.get_static_value(batch_size)
        final_static_shape = tf.TensorShape([static_batch_size]).concatenate(gather_from.shape[1:1 + len(gather_shape)])
        output = tf.reshape(output, final_shape, name="output")
        output.set_shape(final_static_shape)
        return output


def _maybe_tensor_gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape):
    if isinstance(gather_from, tf.TensorArray):
        return gather_from
    _check_maybe(gather_from)
    if gather_from.shape.rank >= len(gather_shape):
        return _tensor_gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape)
    return gather_from


def _mask_probs(probs, eos_token, finished):
    """A finished beam's next log-probabilities: 0 for eos_token, the dtype's minimum elsewhere."""
    vocab_size = tf.shape(probs)[2]
    finished_row = tf.one_hot(eos_token, vocab_size, dtype=probs.dtype, on_value=tf.constant(0.0, probs.dtype),
                              off_value=probs.dtype.min)
    finished_probs = tf.tile(tf.reshape(finished_row, [1, 1, -1]), tf.concat([tf.shape(finished), [1]], 0))
    finished_mask = tf.tile(tf.expand_dims(finished, 2), [1, 1, vocab_size])
    return tf.where(finished_mask, finished_probs, probs)


def _length_penalty(sequence_lengths, penalty_factor):
    penalty_factor = tf.convert_to_tensor(penalty_factor, name="penalty_factor")
    penalty_factor.set_shape(())
    static = tf.get_static_value(penalty_factor)
    if static is not None and static == 0:
        return 1.0
    return tf.math.divide((5.0 + tf.cast(sequence_lengths, tf.float32)) ** penalty_factor, (5.0 + 1.0) ** penalty_factor)


def _attention_probs(state):
    probs = state.alignments
    if isinstance(probs, tuple):
        probs = tf.reduce_mean(tf.concat([tf.expand_dims(p, -1) for p in probs], -1), -1)
    return probs


def get_attention_probs(next_cell_state, coverage_penalty_weight):
    if coverage_penalty_weight == 0.0:
        return None
    if isinstance(next_cell_state, AttentionWrapperState):
        per_layer = [_attention_probs(next_cell_state)]
    else:
        per_layer = [_attention_probs(s) for s in next_cell_state if isinstance(s, AttentionWrapperState)] \
            if isinstance(next_cell_state, tuple) else []
    if not per_layer:
        raise ValueError("coverage_penalty_weight must be 0.0 if no cell is attentional.")
    if len(per_layer) == 1:
        return per_layer[0]
    return tf.reduce_mean(tf.concat([tf.expand_dims(p, -1) for p in per_layer], -1), -1)


def _get_scores(log_probs, sequence_lengths, length_penalty_weight, coverage_penalty_weight, finished,
                accumulated_attention_probs):
    scores = log_probs / tf.cast(_length_penalty(sequence_lengths, length_penalty_weight), log_probs.dtype)
    coverage_penalty_weight = tf.convert_to_tensor(coverage_penalty_weight, name="coverage_penalty_weight")
    if coverage_penalty_weight.shape.rank != 0:
        raise ValueError(f"coverage_penalty_weight should be a scalar, but saw shape: {coverage_penalty_weight.shape}")
    if tf.get_static_value(coverage_penalty_weight) == 0.0:
        return scores
    if accumulated_attention_probs is None:
        raise ValueError("accumulated_attention_probs can be None only if coverage penalty is disabled.")
    accumulated = tf.where(tf.equal(accumulated_attention_probs, 0.0), tf.ones_like(accumulated_attention_probs),
                           accumulated_attention_probs)
    coverage_penalty = tf.reduce_sum(tf.math.log(tf.minimum(accumulated, 1.0)), 2)
    coverage_penalty *= tf.cast(finished, tf.float32)
    return scores + tf.expand_dims(coverage_penalty * coverage_penalty_weight, 2)


def _beam_search_step(time, logits, next_cell_state, beam_state, batch_size, beam_width, end_token,
                      length_penalty_weight, coverage_penalty_weight):
    static_batch_size = tf.get_static_value(batch_size)
    prediction_lengths = beam_state.lengths
    previously_finished = beam_state.finished
    not_finished = tf.logical_not(previously_finished)
    step_log_probs = _mask_probs(tf.nn.log_softmax(logits), end_token, previously_finished)
    total_probs = tf.expand_dims(beam_state.log_probs, 2) + step_log_probs
    vocab_size = tf.compat.dimension_value(logits.shape[-1]) or tf.shape(logits)[-1]
    lengths_to_add = tf.one_hot(tf.fill([batch_size, beam_width], end_token), depth=vocab_size,
                                on_value=np.int64(0), off_value=np.int64(1), dtype=tf.int64)
    lengths_to_add *= tf.expand_dims(tf.cast(not_finished, tf.int64), 2)
    new_prediction_lengths = lengths_to_add + tf.expand_dims(prediction_lengths, 2)
    accumulated_attention_probs = None
    attention_probs = get_attention_probs(next_cell_state, coverage_penalty_weight)
    if attention_probs is not None:
        attention_probs *= tf.expand_dims(tf.cast(not_finished, tf.float32), 2)
        accumulated_attention_probs = beam_state.accumulated_attention_probs + attention_probs
    scores = _get_scores(total_probs, new_prediction_lengths, length_penalty_weight, coverage_penalty_weight,
                         previously_finished, accumulated_attention_probs)
    scores_flat = tf.reshape(scores, [batch_size, -1])
    next_beam_scores, word_indices = tf.nn.top_k(scores_flat, k=beam_width)
    next_beam_scores.set_shape([static_batch_size, beam_width])
    word_indices.set_shape([static_batch_size, beam_width])
    next_beam_probs = _tensor_gather_helper(word_indices, total_probs, batch_size, beam_width * vocab_size, [-1],
                                            name="next_beam_probs")
    next_word_ids = tf.cast(tf.math.floormod(word_indices, vocab_size, name="next_beam_word_ids"), tf.int32)
    next_beam_ids = tf.cast(word_indices / vocab_size, tf.int32, name="next_beam_parent_ids")
    previously_finished = _tensor_gather_helper(next_beam_ids, previously_finished, batch_size, beam_width, [-1])
    next_finished = tf.logical_or(previously_finished, tf.equal(next_word_ids, end_token), name="next_beam_finished")
    # Finished beams keep their length; the others (also those ending now) grow by one.
    next_prediction_len = _tensor_gather_helper(next_beam_ids, beam_state.lengths, batch_size, beam_width, [-1])
    next_prediction_len += tf.cast(tf.logical_not(previously_finished), tf.int64)
    next_accumulated = ()
    if accumulated_attention_probs is not None:
        next_accumulated = _tensor_gather_helper(next_beam_ids, accumulated_attention_probs, batch_size, beam_width,
                                                 [batch_size * beam_width, -1],
                                                 name="next_accumulated_attention_probs")
    next_cell_state = nest.map_structure(
        lambda gather_from: _maybe_tensor_gather_helper(next_beam_ids, gather_from, batch_size, beam_width,
                                                        [batch_size * beam_width, -1]), next_cell_state)
    next_state = BeamSearchDecoderState(cell_state=next_cell_state, log_probs=next_beam_probs,
                                        lengths=next_prediction_len, finished=next_finished,
                                        accumulated_attention_probs=next_accumulated)
    return BeamSearchDecoderOutput(next_beam_scores, next_word_ids, next_beam_ids), next_state


class BeamSearchDecoder(Decoder):
    """Beam search over a cell (its initial state tiled `beam_width` times, e.g. by tile_batch)."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width, output_layer=None,
                 length_penalty_weight=0.0, coverage_penalty_weight=0.0, reorder_tensor_arrays=True):
        if not callable(cell):
            raise TypeError(f"cell must be callable, saw type: {type(cell).__name__}")
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._embedding_fn = embedding if callable(embedding) else \
            (lambda ids: tf.nn.embedding_lookup(embedding, ids))
        self._start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32, name="start_tokens")
        if self._start_tokens.shape.rank != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name="end_token")
        if self._end_token.shape.rank != 0:
            raise ValueError("end_token must be a scalar")
        self._batch_size = tf.size(start_tokens)
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        self._initial_cell_state = nest.map_structure(self._maybe_split_batch_beams, initial_state,
                                                      self._cell.state_size)
        self._start_tokens = tf.tile(tf.expand_dims(self._start_tokens, 1), [1, self._beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = tf.one_hot(tf.zeros([self._batch_size], dtype=tf.int32), depth=self._beam_width,
                                    on_value=False, off_value=True, dtype=tf.bool)

    @property
    def batch_size(self):
        return self._batch_size

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        shapes = nest.map_structure(lambda s: tf.TensorShape([None]).concatenate(s), size)
        return nest.map_structure(lambda s: s[1:], self._output_layer.compute_output_shape(shapes))

    @property
    def tracks_own_finished(self):
        return True

    @property
    def output_size(self):
        shape = tf.TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=shape, predicted_ids=shape, parent_ids=shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=nest.map_structure(lambda _: dtype, self._rnn_output_size()),
                                       predicted_ids=tf.int32, parent_ids=tf.int32)

    def initialize(self, name=None):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = tf.one_hot(tf.zeros([self._batch_size], dtype=tf.int32), depth=self._beam_width,
                               on_value=tf.constant(0.0, dtype), off_value=tf.constant(-np.inf, dtype), dtype=dtype)
        attention = get_attention_probs(self._initial_cell_state, self._coverage_penalty_weight)
        state = BeamSearchDecoderState(cell_state=self._initial_cell_state, log_probs=log_probs,
                                       finished=self._finished,
                                       lengths=tf.zeros([self._batch_size, self._beam_width], dtype=tf.int64),
                                       accumulated_attention_probs=() if attention is None else attention)
        return self._finished, self._start_inputs, state

    def step(self, time, inputs, state, name=None):
        with tf.name_scope(name or "BeamSearchDecoderStep"):
            inputs = nest.map_structure(lambda inp: self._merge_batch_beams(inp, s=inp.shape[2:]), inputs)
            cell_state = nest.map_structure(self._maybe_merge_batch_beams, state.cell_state, self._cell.state_size)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = nest.map_structure(lambda out: self._split_batch_beams(out, out.shape[1:]), cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split_batch_beams, next_cell_state,
                                                 self._cell.state_size)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, beam_state = _beam_search_step(time, cell_outputs, next_cell_state, state, self._batch_size,
                                                   self._beam_width, self._end_token, self._length_penalty_weight,
                                                   self._coverage_penalty_weight)
            finished = beam_state.finished
            next_inputs = tf.cond(tf.reduce_all(finished), lambda: self._start_inputs,
                                  lambda: self._embedding_fn(output.predicted_ids))
        return output, beam_state, next_inputs, finished

    def finalize(self, outputs, final_state, sequence_lengths):
        max_sequence_lengths = tf.cast(tf.reduce_max(final_state.lengths, axis=1), tf.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, max_sequence_lengths, self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=nest.map_structure(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids, final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(beam_search_decoder_output=outputs, predicted_ids=predicted_ids), \
            final_state

    # -- [batch, beam, ...] <-> [batch * beam, ...] ------------------------------------------------
    def _merge_batch_beams(self, t, s=None):
        s = _as_shape(s)
        static = tf.get_static_value(self._batch_size)
        reshaped = tf.reshape(t, tf.concat(([self._batch_size * self._beam_width], tf.shape(t)[2:]), 0))
        reshaped.set_shape(tf.TensorShape([None if static is None else static * self._beam_width]).concatenate(s))
        return reshaped

    def _split_batch_beams(self, t, s=None):
        s = _as_shape(s)
        reshaped = tf.reshape(t, tf.concat(([self._batch_size, self._beam_width], tf.shape(t)[1:]), 0))
        expected = tf.TensorShape([tf.get_static_value(self._batch_size), self._beam_width]).concatenate(s)
        if not reshaped.shape.is_compatible_with(expected):
            raise ValueError("Unexpected behavior when reshaping between beam width and batch size. The reshaped "
                             f"tensor has shape: {reshaped.shape}. We expected it to have shape (batch_size, "
                             f"beam_width, depth) == {expected}. Perhaps you forgot to create a zero_state with "
                             "batch_size=encoder_batch_size * beam_width?")
        reshaped.set_shape(expected)
        return reshaped

    def _maybe_split_batch_beams(self, t, s):
        if isinstance(t, tf.TensorArray):
            return t
        _check_maybe(t)
        return self._split_batch_beams(t, s) if t.shape.rank >= 1 else t

    def _maybe_merge_batch_beams(self, t, s):
        if isinstance(t, tf.TensorArray):
            return t
        _check_maybe(t)
        return self._merge_batch_beams(t, s) if t.shape.rank >= 2 else t

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        """A TensorArray of per-step [batch, beam, ...] values (alignment history), in final beam order."""
        if not isinstance(t, tf.TensorArray):
            return t
        stacked = t.stack()
        if stacked.shape.rank is None or stacked.shape.rank < 3:
            return t
        return _gather_tree_from_array(stacked, parent_ids, sequence_length)


def _as_shape(s):
    """A state size as a shape (a size that is a tensor: its static value, or unknown)."""
    if isinstance(s, tf.Tensor):
        value = tf.get_static_value(s)
        return tf.TensorShape(None if value is None else value)
    return tf.TensorShape(s)


def _gather_tree_from_array(t, parent_ids, sequence_length):
    max_time, batch_size, beam_width = (tf.compat.dimension_value(parent_ids.shape[i]) or tf.shape(parent_ids)[i]
                                        for i in range(3))
    beam_ids = tf.tile(tf.expand_dims(tf.expand_dims(tf.range(beam_width), 0), 0), [max_time, batch_size, 1])
    max_sequence_lengths = tf.cast(tf.reduce_max(sequence_length, axis=1), tf.int32)
    sorted_beam_ids = gather_tree(beam_ids, parent_ids, max_sequence_lengths, end_token=beam_width + 1)
    in_bound_steps = tf.transpose(tf.sequence_mask(sequence_length, maxlen=max_time), perm=[2, 0, 1])
    sorted_beam_ids = tf.where(in_bound_steps, sorted_beam_ids, beam_ids)
    time_ind = tf.tile(tf.reshape(tf.range(max_time), [-1, 1, 1]), [1, batch_size, beam_width])
    batch_ind = tf.transpose(tf.tile(tf.reshape(tf.range(batch_size), [-1, 1, 1]), [1, max_time, beam_width]),
                             perm=[1, 0, 2])
    indices = tf.stack([time_ind, batch_ind, sorted_beam_ids], -1)
    final_shape = tf.shape(t)
    ordered = tf.gather_nd(tf.reshape(t, [max_time, batch_size, beam_width, -1]), indices)
    return tf.reshape(ordered, final_shape)

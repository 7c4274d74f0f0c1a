"""tf.contrib.crf (TF 1.15): a linear-chain CRF over [batch, time, tags] unary scores.

- `crf_sequence_score`: unary scores of the given tags plus transitions[tag_t, tag_t+1], both
  within each sequence's length (0 for a length of 0);
- `crf_log_norm`: log of the sum over all tag sequences of exp(score), by the forward algorithm
  (`CrfForwardRnnCell` in `dynamic_rnn`, log-sum-exp over the previous tag);
- `crf_log_likelihood`: score - log_norm, with a `transitions` [tags, tags] variable made in
  the current variable scope when none is given;
- `crf_decode` (in the graph) and `viterbi_decode` (NumPy): the best tag sequence and its score.
"""
import numpy as np
import tensorflow as tf

from tf1clip.contrib import forward

_v1 = tf.compat.v1


def _cond_on_single_step(inputs, single, multi):
    """TF 1.15's smart_cond on max_seq_len == 1 (static when the shape says so)."""
    static = tf.compat.dimension_value(inputs.shape[1])
    if static is not None:
        return single() if static == 1 else multi()
    return tf.cond(tf.equal(tf.shape(inputs)[1], 1), single, multi)


def _lengths_to_masks(lengths, max_length):
    return tf.sequence_mask(lengths, max_length, dtype=tf.float32)


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    batch_size, max_seq_len, num_tags = tf.shape(inputs)[0], tf.shape(inputs)[1], tf.shape(inputs)[2]
    flattened_inputs = tf.reshape(inputs, [-1])
    offsets = tf.expand_dims(tf.range(batch_size) * max_seq_len * num_tags, 1)
    offsets += tf.expand_dims(tf.range(max_seq_len) * num_tags, 0)
    if tag_indices.dtype == tf.int64:
        offsets = tf.cast(offsets, tf.int64)
    flattened_tag_indices = tf.reshape(offsets + tag_indices, [-1])
    unary_scores = tf.reshape(tf.gather(flattened_inputs, flattened_tag_indices), [batch_size, max_seq_len])
    masks = _lengths_to_masks(sequence_lengths, tf.shape(tag_indices)[1])
    return tf.reduce_sum(unary_scores * masks, 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    num_tags = tf.compat.dimension_value(transition_params.shape[0])
    num_transitions = tf.shape(tag_indices)[1] - 1
    start_tag_indices = tf.slice(tag_indices, [0, 0], [-1, num_transitions])
    end_tag_indices = tf.slice(tag_indices, [0, 1], [-1, num_transitions])
    flattened_transition_indices = start_tag_indices * num_tags + end_tag_indices
    binary_scores = tf.gather(tf.reshape(transition_params, [-1]), flattened_transition_indices)
    masks = _lengths_to_masks(sequence_lengths, tf.shape(tag_indices)[1])
    return tf.reduce_sum(binary_scores * tf.slice(masks, [0, 1], [-1, -1]), 1)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    def single():
        batch_size = tf.shape(inputs, out_type=tag_indices.dtype)[0]
        example_inds = tf.reshape(tf.range(batch_size, dtype=tag_indices.dtype), [-1, 1])
        scores = tf.gather_nd(tf.squeeze(inputs, [1]), tf.concat([example_inds, tag_indices], axis=1))
        return tf.where(tf.less_equal(sequence_lengths, 0), tf.zeros_like(scores), scores)

    def multi():
        return crf_unary_score(tag_indices, sequence_lengths, inputs) + \
            crf_binary_score(tag_indices, sequence_lengths, transition_params)

    return _cond_on_single_step(inputs, single, multi)


class CrfForwardRnnCell:
    """One step of the forward algorithm: alpha_t = x_t + logsumexp_i(alpha_{t-1}[i] + T[i, :])."""

    def __init__(self, transition_params):
        self._transition_params = tf.expand_dims(transition_params, 0)
        self._num_tags = tf.compat.dimension_value(transition_params.shape[0])

    state_size = property(lambda self: self._num_tags)
    output_size = property(lambda self: self._num_tags)

    def zero_state(self, batch_size, dtype):
        return tf.zeros([batch_size, self._num_tags], dtype)

    def __call__(self, inputs, state, scope=None):
        new_alphas = inputs + tf.reduce_logsumexp(tf.expand_dims(state, 2) + self._transition_params, [1])
        return new_alphas, new_alphas


def crf_log_norm(inputs, sequence_lengths, transition_params):
    first_input = tf.squeeze(tf.slice(inputs, [0, 0, 0], [-1, 1, -1]), [1])

    def single():
        log_norm = tf.reduce_logsumexp(first_input, [1])
        return tf.where(tf.less_equal(sequence_lengths, 0), tf.zeros_like(log_norm), log_norm)

    def multi():
        rest = tf.slice(inputs, [0, 1, 0], [-1, -1, -1])
        lengths_less_one = tf.maximum(tf.constant(0, dtype=sequence_lengths.dtype), sequence_lengths - 1)
        _, alphas = _v1.nn.dynamic_rnn(cell=CrfForwardRnnCell(transition_params), inputs=rest,
                                       sequence_length=lengths_less_one, initial_state=first_input,
                                       dtype=tf.float32)
        log_norm = tf.reduce_logsumexp(alphas, [1])
        return tf.where(tf.less_equal(sequence_lengths, 0), tf.zeros_like(log_norm), log_norm)

    return tf.cond(tf.equal(tf.shape(inputs)[1], 1), single, multi)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    num_tags = tf.compat.dimension_value(inputs.shape[2])
    if transition_params is None:
        transition_params = _v1.get_variable("transitions", [num_tags, num_tags])
    sequence_scores = crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params)
    log_norm = crf_log_norm(inputs, sequence_lengths, transition_params)
    return sequence_scores - log_norm, transition_params


def viterbi_decode(score, transition_params):
    """The best tag sequence of one [seq_len, tags] score matrix, and its score (NumPy)."""
    trellis = np.zeros_like(score)
    backpointers = np.zeros_like(score, dtype=np.int32)
    trellis[0] = score[0]
    for t in range(1, score.shape[0]):
        v = np.expand_dims(trellis[t - 1], 1) + transition_params
        trellis[t] = score[t] + np.max(v, 0)
        backpointers[t] = np.argmax(v, 0)
    viterbi = [np.argmax(trellis[-1])]
    for bp in reversed(backpointers[1:]):
        viterbi.append(bp[viterbi[-1]])
    viterbi.reverse()
    return viterbi, np.max(trellis[-1])


class CrfDecodeForwardRnnCell:
    """Viterbi forward step: best previous tag (backpointer) and the new scores."""

    def __init__(self, transition_params):
        self._transition_params = tf.expand_dims(transition_params, 0)
        self._num_tags = tf.compat.dimension_value(transition_params.shape[0])

    state_size = property(lambda self: self._num_tags)
    output_size = property(lambda self: self._num_tags)

    def zero_state(self, batch_size, dtype):
        return tf.zeros([batch_size, self._num_tags], dtype)

    def __call__(self, inputs, state, scope=None):
        transition_scores = tf.expand_dims(state, 2) + self._transition_params
        new_state = inputs + tf.reduce_max(transition_scores, [1])
        return tf.cast(tf.argmax(transition_scores, 1), tf.int32), new_state


class CrfDecodeBackwardRnnCell:
    """Viterbi backtrack step: the tag its backpointer names."""

    def __init__(self, num_tags):
        self._num_tags = num_tags

    state_size = property(lambda self: 1)
    output_size = property(lambda self: 1)

    def zero_state(self, batch_size, dtype):
        return tf.zeros([batch_size, 1], dtype)

    def __call__(self, inputs, state, scope=None):
        state = tf.squeeze(state, axis=[1])
        indices = tf.stack([tf.range(tf.shape(inputs)[0]), state], axis=1)
        new_tags = tf.expand_dims(tf.gather_nd(inputs, indices), axis=-1)
        return new_tags, new_tags


def crf_decode(potentials, transition_params, sequence_length):
    def single():
        squeezed = tf.squeeze(potentials, [1])
        decode_tags = tf.expand_dims(tf.argmax(squeezed, axis=1), 1)
        return tf.cast(decode_tags, tf.int32), tf.reduce_max(squeezed, axis=1)

    def multi():
        num_tags = tf.compat.dimension_value(potentials.shape[2])
        initial_state = tf.squeeze(tf.slice(potentials, [0, 0, 0], [-1, 1, -1]), axis=[1])
        inputs = tf.slice(potentials, [0, 1, 0], [-1, -1, -1])
        lengths_less_one = tf.maximum(tf.constant(0, dtype=sequence_length.dtype), sequence_length - 1)
        backpointers, last_score = _v1.nn.dynamic_rnn(CrfDecodeForwardRnnCell(transition_params), inputs=inputs,
                                                      sequence_length=lengths_less_one,
                                                      initial_state=initial_state, time_major=False,
                                                      dtype=tf.int32)
        backpointers = tf.reverse_sequence(backpointers, lengths_less_one, seq_axis=1)
        initial_tags = tf.expand_dims(tf.cast(tf.argmax(last_score, axis=1), tf.int32), axis=-1)
        decode_tags, _ = _v1.nn.dynamic_rnn(CrfDecodeBackwardRnnCell(num_tags), inputs=backpointers,
                                            sequence_length=lengths_less_one, initial_state=initial_tags,
                                            time_major=False, dtype=tf.int32)
        decode_tags = tf.concat([initial_tags, tf.squeeze(decode_tags, axis=[2])], axis=1)
        decode_tags = tf.reverse_sequence(decode_tags, sequence_length, seq_axis=1)
        return decode_tags, tf.reduce_max(last_score, axis=1)

    return _cond_on_single_step(potentials, single, multi)


__getattr__ = forward(__name__, "tf.contrib.crf")

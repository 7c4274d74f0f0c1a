"""tf.contrib.legacy_seq2seq (TF 1.15): list-of-tensors seq2seq models, decoders and losses.

Inputs are Python lists with one [batch] (ids) or [batch, depth] tensor per step, as in TF 1.x.
Models: `basic_rnn_seq2seq`, `tied_rnn_seq2seq`, `embedding_rnn_seq2seq`,
`embedding_attention_seq2seq` (the encoder cell is a deep copy of `cell`, as in TF 1.15);
decoders: `rnn_decoder`, `embedding_rnn_decoder`, `attention_decoder` (Bahdanau-style heads on
a 1x1 convolution of the attention states: variables AttnW_k, AttnV_k, Attention_k/,
AttnOutputProjection/), `embedding_attention_decoder`; losses: `sequence_loss_by_example`
(per example: sum over steps of weighted cross-entropy, divided by the summed weights
+ 1e-12) and `sequence_loss` (its sum, divided by the batch size); `model_with_buckets`.
"""
import copy

import tensorflow as tf

from tf1clip.contrib import forward
from tf1clip.contrib.rnn.wrappers import EmbeddingWrapper, Linear, OutputProjectionWrapper

nest = tf.nest
_v1 = tf.compat.v1


def _extract_argmax_and_embed(embedding, output_projection=None, update_embedding=True):
    def loop_function(prev, _):
        if output_projection is not None:
            prev = _v1.nn.xw_plus_b(prev, output_projection[0], output_projection[1])
        emb_prev = tf.nn.embedding_lookup(embedding, tf.argmax(prev, 1))
        return emb_prev if update_embedding else tf.stop_gradient(emb_prev)

    return loop_function


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    with _v1.variable_scope(scope or "rnn_decoder"):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with _v1.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                _v1.get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def basic_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, dtype=tf.float32, scope=None):
    with _v1.variable_scope(scope or "basic_rnn_seq2seq"):
        enc_cell = copy.deepcopy(cell)
        _, enc_state = _v1.nn.static_rnn(enc_cell, encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, enc_state, cell)


def tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, loop_function=None, dtype=tf.float32, scope=None):
    with _v1.variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, enc_state = _v1.nn.static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        _v1.get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, enc_state, cell, loop_function=loop_function, scope=scope)


def embedding_rnn_decoder(decoder_inputs, initial_state, cell, num_symbols, embedding_size, output_projection=None,
                          feed_previous=False, update_embedding_for_previous=True, scope=None):
    with _v1.variable_scope(scope or "embedding_rnn_decoder") as scope:
        if output_projection is not None:
            _check_projection(output_projection, num_symbols, scope.dtype)
        embedding = _v1.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = (tf.nn.embedding_lookup(embedding, i) for i in decoder_inputs)
        return rnn_decoder(emb_inp, initial_state, cell, loop_function=loop_function)


def _check_projection(output_projection, num_symbols, dtype):
    weights = tf.convert_to_tensor(output_projection[0], dtype=dtype)
    weights.shape.assert_is_compatible_with([None, num_symbols])
    biases = tf.convert_to_tensor(output_projection[1], dtype=dtype)
    biases.shape.assert_is_compatible_with([num_symbols])


def embedding_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols, num_decoder_symbols,
                          embedding_size, output_projection=None, feed_previous=False, dtype=None, scope=None):
    with _v1.variable_scope(scope or "embedding_rnn_seq2seq") as scope:
        if dtype is not None:
            scope.set_dtype(dtype)
        else:
            dtype = scope.dtype
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        _, encoder_state = _v1.nn.static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)

        def decode(feed, update_embedding_for_previous):
            return embedding_rnn_decoder(decoder_inputs, encoder_state, cell, num_decoder_symbols, embedding_size,
                                         output_projection=output_projection, feed_previous=feed,
                                         update_embedding_for_previous=update_embedding_for_previous)

        return _feed_previous(feed_previous, decoder_inputs, encoder_state, decode)


def _feed_previous(feed_previous, decoder_inputs, structure, decode):
    if isinstance(feed_previous, bool):
        return decode(feed_previous, True)

    def decoder(feed_previous_bool):
        reuse = None if feed_previous_bool else True
        with _v1.variable_scope(_v1.get_variable_scope(), reuse=reuse):
            outputs, state = decode(feed_previous_bool, False)
            return outputs + (nest.flatten(state) if nest.is_nested(state) else [state])

    outputs_and_state = tf.cond(feed_previous, lambda: decoder(True), lambda: decoder(False))
    n = len(decoder_inputs)
    state_list = outputs_and_state[n:]
    state = nest.pack_sequence_as(structure=structure, flat_sequence=state_list) if nest.is_nested(structure) \
        else state_list[0]
    return outputs_and_state[:n], state


def attention_decoder(decoder_inputs, initial_state, attention_states, cell, output_size=None, num_heads=1,
                      loop_function=None, dtype=None, scope=None, initial_state_attention=False):
    if not decoder_inputs:
        raise ValueError("Must provide at least 1 input to attention decoder.")
    if num_heads < 1:
        raise ValueError("With less than 1 heads, use a non-attention decoder.")
    if tf.compat.dimension_value(attention_states.shape[2]) is None:
        raise ValueError(f"Shape[2] of attention_states must be known: {attention_states.shape}")
    if output_size is None:
        output_size = cell.output_size
    with _v1.variable_scope(scope or "attention_decoder", dtype=dtype) as scope:
        dtype = scope.dtype
        batch_size = tf.shape(decoder_inputs[0])[0]
        attn_length = tf.compat.dimension_value(attention_states.shape[1]) or tf.shape(attention_states)[1]
        attn_size = tf.compat.dimension_value(attention_states.shape[2])
        # W1 * h_t as a 1x1 convolution over [batch, length, 1, size].
        hidden = tf.reshape(attention_states, [-1, attn_length, 1, attn_size])
        hidden_features, v = [], []
        attention_vec_size = attn_size
        for a in range(num_heads):
            k = _v1.get_variable(f"AttnW_{a}", [1, 1, attn_size, attention_vec_size], dtype=dtype)
            hidden_features.append(tf.nn.conv2d(hidden, k, [1, 1, 1, 1], "SAME"))
            v.append(_v1.get_variable(f"AttnV_{a}", [attention_vec_size], dtype=dtype))

        def attention(query):
            ds = []
            if nest.is_nested(query):
                query = tf.concat(nest.flatten(query), 1)
            for a in range(num_heads):
                with _v1.variable_scope(f"Attention_{a}"):
                    y = Linear(query, attention_vec_size, True)(query)
                    y = tf.reshape(y, [-1, 1, 1, attention_vec_size])
                    y = tf.cast(y, dtype)
                    s = tf.reduce_sum(v[a] * tf.tanh(hidden_features[a] + y), [2, 3])
                    weights = tf.cast(tf.nn.softmax(tf.cast(s, tf.float32)), dtype)
                    d = tf.reduce_sum(tf.reshape(weights, [-1, attn_length, 1, 1]) * hidden, [1, 2])
                    ds.append(tf.reshape(d, [-1, attn_size]))
            return ds

        state, outputs, prev = initial_state, [], None
        attns = [tf.zeros(tf.stack([batch_size, attn_size]), dtype=dtype) for _ in range(num_heads)]
        for a in attns:
            a.set_shape([None, attn_size])
        if initial_state_attention:
            attns = attention(initial_state)
        for i, inp in enumerate(decoder_inputs):
            if i > 0:
                _v1.get_variable_scope().reuse_variables()
            if loop_function is not None and prev is not None:
                with _v1.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            input_size = tf.compat.dimension_value(inp.shape.with_rank(2)[1])
            if input_size is None:
                raise ValueError(f"Could not infer input size from input: {inp.name}")
            inputs = [tf.cast(e, dtype) for e in [inp] + attns]
            x = Linear(inputs, input_size, True)(inputs)
            cell_output, state = cell(x, state)
            if i == 0 and initial_state_attention:
                with _v1.variable_scope(_v1.get_variable_scope(), reuse=True):
                    attns = attention(state)
            else:
                attns = attention(state)
            with _v1.variable_scope("AttnOutputProjection"):
                inputs = [tf.cast(cell_output, dtype)] + attns
                output = Linear(inputs, output_size, True)(inputs)
            if loop_function is not None:
                prev = output
            outputs.append(output)
    return outputs, state


def embedding_attention_decoder(decoder_inputs, initial_state, attention_states, cell, num_symbols, embedding_size,
                                num_heads=1, output_size=None, output_projection=None, feed_previous=False,
                                update_embedding_for_previous=True, dtype=None, scope=None,
                                initial_state_attention=False):
    if output_size is None:
        output_size = cell.output_size
    if output_projection is not None:
        tf.convert_to_tensor(output_projection[1], dtype=dtype).shape.assert_is_compatible_with([num_symbols])
    with _v1.variable_scope(scope or "embedding_attention_decoder", dtype=dtype):
        embedding = _v1.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = [tf.nn.embedding_lookup(embedding, i) for i in decoder_inputs]
        return attention_decoder(emb_inp, initial_state, attention_states, cell, output_size=output_size,
                                 num_heads=num_heads, loop_function=loop_function,
                                 initial_state_attention=initial_state_attention)


def embedding_attention_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols, num_decoder_symbols,
                                embedding_size, num_heads=1, output_projection=None, feed_previous=False, dtype=None,
                                scope=None, initial_state_attention=False):
    with _v1.variable_scope(scope or "embedding_attention_seq2seq", dtype=dtype) as scope:
        dtype = scope.dtype
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        encoder_outputs, encoder_state = _v1.nn.static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        top_states = [tf.reshape(e, [-1, 1, cell.output_size]) for e in encoder_outputs]
        attention_states = tf.concat(top_states, 1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols

        def decode(feed, update_embedding_for_previous):
            return embedding_attention_decoder(
                decoder_inputs, encoder_state, attention_states, cell, num_decoder_symbols, embedding_size,
                num_heads=num_heads, output_size=output_size, output_projection=output_projection,
                feed_previous=feed, update_embedding_for_previous=update_embedding_for_previous,
                initial_state_attention=initial_state_attention)

        return _feed_previous(feed_previous, decoder_inputs, encoder_state, decode)


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True, softmax_loss_function=None,
                             name=None):
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(f"Lengths of logits, weights, and targets must be the same {len(logits)}, "
                         f"{len(weights)}, {len(targets)}.")
    with tf.name_scope(name or "sequence_loss_by_example"):
        log_perp_list = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(target, [-1]),
                                                                          logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            log_perp_list.append(crossent * weight)
        log_perps = tf.add_n(log_perp_list)
        if average_across_timesteps:
            log_perps /= tf.add_n(weights) + 1e-12  # TF 1.15: avoids a division by zero for all-0 weights
    return log_perps


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  softmax_loss_function=None, name=None):
    with tf.name_scope(name or "sequence_loss"):
        cost = tf.reduce_sum(sequence_loss_by_example(logits, targets, weights,
                                                      average_across_timesteps=average_across_timesteps,
                                                      softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            return cost / tf.cast(tf.shape(targets[0])[0], cost.dtype)
        return cost


def model_with_buckets(encoder_inputs, decoder_inputs, targets, weights, buckets, seq2seq, softmax_loss_function=None,
                       per_example_loss=False, name=None):
    if len(encoder_inputs) < buckets[-1][0]:
        raise ValueError(f"Length of encoder_inputs ({len(encoder_inputs)}) must be at least that of last bucket "
                         f"({buckets[-1][0]}).")
    if len(targets) < buckets[-1][1]:
        raise ValueError(f"Length of targets ({len(targets)}) must be at least that of last bucket ({buckets[-1][1]}).")
    if len(weights) < buckets[-1][1]:
        raise ValueError(f"Length of weights ({len(weights)}) must be at least that of last bucket ({buckets[-1][1]}).")
    losses, outputs = [], []
    with tf.name_scope(name or "model_with_buckets"):
        for j, bucket in enumerate(buckets):
            with _v1.variable_scope(_v1.get_variable_scope(), reuse=True if j > 0 else None):
                bucket_outputs, _ = seq2seq(encoder_inputs[:bucket[0]], decoder_inputs[:bucket[1]])
                outputs.append(bucket_outputs)
                loss = sequence_loss_by_example if per_example_loss else sequence_loss
                losses.append(loss(outputs[-1], targets[:bucket[1]], weights[:bucket[1]],
                                   softmax_loss_function=softmax_loss_function))
    return outputs, losses


__getattr__ = forward(__name__, "tf.contrib.legacy_seq2seq")  # hints: tf1clip.contrib.hints

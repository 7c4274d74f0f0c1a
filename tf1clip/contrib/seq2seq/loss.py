"""tf.contrib.seq2seq.sequence_loss (TF 1.15): weighted cross-entropy over [batch, time] targets.

The cross-entropy of every target, times its weight, then reduced: averaged over a dimension
means divided by the sum of the weights along it (`average_across_*`); summed means divided by
the number of non-zero weights (`sum_over_*`); a division by zero gives 0. Neither: the
[batch, time] losses. `average_across_X` and `sum_over_X` together are a ValueError.
"""
import tensorflow as tf


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  sum_over_timesteps=False, sum_over_batch=False, softmax_loss_function=None, name=None):
    if logits.shape.rank != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if targets.shape.rank != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if weights.shape.rank != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at same time.")
    with tf.name_scope(name or "sequence_loss"):
        num_classes = tf.shape(logits)[2]
        logits_flat = tf.reshape(logits, [-1, num_classes])
        targets_flat = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets_flat, logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets_flat, logits=logits_flat)
        crossent *= tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tf.math.divide_no_nan(tf.reduce_sum(crossent), tf.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            count = tf.cast(tf.math.count_nonzero(weights), crossent.dtype)
            return tf.math.divide_no_nan(tf.reduce_sum(crossent), count)
        crossent = tf.reshape(crossent, tf.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return tf.math.divide_no_nan(tf.reduce_sum(crossent, axis=axis), tf.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            count = tf.cast(tf.math.count_nonzero(weights, axis=axis), crossent.dtype)
            return tf.math.divide_no_nan(tf.reduce_sum(crossent, axis=axis), count)
        return crossent

"""`tf.contrib.losses` (`slim.losses`): the losses tf.losses replaced, with the predictions (or logits) first.

TF 1.15's `tensorflow/contrib/losses/python/losses/loss_ops.py` is the spec: each loss computes the same
per-element formula as its tf.losses successor, then `compute_weighted_loss` sums it (scaled by a scalar
weight after the sum, `_scale_losses`), divides by the number of elements with a nonzero weight
(`_safe_div`: 0 for none) and adds it to the LOSSES collection, which `get_total_loss` sums with the
regularization losses. `sparse_softmax_cross_entropy` reshapes the labels to `[batch]` first. They were
refused ("no TF 2 translation in tf1clip's tables"); each variant now converts and prints and trains like
TF 1.x (one on CI, all under full proofs), and a reduction argument, which contrib's losses never had, is
refused.
"""
import pytest

from conftest import assert_prints_and_trains_alike, refusal, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf
{head}
x = tf.placeholder(tf.float32, [None, 4])
onehot = tf.placeholder(tf.float32, [None, 3])
classes = tf.placeholder(tf.int64, [None, 1])
W = tf.Variable(tf.reshape(tf.range(12, dtype=tf.float32), [4, 3]) * 0.05 - 0.2)
logits = tf.matmul(x, W)
{loss}
train_op = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.arange(8) % 3
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, onehot: np.eye(3, dtype=np.float32)[ys], classes: ys[:, None]}})
        print("step", i, round(float(l), 6))
'''
SLIM = "import tensorflow.contrib.slim as slim"
VARIANTS = {  # variant: (head, the loss binding `loss`)
    "mse_predictions_first": (SLIM, "loss = slim.losses.mean_squared_error(tf.nn.softmax(logits), onehot)"),
    "absolute_difference_by_keyword": ("", "loss = tf.contrib.losses.absolute_difference(labels=onehot, "
                                           "predictions=tf.nn.sigmoid(logits))"),
    "softmax_smoothed": (SLIM, "loss = slim.losses.softmax_cross_entropy(logits, onehot, label_smoothing=0.1)"),
    "sigmoid_weighted": (SLIM, "loss = slim.losses.sigmoid_cross_entropy(logits, onehot, weights=0.3)"),
    "sparse_labels_reshaped": (SLIM, "loss = slim.losses.sparse_softmax_cross_entropy(logits, classes)"),
    "collected_then_total": ("slim = tf.contrib.slim", "slim.losses.softmax_cross_entropy(logits, onehot)\n"
                                                      "slim.losses.mean_squared_error(logits, onehot, weights=0.5)\n"
                                                      "loss = slim.losses.get_total_loss()"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_contrib_loss_trains_like_tf1(variant, tmp_path):
    head, loss = VARIANTS[variant]
    text = TEXT.format(head=head, loss=loss)
    out = tier_output(text)
    code = "\n".join(line for line in out.splitlines() if not line.strip().startswith("#"))
    assert "contrib" not in code and "slim" not in code, out  # no contrib or slim spelling is left
    if variant in sampled(VARIANTS, ("sparse_labels_reshaped",)):
        assert_prints_and_trains_alike(tmp_path, text, 3)


def test_a_reduction_contrib_never_took_is_refused():
    from codemods.tf2.translator import translate
    text = TEXT.format(head=SLIM, loss="loss = slim.losses.mean_squared_error(logits, onehot, "
                                       "reduction=tf.losses.Reduction.SUM)")
    line, message = refusal(translate(text, "t.py"))
    assert text.splitlines()[line - 1].startswith("loss = slim.losses.mean_squared_error("), (line, message)
    assert "reduction" in message, message

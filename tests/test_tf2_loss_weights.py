"""tf.losses with weights and label smoothing in the TF2 tier: TF 1.x's compute_weighted_loss and
its smoothing of the labels, spelled in TF 2 ops (codemods/tf2/losses.py).

TF 1.x (losses_impl, 1.15): the loss per element is cast to float32 and multiplied by the weights;
SUM_BY_NONZERO_WEIGHTS divides the sum by the number of elements whose broadcast weight is not 0,
MEAN by the sum of the broadcast weights, SUM_OVER_BATCH_SIZE by the number of elements, SUM not
at all (div_no_nan throughout). softmax_cross_entropy smooths one-hot labels to
`labels * (1 - s) + s / num_classes`, sigmoid_cross_entropy to `labels * (1 - s) + 0.5 * s`, when
the Python number `s > 0`. Each variant trains like the original under `tf1clip parity`, and one
loss is checked against a value computed by hand.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import assert_converts_and_trains_alike, refusal, run_python, sampled, tier_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

REGRESSION = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 2])
scale = tf.placeholder(tf.float32, [])
half = 0.5
pred = tf.layers.dense(x, 2)
loss = {loss}
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
rng = np.random.RandomState(1)
xs, ys = rng.randn(6, 3).astype(np.float32), rng.randn(6, 2).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys, scale: 0.25 * step}})
        print("%.6f" % l)
'''
CLASSES = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
labels = tf.placeholder(tf.float32, [None, 4])
logits = tf.layers.dense(x, 4)
loss = {loss}
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
rng = np.random.RandomState(2)
xs = rng.randn(8, 3).astype(np.float32)
ys = np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0, 1, 2, 3]]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, l = sess.run([train_op, loss], {{x: xs, labels: ys}})
        print("%.6f" % l)
'''
CONVERTED = {
    "number": (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=0.5)"),
    "integer_positional": (REGRESSION, "tf.losses.absolute_difference(y, pred, 2)"),
    "zero": (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=0.0) + tf.reduce_mean(pred)"),
    "a_name_bound_to_a_number": (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=half)"),
    "a_fed_scalar": (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=scale) + 0.1 * tf.reduce_mean(pred)"),
    "mean": (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=scale, "
                         "reduction=tf.losses.Reduction.MEAN) + 0.1 * tf.reduce_mean(pred)"),
    "number_and_a_scope": (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=0.5, scope='l')"),
    "sum": (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=0.5, reduction=tf.losses.Reduction.SUM)"),
    "sum_over_batch": (REGRESSION, "tf.losses.absolute_difference(y, pred, weights=scale, "
                                   "reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE) + 0.1 * tf.reduce_mean(pred)"),
    "softmax_smoothing": (CLASSES, "tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=0.1)"),
    "softmax_smoothing_positional_weighted": (CLASSES, "tf.losses.softmax_cross_entropy(labels, logits, 2.0, 0.2)"),
    "softmax_no_smoothing": (CLASSES, "tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=0)"),
    "sigmoid_smoothing": (CLASSES, "tf.losses.sigmoid_cross_entropy(labels, logits, label_smoothing=0.3)"),
    "sparse_weighted": (CLASSES.replace("labels = tf.placeholder(tf.float32, [None, 4])",
                                        "labels = tf.placeholder(tf.int32, [None])")
                        .replace("ys = np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0, 1, 2, 3]]",
                                 "ys = np.array([0, 1, 2, 3, 0, 1, 2, 3], np.int32)"),
                        "tf.losses.sparse_softmax_cross_entropy(labels, logits, weights=0.7)"),
}


@pytest.mark.parametrize("variant", sorted(CONVERTED))
def test_weighted_and_smoothed_losses_convert(variant):
    script, loss = CONVERTED[variant]
    tier_output(script.format(loss=loss))


# parity on CI for two kinds: smoothing with positional weights, sparse labels; every variant in
# benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTED), ("softmax_smoothing_positional_weighted",
                                                                "sparse_weighted")))
def test_weighted_and_smoothed_losses_train_like_tf1(variant, tmp_path):
    script, loss = CONVERTED[variant]
    assert_converts_and_trains_alike(tmp_path, script.format(loss=loss))


def test_a_weighted_loss_is_the_hand_computed_value(tmp_path):
    """mean_squared_error(weights=0.5) of a zero-initialized layer: 0.5 * the mean of y², by NumPy."""
    text = REGRESSION.format(loss="tf.losses.mean_squared_error(y, pred, weights=0.5)").replace(
        "pred = tf.layers.dense(x, 2)", "pred = tf.layers.dense(x, 2, kernel_initializer=tf.zeros_initializer())")
    result = translate(text, "t.py")
    assert result.text is not None
    (tmp_path / "new.py").write_text(result.text)
    proc = run_python(tmp_path / "new.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rng = np.random.RandomState(1)
    rng.randn(6, 3)
    ys = rng.randn(6, 2).astype(np.float32)
    assert float(proc.stdout.split()[0]) == pytest.approx(0.5 * np.mean(ys.astype(np.float64) ** 2), rel=1e-5)


@pytest.mark.parametrize("script, loss, reason", [
    (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=tf.ones([6, 1]))", "weights=tf.ones([6, 1])"),
    (REGRESSION, "tf.losses.mean_squared_error(y, pred, weights=y)", "only a number or a name of a scalar"),
    (CLASSES, "tf.losses.softmax_cross_entropy(labels, logits, label_smoothing=tf.constant(0.1))",
     "(label_smoothing=...)` that is not a number"),
])
def test_refused_with_a_true_reason(script, loss, reason):
    _, message = refusal(translate(script.format(loss=loss), "t.py"))
    assert reason in message, message

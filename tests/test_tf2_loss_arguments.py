"""tf.losses given expressions (`tf.losses.mean_squared_error(y, tf.matmul(h, V))`) in the TF2 tier: each
expression is bound to a name of its own first, one value statement, so that the loss's TF 1.x formula,
which reads its labels and predictions more than once, reads the one value TF 1.x built (a dropout in
it draws once, as in TF 1.x's graph). Variants: predictions, labels, both, with weights, one-hot labels
of a cast, sparse labels cast, inside a helper, a dropout in the predictions, through an alias, with a scope. Each
trains like the original under `tf1clip parity` (its start values fixed: NEW prints what OLD printed)."""
import re

import pytest

from conftest import (SMALL_TRAINING, assert_converts_and_trains_alike, assert_prints_and_trains_alike, sampled,
                      tier_output)

PRED = "tf.matmul(tf.matmul(x, W), V)"
CONVERTS = {
    "predictions": f"loss = tf.losses.mean_squared_error(y, {PRED})\n",
    "labels": f"p = {PRED}\nloss = tf.losses.mean_squared_error(y * 0.5 + 0.1, p)\n",
    "both_with_weights": f"loss = tf.losses.mean_squared_error(y * 2.0, {PRED}, weights=0.5)\n",
    "absolute_difference_keywords": f"loss = tf.losses.absolute_difference(predictions={PRED}, labels=y - 0.2)\n",
    "one_hot_of_a_cast": "logits = tf.matmul(x, W)\nloss = tf.losses.softmax_cross_entropy("
                         "tf.one_hot(tf.cast(y[:, 0] > 0, tf.int32), 3), logits)\n",
    "sparse_labels_cast": "logits = tf.matmul(x, W)\nloss = tf.losses.sparse_softmax_cross_entropy("
                          "tf.cast(y[:, 0] > 0, tf.int32), logits)\n",
    "in_a_helper": f"def cost(t, p):\n    return tf.losses.mean_squared_error(t * 1.5, p * 2.0)\n"
                   f"loss = cost(y, {PRED})\n",
    "bound_in_a_helper": f"def cost(t, p):\n    l = tf.losses.absolute_difference(t, p)\n    return l\n"
                         f"loss = cost(y, {PRED})\n",
    "collected_by_a_helper": f"def cost(t, p):\n    tf.losses.mean_squared_error(t, p)\ncost(y, {PRED})\n"
                             "loss = tf.losses.get_total_loss()\n",
    "a_dropout_inside": "tf.set_random_seed(3)\n"
                        "loss = tf.losses.mean_squared_error(y, tf.matmul(tf.nn.dropout(tf.matmul(x, W), 0.5), V))\n",
    "through_an_alias": f"L = tf.losses\nloss = L.mean_squared_error(y, {PRED})\n",
    # a scope only named TF 1.x's ops: dropped (nothing reads the LOSSES collection by scope)
    "with_a_scope": f"loss = tf.losses.mean_squared_error(y, {PRED}, scope='loss')\n",
    "sparse_with_a_scope_in_a_helper": "def cost(labels, logits):\n    return tf.losses.sparse_softmax_cross_entropy("
                                       "labels, logits, scope='cost')\nloss = cost(tf.cast(y[:, 0] > 0, tf.int32), "
                                       "tf.matmul(x, W))\n",
}


def _script(variant: str) -> str:
    return SMALL_TRAINING.format(head="", model=CONVERTS[variant], after="")


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_each_expression_is_built_once_before_the_loss(variant):
    code = "\n".join(line for line in tier_output(_script(variant)).splitlines() if not line.strip().startswith("#"))
    assert not re.search(r"\blosses\.\w+\(|\bL\.\w+\(", code)  # no TF 1.x loss call is left


# run and parity on CI: predictions given as an expression; every variant under TF1CLIP_FULL_PROOF
@pytest.mark.parametrize("variant", sampled(sorted(set(CONVERTS) - {"a_dropout_inside"}), ("predictions",)))
def test_it_prints_and_trains_like_tf1(variant, tmp_path):
    assert_prints_and_trains_alike(tmp_path, _script(variant), 4)


# a dropout inside the predictions: built once, where TF 1.x built it; TF 2 draws other masks (parity keys both
# sides' draws alike), so the prints differ and parity judges, under TF1CLIP_FULL_PROOF (benchmarks/full_proofs.py)
def test_a_dropout_inside_is_built_once(tmp_path):
    out = tier_output(_script("a_dropout_inside"))
    assert out.count("tf.nn.dropout(") == 1
    if sampled(["a_dropout_inside"], ()):
        assert_converts_and_trains_alike(tmp_path, _script("a_dropout_inside"))

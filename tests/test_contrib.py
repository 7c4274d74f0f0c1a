"""tf.contrib.layers.optimize_loss and tf-slim's clipping on TF 2.21, against TF 1.15 semantics."""
import math

import numpy as np
import pytest
import tensorflow as tf

from tf1clip.contrib import layers as contrib_layers
from tf1clip.contrib import training as contrib_training
from tf1clip.errors import UnsupportedSymbol
from tf1clip import slim

v1 = tf.compat.v1

X = np.array([[1.0, 2.0], [3.0, -1.0]], dtype=np.float32)
Y = np.array([[10.0], [-20.0]], dtype=np.float32)
W0 = np.array([[0.5], [-0.5]], dtype=np.float32)
G0 = 2 * X.T @ (X @ W0 - Y)  # gradient of the loss below at W0


def problem():
    w = v1.get_variable("w", initializer=tf.constant(W0))
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(X), w) - Y))
    return w, loss


def one_step(build_train, steps=1):
    with tf.Graph().as_default():
        w, loss = problem()
        step = v1.train.get_or_create_global_step()
        train = build_train(loss, step, w)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(steps):
                out = sess.run(train)
            return sess.run(w), sess.run(step), out


@pytest.mark.parametrize("optimizer", ["SGD", v1.train.GradientDescentOptimizer, "instance"])
def test_optimize_loss_float_clip_is_global_norm(optimizer):
    def build(loss, step, w):
        opt = v1.train.GradientDescentOptimizer(0.1) if optimizer == "instance" else optimizer
        return contrib_layers.optimize_loss(loss, step, learning_rate=0.1, optimizer=opt, clip_gradients=2.5)

    w, step, returned_loss = one_step(build)
    np.testing.assert_allclose(w, W0 - 0.1 * G0 * 2.5 / np.linalg.norm(G0), rtol=1e-5)
    assert step == 1
    assert returned_loss == pytest.approx(float(np.sum((X @ W0 - Y) ** 2)), rel=1e-6)


def test_optimize_loss_callable_clip_gets_grads_and_vars():
    seen = []

    def clip_fn(grads_and_vars):
        seen.append([v.op.name for _, v in grads_and_vars])
        return [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in grads_and_vars]

    def build(loss, step, w):
        return contrib_layers.optimize_loss(loss, step, 0.1, "SGD", clip_gradients=clip_fn,
                                            increment_global_step=False)

    w, step, _ = one_step(build)
    assert seen == [["w"]]
    np.testing.assert_allclose(w, W0 - 0.1 * np.clip(G0, -1, 1), rtol=1e-6)
    assert step == 0  # increment_global_step=False


@pytest.mark.parametrize("clip", [3, "tensor"])
def test_optimize_loss_rejects_int_and_tensor_clip(clip):
    with tf.Graph().as_default():
        w, loss = problem()
        step = v1.train.get_or_create_global_step()
        clip_value = tf.constant(2.0) if clip == "tensor" else clip
        with pytest.raises(ValueError, match="Unknown type"):
            contrib_layers.optimize_loss(loss, step, 0.1, "SGD", clip_gradients=clip_value)


def test_optimize_loss_multipliers_then_clip_then_decay():
    def build(loss, step, w):
        return contrib_layers.optimize_loss(
            loss, step, learning_rate=0.1, optimizer="SGD", gradient_multipliers={w: 0.5},
            clip_gradients=100.0, learning_rate_decay_fn=lambda lr, gs: lr * 0.5,
            summaries=["loss", "learning_rate", "gradients", "gradient_norm", "global_gradient_norm"])

    w, step, _ = one_step(build)
    np.testing.assert_allclose(w, W0 - 0.05 * 0.5 * G0, rtol=1e-5)
    assert step == 1


def test_optimize_loss_gradient_noise_is_seeded_and_applied():
    def build(loss, step, w):
        v1.set_random_seed(3)
        return contrib_layers.optimize_loss(loss, step, 0.1, "SGD", gradient_noise_scale=1.0)

    w1, _, _ = one_step(build)
    w2, _, _ = one_step(build)
    np.testing.assert_array_equal(w1, w2)
    assert not np.allclose(w1, W0 - 0.1 * G0)  # noise moved it
    assert np.abs(w1 - (W0 - 0.1 * G0)).max() < 0.1 * 2.5  # by at most lr * 2 stddev (truncated normal)


def sparse_problem():
    emb = v1.get_variable("emb", initializer=tf.zeros([4, 2]))
    rows = tf.nn.embedding_lookup(emb, tf.constant([1, 1]))
    return emb, tf.reduce_sum(rows * tf.constant([[3.0, 0.0], [3.0, 0.0]]))


@pytest.mark.parametrize("module", [slim.learning, contrib_training])
def test_slim_clip_gradient_norms_clips_indexed_slices_values(module):
    with tf.Graph().as_default():
        emb, loss = sparse_problem()
        grads = v1.train.GradientDescentOptimizer(1.0).compute_gradients(loss)
        clipped = module.clip_gradient_norms(grads, 3.0)
        assert isinstance(clipped[0][0], tf.IndexedSlices)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            values = sess.run(clipped[0][0].values)
    # norm over the two repeated rows is sqrt(18), not the dense 6
    np.testing.assert_allclose(values, [[3 / math.sqrt(2), 0.0]] * 2, rtol=1e-6)


def test_slim_multiply_gradients_and_create_train_op_with_clip():
    with tf.Graph().as_default():
        emb, loss = sparse_problem()
        w = v1.get_variable("w", initializer=tf.constant([1.0, -1.0]))
        loss = loss + tf.reduce_sum(w * tf.constant([30.0, 40.0]))
        opt = v1.train.GradientDescentOptimizer(0.1)
        grads = opt.compute_gradients(loss)
        multiplied = slim.learning.multiply_gradients(grads, {w: 2.0, "emb": 0.5})
        train = slim.learning.create_train_op(loss, opt, clip_gradient_norm=4.0)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            mult = sess.run([multiplied[0][0].values, multiplied[1][0]])
            sess.run(train)
            emb_after, w_after = sess.run([emb, w])
            step = sess.run(v1.train.get_global_step())
    np.testing.assert_allclose(mult[0], [[1.5, 0.0]] * 2)
    np.testing.assert_allclose(mult[1], [60.0, 80.0])
    # per-tensor clip to 4: w's gradient (30, 40) has norm 50 -> (2.4, 3.2)
    np.testing.assert_allclose(w_after, [1.0 - 0.24, -1.0 - 0.32], rtol=1e-5)
    np.testing.assert_allclose(emb_after[1], [-0.1 * 2 * 4 / math.sqrt(2), 0.0], rtol=1e-5)
    assert step == 1


def test_slim_smart_cond_with_tensor_predicate_runs():
    with tf.Graph().as_default():
        is_training = v1.placeholder(tf.bool, [])
        x = tf.ones([2, 3])
        out = slim.dropout(x, keep_prob=0.5, is_training=is_training)
        with v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(out, {is_training: False}), np.ones([2, 3]))


def test_unprovided_symbols_raise_one_clear_error():
    from tf1clip import contrib

    with pytest.raises(UnsupportedSymbol, match=r"^tf\.contrib\.graph_editor is not provided by tf1clip"):
        contrib.graph_editor
    with pytest.raises(UnsupportedSymbol, match=r"tf\.contrib\.layers\.no_such_thing"):
        contrib_layers.no_such_thing
    assert not hasattr(contrib, "graph_editor")  # still an AttributeError for hasattr()

"""ClippedOptimizer and contrib's clip_gradients_by_norm, checked against TF 1.15 behaviour."""
import math

import numpy as np
import pytest
import tensorflow as tf

from tf1clip import ClippedOptimizer, clip_gradients_by_norm

v1 = tf.compat.v1

X = np.array([[1.0, 2.0], [3.0, -1.0]], dtype=np.float32)
Y = np.array([[10.0], [-20.0]], dtype=np.float32)
W0 = np.array([[0.5], [-0.5]], dtype=np.float32)


def numpy_grad(w):
    """d/dw of sum((Xw - Y)^2)."""
    return 2 * X.T @ (X @ w - Y)


def linear_problem():
    w = v1.get_variable("w", initializer=tf.constant(W0))
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(X), w) - Y))
    return w, loss


@pytest.mark.parametrize("mode, clip, numpy_clip", [
    ("global_norm", 5.0, lambda g: g * 5.0 / max(np.linalg.norm(g), 5.0)),
    ("norm", 5.0, lambda g: g * 5.0 / max(np.linalg.norm(g), 5.0)),
    ("value", 1.0, lambda g: np.clip(g, -1.0, 1.0)),
    ("value", (-3.0, 0.5), lambda g: np.clip(g, -3.0, 0.5)),
])
def test_first_sgd_update_equals_hand_clipped_update(mode, clip, numpy_clip):
    with tf.Graph().as_default():
        w, loss = linear_problem()
        opt = ClippedOptimizer(v1.train.GradientDescentOptimizer(0.1), mode, clip)
        train = opt.minimize(loss)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            _, pre = sess.run([train, opt.global_norm])
            after = sess.run(w)
    g = numpy_grad(W0)
    assert pre == pytest.approx(np.linalg.norm(g), rel=1e-5)
    np.testing.assert_allclose(after, W0 - 0.1 * numpy_clip(g), rtol=1e-5, atol=1e-6)


def test_contrib_decorator_name_slots_variables_and_global_step():
    with tf.Graph().as_default():
        w, loss = linear_problem()
        unused = v1.get_variable("unused", initializer=tf.ones([3]))  # no gradient: None
        inner = v1.train.AdamOptimizer(0.01)
        opt = clip_gradients_by_norm(inner, clip_norm=1.0)
        assert opt.get_name() == "ClipByNormAdam"
        step = v1.train.get_or_create_global_step()
        grads_and_vars = opt.compute_gradients(loss, [w, unused])
        assert grads_and_vars[1][0] is None
        train = opt.apply_gradients(grads_and_vars, global_step=step)
        assert opt.variables() == []
        assert sorted(opt.get_slot_names()) == ["m", "v"]
        assert opt.get_slot(w, "m") is inner.get_slot(w, "m")
        assert opt.get_slot(unused, "m") is None
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(train)
            m = sess.run(opt.get_slot(w, "m"))
            assert sess.run(step) == 1
    g = numpy_grad(W0)
    clipped = g / np.linalg.norm(g)  # global norm clipped to 1
    # Adam's first moment after one step is (1 - beta1) * g_clipped
    np.testing.assert_allclose(m, 0.1 * clipped, rtol=1e-5)


def test_checkpoint_from_unwrapped_optimizer_restores_into_wrapped(tmp_path):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        w, loss = linear_problem()
        opt = v1.train.AdamOptimizer(0.01)
        train = opt.minimize(loss)
        saver = v1.train.Saver()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            saved = {s: sess.run(opt.get_slot(w, s)) for s in ("m", "v")}
            saved_w = sess.run(w)
            saver.save(sess, path)
    with tf.Graph().as_default():
        w, loss = linear_problem()
        opt = clip_gradients_by_norm(v1.train.AdamOptimizer(0.01), 1.0)
        opt.minimize(loss)
        saver = v1.train.Saver()
        with v1.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), saved_w)
            for s in ("m", "v"):
                np.testing.assert_array_equal(sess.run(opt.get_slot(w, s)), saved[s])


@pytest.mark.parametrize("skip", [False, True])
def test_nonfinite_global_norm_nan_like_tf1_or_skipped(skip):
    with tf.Graph().as_default():
        scale = v1.placeholder(tf.float32, [])
        w, loss = linear_problem()
        step = v1.train.get_or_create_global_step()
        opt = ClippedOptimizer(v1.train.GradientDescentOptimizer(0.1), "global_norm", 5.0, skip_nonfinite=skip)
        train = opt.minimize(loss * scale, global_step=step)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(train, {scale: np.inf})
            after_inf, step_after_inf = sess.run([w, step])
            sess.run(train, {scale: 1.0})
            after_finite, step_after_finite = sess.run([w, step])
    if skip:
        np.testing.assert_array_equal(after_inf, W0)
        assert step_after_inf == 0
        g = numpy_grad(W0)
        np.testing.assert_allclose(after_finite, W0 - 0.1 * g * 5.0 / np.linalg.norm(g), rtol=1e-5)
        assert step_after_finite == 1
    else:
        assert np.isnan(after_inf).all()
        assert step_after_inf == 1


def test_sparse_gradient_stays_sparse_through_the_wrapper():
    with tf.Graph().as_default():
        emb = v1.get_variable("emb", initializer=tf.zeros([4, 2]))
        rows = tf.nn.embedding_lookup(emb, tf.constant([1, 1]))
        loss = tf.reduce_sum(rows * tf.constant([[3.0, 0.0], [3.0, 0.0]]))
        opt = ClippedOptimizer(v1.train.GradientDescentOptimizer(1.0), "norm", 3.0)
        grads_and_vars = opt.compute_gradients(loss)
        assert isinstance(grads_and_vars[0][0], tf.IndexedSlices)
        train = opt.apply_gradients(grads_and_vars)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(train)
            after = sess.run(emb)
    # per-tensor norm over the slices' values: sqrt(18) -> each row scaled by 3/sqrt(18);
    # both rows land on index 1
    np.testing.assert_allclose(after[1], [-2 * 3.0 * 3.0 / math.sqrt(18), 0.0], rtol=1e-6)
    np.testing.assert_array_equal(after[[0, 2, 3]], 0.0)


def test_wrapper_works_eagerly_too():
    w = tf.Variable(W0)
    opt = ClippedOptimizer(v1.train.GradientDescentOptimizer(0.1), "global_norm", 5.0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(X), w) - Y))
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    g = numpy_grad(W0)
    np.testing.assert_allclose(w.numpy(), W0 - 0.1 * g * 5.0 / np.linalg.norm(g), rtol=1e-5)
    assert float(opt.global_norm) == pytest.approx(np.linalg.norm(g), rel=1e-5)
    assert float(opt.clipped_global_norm) == pytest.approx(5.0, rel=1e-5)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(optimizer="adam", mode="norm", clip=1.0), "must be a tf.compat.v1.train.Optimizer"),
    (dict(mode="norm", clip=0), "clip=0 must be > 0"),
    (dict(mode="bogus", clip=1.0), "mode='bogus'"),
    (dict(mode="norm", clip=1.0, skip_nonfinite="yes"), "skip_nonfinite='yes'"),
])
def test_constructor_rejects_bad_arguments(kwargs, needle):
    kwargs.setdefault("optimizer", v1.train.GradientDescentOptimizer(0.1))
    with pytest.raises(ValueError, match=needle):
        ClippedOptimizer(**kwargs)


def _conv_run(make_train):
    """Three Adam steps of a small convnet (conv2d + bias_add, as tf.layers.conv2d builds it) from
    fixed weights: (final weights, whether the gradient graph holds GATE_OP's `tuple` identities)."""
    rng = np.random.RandomState(3)
    xs = rng.randint(0, 256, size=(3, 32, 12, 12, 1)).astype(np.float32)
    ys = np.eye(4, dtype=np.float32)[rng.randint(0, 4, size=(3, 32))]
    with tf.Graph().as_default():
        x, y = v1.placeholder(tf.float32, [None, 12, 12, 1]), v1.placeholder(tf.float32, [None, 4])
        k = v1.get_variable("k", initializer=tf.constant(rng.randn(5, 5, 1, 16).astype(np.float32) * 0.1))
        b = v1.get_variable("b", initializer=tf.constant(rng.randn(16).astype(np.float32)))
        w = v1.get_variable("w", initializer=tf.constant(rng.randn(12 * 12 * 16, 4).astype(np.float32) * 0.01))
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), b))
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(tf.reshape(h, [-1, 12 * 12 * 16]), w)))
        train = make_train(loss)
        gated = any("/tuple/control_dependency" in op.name for op in tf.compat.v1.get_default_graph().get_operations())
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for step in range(3):
                sess.run(train, {x: xs[step], y: ys[step]})
            return sess.run([k, b, w]), gated


def _by_hand(gate):
    def train(loss):
        opt = v1.train.AdamOptimizer(0.01)
        grads, variables = zip(*opt.compute_gradients(loss, gate_gradients=gate))
        clipped, _ = tf.clip_by_global_norm(grads, 1.0)
        return opt.apply_gradients(zip(clipped, variables))
    return train


def test_global_norm_clip_keeps_gating_and_the_values_of_the_gated_clip_by_hand():
    """The wrapper computes gradients as the user asked (GATE_OP by default), like TF 1.x's
    contrib wrappers: on a conv with a bias its weights match the gated clip by hand to the bit.
    An ungated graph gives the bias other last bits on oneDNN builds (its gradient is merged
    into the filter gradient's kernel), so forwarding GATE_NONE would not be exact."""
    hand, hand_gated = _conv_run(_by_hand(v1.train.Optimizer.GATE_OP))
    ours, ours_gated = _conv_run(lambda loss: ClippedOptimizer(v1.train.AdamOptimizer(0.01), "global_norm", 1.0).minimize(loss))
    assert hand_gated and ours_gated
    for a, b in zip(hand, ours):
        np.testing.assert_array_equal(a, b)
    unclipped, _ = _conv_run(lambda loss: v1.train.AdamOptimizer(0.01).minimize(loss))
    assert not np.array_equal(hand[0], unclipped[0])  # the clip acted
    ungated, was_gated = _conv_run(_by_hand(v1.train.Optimizer.GATE_NONE))
    assert not was_gated
    # Ungated, the same update up to the last bits (on this machine the bias moved by 6e-8).
    for a, b in zip(ungated, hand):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)

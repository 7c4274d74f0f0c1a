"""tf1clip.clipping against hand-computed numbers (real TensorFlow, graph mode as in TF1)."""
import math

import numpy as np
import pytest
import tensorflow as tf

from tf1clip.clipping import clip_gradients, validate_clip

v1 = tf.compat.v1


def run_graph(build):
    """Build in a fresh TF1-style graph and evaluate the returned structure."""
    with tf.Graph().as_default():
        fetches = build()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            return sess.run(fetches)


def dense_and_sparse():
    w = v1.get_variable("w", initializer=tf.constant([[3.0, 4.0], [0.0, 0.0]]))
    emb = v1.get_variable("emb", initializer=tf.zeros([3, 2]))
    grad_w = tf.constant([[3.0, -4.0], [12.0, 0.5]])
    # Two rows for the same index: the sparse norm counts them separately (sqrt(18)), the
    # dense one would add them first (6).
    grad_emb = tf.IndexedSlices(tf.constant([[3.0, 0.0], [3.0, 0.0]]), tf.constant([0, 0]), tf.constant([3, 2]))
    return [(grad_w, w), (grad_emb, emb)]


def test_value_mode_clips_elementwise_and_keeps_sparse():
    def build():
        clipped, norm = clip_gradients(dense_and_sparse(), "value", 1.0)
        assert isinstance(clipped[1][0], tf.IndexedSlices)
        assert norm is None  # element-wise clipping builds no norm op
        return clipped[0][0], clipped[1][0].values, clipped[1][0].indices

    dense, sparse_values, indices = run_graph(build)
    np.testing.assert_allclose(dense, [[1.0, -1.0], [1.0, 0.5]])
    np.testing.assert_allclose(sparse_values, [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(indices, [0, 0])


def test_value_mode_with_asymmetric_pair():
    def build():
        clipped, _ = clip_gradients(dense_and_sparse(), "value", (-2.0, 0.25))
        return clipped[0][0]

    np.testing.assert_allclose(run_graph(build), [[0.25, -2.0], [0.25, 0.25]])


def test_norm_mode_clips_each_tensor_and_sparse_counts_repeated_rows():
    def build():
        clipped, _ = clip_gradients(dense_and_sparse(), "norm", 3.0)
        return clipped[0][0], clipped[1][0].values

    dense, sparse_values = run_graph(build)
    g = np.array([[3.0, -4.0], [12.0, 0.5]])
    np.testing.assert_allclose(dense, g * 3.0 / np.linalg.norm(g), rtol=1e-6)
    # sparse norm is sqrt(18) (repeated index counted twice), not the dense 6
    np.testing.assert_allclose(sparse_values, np.array([[3.0, 0.0], [3.0, 0.0]]) * 3.0 / math.sqrt(18), rtol=1e-6)


def test_global_norm_mode_skips_none_and_reports_preclip_norm():
    def build():
        pairs = dense_and_sparse()
        unused = v1.get_variable("unused", initializer=tf.ones([2]))
        clipped, norm = clip_gradients(pairs + [(None, unused)], "global_norm", 5.0)
        assert clipped[2][0] is None and clipped[2][1] is unused
        return clipped[0][0], clipped[1][0].values, norm

    dense, sparse_values, norm = run_graph(build)
    g = np.array([[3.0, -4.0], [12.0, 0.5]])
    s = np.array([[3.0, 0.0], [3.0, 0.0]])
    expected_norm = math.sqrt((g ** 2).sum() + (s ** 2).sum())
    assert norm == pytest.approx(expected_norm, rel=1e-6)
    np.testing.assert_allclose(dense, g * 5.0 / expected_norm, rtol=1e-6)
    np.testing.assert_allclose(sparse_values, s * 5.0 / expected_norm, rtol=1e-6)
    assert math.sqrt((dense ** 2).sum() + (sparse_values ** 2).sum()) == pytest.approx(5.0, rel=1e-6)


def test_global_norm_with_inf_makes_every_output_nan_like_tf1():
    def build():
        w = v1.get_variable("w", initializer=tf.zeros([2]))
        b = v1.get_variable("b", initializer=tf.zeros([1]))
        clipped, norm = clip_gradients([(tf.constant([np.inf, 1.0]), w), (tf.constant([2.0]), b)], "global_norm", 1.0)
        return clipped[0][0], clipped[1][0], norm

    a, b, norm = run_graph(build)
    assert math.isinf(norm)
    assert np.isnan(a).all() and np.isnan(b).all()


def test_average_norm_matches_tf1_formula():
    def build():
        w = v1.get_variable("w", initializer=tf.zeros([2, 2]))
        clipped, _ = clip_gradients([(tf.constant([[3.0, 4.0], [0.0, 0.0]]), w)], "average_norm", 1.0)
        return clipped[0][0]

    t = np.array([[3.0, 4.0], [0.0, 0.0]])
    # TF1: t * clip * min(numel / ||t||, 1 / clip); average norm = 5 / 4 > 1 so it scales
    expected = t * 1.0 * min(t.size / np.linalg.norm(t), 1.0)
    np.testing.assert_allclose(run_graph(build), expected, rtol=1e-6)


@pytest.mark.parametrize("mode, clip, needle", [
    ("norm", 0.0, "clip=0.0 must be > 0"),
    ("global_norm", -1, "clip=-1 must be > 0"),
    ("value", -1.0, "clip=-1.0 must be > 0"),
    ("value", (1.0, -1.0), "lo must not exceed hi"),
    ("value", (1.0, 2.0, 3.0), "mode 'value' takes a number"),
    ("norm", [1.0, 2.0], "must be a number or a scalar Tensor"),
    ("sideways", 1.0, "mode='sideways' is not a clipping mode"),
    ("norm", True, "must be a number, not a bool"),
    ("norm", None, "clip must be a number"),
])
def test_bad_arguments_raise_value_error_naming_the_argument(mode, clip, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        validate_clip(mode, clip)


def test_non_scalar_and_non_positive_tensor_clips_are_rejected():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="clip must be a scalar"):
            validate_clip("norm", tf.constant([1.0, 2.0]))
        with pytest.raises(ValueError, match="must be > 0"):
            validate_clip("global_norm", tf.constant(0.0))
        # a clip known only at run time is accepted and checked by TF itself
        assert validate_clip("norm", v1.placeholder(tf.float32, [])) is not None

"""`codemods.tf2.api_changes.to_tf2`: TF 1 calls under tf.compat.v1 (graph mode) and the TF 2 calls
it writes (eager) give the same numbers; what it cannot keep, it refuses.

Every row of the generated spec table (codemods/tf2/api_spec.py) that changes a call is
accounted for here: a keyword rename, a reorder, a transformer or a rename to another TF 2
function either has a numeric case in SAMPLES (TF 1 and TF 2 evaluated on the same inputs,
compared), is refused by `to_tf2` (checked on a sample call), or is listed in NOT_NUMERIC with
why numbers do not apply (files, strings, graph defs, random draws...). Real TensorFlow.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import libcst as cst
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

os.environ.pop("TF_USE_LEGACY_KERAS", None)
import tensorflow as tf  # noqa: E402

from codemods.tf2 import api_spec as spec  # noqa: E402
from codemods.tf2 import api_transforms  # noqa: E402
from codemods.tf2.api_changes import NoTF2Mapping, reference_to_tf2, to_tf2  # noqa: E402
from codemods.tf2.api_decisions import OVERRIDES  # noqa: E402

RNG = np.random.RandomState(0)
ENV = {
    "x": RNG.randn(3, 4).astype(np.float32),
    "v": RNG.randn(6).astype(np.float32),
    "bools": RNG.rand(3, 4) > 0.5,
    "ints": RNG.randint(0, 5, (3, 4)).astype(np.int32),
    "img": RNG.randn(1, 6, 6, 2).astype(np.float32),
    "kernel": RNG.randn(3, 3, 2, 2).astype(np.float32),
    "kernel1d": RNG.randn(3, 2, 2).astype(np.float32),
    "seq": RNG.randn(1, 8, 2).astype(np.float32),
    "dil": RNG.randn(3, 3, 2).astype(np.float32),
    "labels": np.eye(4, dtype=np.float32)[RNG.randint(0, 4, 3)] * 0.8 + 0.05,
    "logits": RNG.randn(3, 4).astype(np.float32),
    "words": np.array([["a", "b"], ["c", "d"]]),
    "numbers": np.array(["1.5", "2.25"]),
    "lengths": np.array([2, 3, 1], dtype=np.int64),
    "bt": RNG.randn(4, 2, 2, 1).astype(np.float32),
    "emb": RNG.randn(6, 4).astype(np.float32),
    "bias6": RNG.randn(6).astype(np.float32),
    "cls": np.array([[1], [3], [2]], dtype=np.int64),
}
# The sampled losses' negative classes given (sampled_values), so the two sides draw nothing.
SAMPLED = "(tf.constant([0, 2, 5], tf.int64), tf.fill([3, 1], 0.5), tf.fill([3], 0.25))"

# TF 1 call (as written in a TF 1.x script) → compared with the TF 2 call to_tf2 makes of it.
SAMPLES = {
    # keyword renames: reduction_indices / keep_dims / dim / dimension / ...
    **{f"tf.{p}reduce_{op}": f"tf.{p}reduce_{op}({arg}, reduction_indices=[1], keep_dims=True)"
       for p in ("", "math.") for op, arg in (("sum", "x"), ("mean", "x"), ("max", "x"), ("min", "x"),
                                              ("prod", "x"), ("logsumexp", "x"), ("all", "bools"),
                                              ("any", "bools"))},
    "tf.reduce_join": "tf.reduce_join(words, reduction_indices=[1], keep_dims=True)",
    "tf.strings.reduce_join": "tf.strings.reduce_join(words, reduction_indices=[1], keep_dims=True)",
    "tf.count_nonzero": "tf.count_nonzero(input_tensor=x, reduction_indices=[1], keep_dims=True)",
    "tf.math.count_nonzero": "tf.math.count_nonzero(input_tensor=x, reduction_indices=[1], keep_dims=True)",
    "tf.argmax": "tf.argmax(x, dimension=1)",
    "tf.argmin": "tf.argmin(x, dimension=1)",
    "tf.math.argmax": "tf.math.argmax(x, None, None, 1, tf.int32)",
    "tf.math.argmin": "tf.math.argmin(x, dimension=0)",
    "tf.arg_max": "tf.arg_max(x, 1)",
    "tf.arg_min": "tf.arg_min(x, dimension=1)",
    "tf.expand_dims": "tf.expand_dims(x, dim=1)",
    "tf.squeeze": "tf.squeeze(tf.expand_dims(x, 1), squeeze_dims=[1])",
    "tf.nn.softmax": "tf.nn.softmax(x, dim=0)",
    "tf.math.softmax": "tf.math.softmax(x, dim=0)",
    "tf.nn.log_softmax": "tf.nn.log_softmax(x, dim=0)",
    "tf.math.log_softmax": "tf.math.log_softmax(x, dim=0)",
    "tf.nn.l2_normalize": "tf.nn.l2_normalize(x, dim=0)",
    "tf.math.l2_normalize": "tf.math.l2_normalize(x, dim=0)",
    "tf.linalg.l2_normalize": "tf.linalg.l2_normalize(x, dim=0)",
    "tf.norm": "tf.norm(x, axis=1, keep_dims=True)",
    "tf.linalg.norm": "tf.linalg.norm(x, 'euclidean', 1, name=None, keep_dims=True)",
    "tf.nn.moments": "tf.nn.moments(x, [0], keep_dims=True)",
    "tf.nn.sufficient_statistics": "tf.nn.sufficient_statistics(x, [0], keep_dims=True)[:3]",
    "tf.nn.weighted_moments": "tf.nn.weighted_moments(x, [0], tf.ones_like(x), keep_dims=True)",
    "tf.zeros_like": "tf.zeros_like(tensor=x, optimize=True)",
    "tf.ones_like": "tf.ones_like(tensor=x, optimize=True)",
    "tf.convert_to_tensor": "tf.convert_to_tensor(v, None, 'c', tf.float32)",
    "tf.batch_to_space": "tf.batch_to_space(bt, [[0, 0], [0, 0]], block_size=2)",
    "tf.batch_to_space_nd": "tf.batch_to_space_nd(bt, [2, 2], [[0, 0], [0, 0]])",
    "tf.space_to_batch_nd": "tf.space_to_batch_nd(img, [2, 2], [[0, 0], [0, 0]])",
    "tf.manip.batch_to_space_nd": "tf.manip.batch_to_space_nd(bt, [2, 2], [[0, 0], [0, 0]])",
    "tf.depth_to_space": "tf.depth_to_space(tf.tile(img, [1, 1, 1, 2]), 2)",
    "tf.space_to_depth": "tf.space_to_depth(img, 2)",
    "tf.nn.conv1d": "tf.nn.conv1d(seq, kernel1d, 1, 'SAME', use_cudnn_on_gpu=True)",
    "tf.nn.conv2d": "tf.nn.conv2d(img, kernel, [1, 1, 1, 1], 'SAME', True)",
    "tf.nn.convolution": "tf.nn.convolution(img, filter=kernel, padding='VALID', dilation_rate=[2, 2])",
    "tf.nn.depthwise_conv2d": "tf.nn.depthwise_conv2d(img, kernel, [1, 1, 1, 1], 'SAME', rate=[2, 2])",
    "tf.nn.separable_conv2d": "tf.nn.separable_conv2d(img, kernel, tf.ones([1, 1, 4, 3]), [1, 1, 1, 1], 'SAME', "
                              "rate=[1, 1])",
    "tf.nn.conv2d_transpose": "tf.nn.conv2d_transpose(value=img, filter=kernel, output_shape=[1, 6, 6, 2], "
                              "strides=[1, 1, 1, 1])",
    "tf.nn.conv2d_backprop_input": "tf.nn.conv2d_backprop_input([1, 6, 6, 2], kernel, img, [1, 1, 1, 1], 'SAME')",
    "tf.nn.pool": "tf.nn.pool(img, [2, 2], 'MAX', 'SAME', dilation_rate=[1, 1])",
    "tf.nn.max_pool": "tf.nn.max_pool(img, [1, 2, 2, 1], [1, 2, 2, 1], 'SAME')",
    "tf.nn.avg_pool": "tf.nn.avg_pool(value=img, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='VALID')",
    "tf.nn.avg_pool2d": "tf.nn.avg_pool2d(value=img, ksize=2, strides=2, padding='VALID')",
    "tf.nn.max_pool_with_argmax": "tf.nn.max_pool_with_argmax(img, [1, 2, 2, 1], [1, 2, 2, 1], 'SAME', "
                                  "Targmax=tf.int64)[0]",
    "tf.nn.dilation2d": "tf.nn.dilation2d(img, dil, [1, 1, 1, 1], [1, 1, 1, 1], 'SAME')",
    "tf.nn.erosion2d": "tf.nn.erosion2d(img, dil, [1, 1, 1, 1], [1, 1, 1, 1], 'SAME')",
    "tf.nn.batch_norm_with_global_normalization": "tf.nn.batch_norm_with_global_normalization(t=img, "
        "m=tf.zeros([2]), v=tf.ones([2]), beta=tf.zeros([2]), gamma=tf.ones([2]), variance_epsilon=0.001, "
        "scale_after_normalization=True)",
    "tf.nn.weighted_cross_entropy_with_logits": "tf.nn.weighted_cross_entropy_with_logits(targets=labels, "
                                                "logits=logits, pos_weight=2.0)",
    "tf.nn.softmax_cross_entropy_with_logits_v2": "tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, "
                                                  "logits=logits, dim=-1)",
    "tf.reverse_sequence": "tf.reverse_sequence(x, lengths, seq_dim=1, batch_dim=0)",
    "tf.extract_image_patches": "tf.extract_image_patches(img, ksizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], "
                                "rates=[1, 1, 1, 1], padding='VALID')",
    "tf.image.extract_image_patches": "tf.image.extract_image_patches(img, [1, 2, 2, 1], [1, 2, 2, 1], "
                                      "[1, 1, 1, 1], 'VALID')",
    "tf.floor_div": "tf.floor_div(ints, 2)",
    "tf.confusion_matrix": "tf.confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1], 3)",
    "tf.bincount": "tf.bincount(ints)",
    "tf.linalg.transpose": "tf.linalg.transpose(tf.reshape(x, [1, 3, 4]))",
    "tf.manip.gather_nd": "tf.manip.gather_nd(x, [[0, 1], [2, 3]])",
    "tf.gather_nd": "tf.gather_nd(x, [[0, 1], [2, 3]], 'g')",
    "tf.manip.reshape": "tf.manip.reshape(x, [4, 3])",
    "tf.transpose": "tf.transpose(x, [1, 0], 't')",
    "tf.pad": "tf.pad(x, [[1, 0], [0, 1]], 'CONSTANT', 'p')",
    "tf.boolean_mask": "tf.boolean_mask(x, [True, False, True], 'm')",
    "tf.shape": "tf.shape(x, 's', tf.int64)",
    "tf.size": "tf.size(x, 's', tf.int64)",
    "tf.math.confusion_matrix": "tf.math.confusion_matrix([0, 1, 2], [0, 2, 2], 3, tf.int32, 'c')",
    "tf.nn.in_top_k": "tf.nn.in_top_k(logits, [0, 1, 2], 2)",
    "tf.math.in_top_k": "tf.math.in_top_k(logits, [0, 1, 2], 2)",
    "tf.nn.embedding_lookup": "tf.nn.embedding_lookup(x, [2, 0], None, 'e', validate_indices=True)",
    # TF 1's partition_strategy='mod' (default or given) is never read for one tensor: TF 2's 'div'
    "tf.nn.nce_loss": f"tf.nn.nce_loss(emb, bias6, cls, x, 3, 6, 1, {SAMPLED}, True)",
    "tf.nn.nce_loss#mod": f"tf.nn.nce_loss(emb, bias6, cls, x, 3, 6, 1, {SAMPLED}, False, 'mod', 'n')",
    # shards: TF 1 given 'div' reads the rows TF 2 reads
    "tf.nn.embedding_lookup#div": "tf.nn.embedding_lookup([x, x * 2.0, x + 1.0], [0, 4, 8, 2], 'div')",
    "tf.nn.nce_loss#div": f"tf.nn.nce_loss([emb[:3], emb[3:]], bias6, cls, x, 3, 6, sampled_values={SAMPLED}, "
                          "partition_strategy='div')",
    "tf.nn.sampled_softmax_loss": f"tf.nn.sampled_softmax_loss(weights=emb, biases=bias6, labels=cls, inputs=x, "
                                  f"num_sampled=3, num_classes=6, sampled_values={SAMPLED}, "
                                  "remove_accidental_hits=True, partition_strategy='mod')",
    "tf.nn.depth_to_space": "tf.nn.depth_to_space(tf.tile(img, [1, 1, 1, 2]), 2, 'd')",
    "tf.nn.space_to_depth": "tf.nn.space_to_depth(img, 2, 'd')",
    "tf.nn.crelu": "tf.nn.crelu(x, 'c')",
    "tf.string_to_number": "tf.string_to_number(string_tensor=numbers)",
    "tf.strings.to_number": "tf.strings.to_number(string_tensor=numbers)",
    "tf.string_to_hash_bucket": "tf.string_to_hash_bucket(string_tensor=words, num_buckets=7)",
    "tf.strings.to_hash_bucket": "tf.strings.to_hash_bucket(string_tensor=words, num_buckets=7)",
    "tf.strings.length": "tf.strings.length(words, 'l', 'BYTE')",
    "tf.strings.substr": "tf.strings.substr(words, 0, 1, 's', 'BYTE')",
    "tf.substr": "tf.substr(words, 0, 1, 's')",
    "tf.debugging.assert_all_finite": "tf.debugging.assert_all_finite(t=x, msg='bad')",
    "tf.verify_tensor_all_finite": "tf.verify_tensor_all_finite(x, 'bad')",
    "tf.tuple": "tf.tuple([x, x], 't')[0]",
    "tf.gradients": "tf.gradients(tf.reduce_sum(x * x), [x], colocate_gradients_with_ops=True)[0]",
    "tf.hessians": "(lambda w: tf.hessians(tf.reduce_sum(w * w * w), w, colocate_gradients_with_ops=False)[0])(v * 1.0)",
    "tf.cond": "tf.cond(tf.constant(True), lambda: x, lambda: x * 2.0, strict=True)",
    "tf.while_loop": "tf.while_loop(lambda i: i < 3, lambda i: (i + 1,), (tf.constant(0),), "
                     "return_same_structure=True)[0]",
    # the exact transforms (api_transforms)
    "tf.to_float": "tf.to_float(ints)",
    "tf.to_double": "tf.to_double(ints)",
    "tf.to_int32": "tf.to_int32(x, 'i')",
    "tf.to_int64": "tf.to_int64(x)",
    "tf.to_bfloat16": "tf.cast(tf.to_bfloat16(x), tf.float32)",
    "tf.to_complex64": "tf.math.real(tf.to_complex64(x))",
    "tf.to_complex128": "tf.math.real(tf.to_complex128(x))",
    "tf.nn.softmax_cross_entropy_with_logits": "tf.nn.softmax_cross_entropy_with_logits(labels=labels, "
                                               "logits=logits)",
    "tf.nn.dropout": "tf.nn.dropout(x, 1.0)",
    "tf.nn.dilation2d#add_argument": "tf.nn.dilation2d(img, dil, [1, 1, 1, 1], [1, 1, 1, 1], 'VALID')",
    # renames to another TF 2 function that is not the same Python object
    "tf.floordiv": "tf.floordiv(ints, 3)",
    "tf.multinomial#shape": "tf.shape(tf.multinomial(logits, 5, output_dtype=tf.int32))",
    "tf.random.multinomial#shape": "tf.shape(tf.random.multinomial(logits, 5))",
    "tf.random_poisson#shape": "tf.shape(tf.random_poisson(2.0, [4, 3]))",
    "tf.random.poisson#shape": "tf.shape(tf.random.poisson(2.0, [4, 3]))",
    "tf.quantize_v2#shape": "tf.shape(tf.quantize_v2(x, -3.0, 3.0, tf.quint8)[0])",
    "tf.sparse_matmul": "tf.sparse_matmul(x, tf.transpose(x))",
    "tf.decode_raw": "tf.decode_raw(bytes=tf.constant(['abcd']), out_type=tf.uint8)",
    "tf.io.decode_raw": "tf.io.decode_raw(bytes=tf.constant(['abcd']), out_type=tf.uint8)",
    "tf.decode_csv": "tf.decode_csv(['1,2'], [[0], [0]], ',', True, 'd')[1]",
}
# Spec rows where numbers do not apply, and why.
NOT_NUMERIC = {
    "tf.gfile.": "files: same calls under tf.io.gfile (checked: every rename resolves, test_api_spec.py)",
    "tf.load_file_system_library": "loads a shared library",
    "tf.test.": "test utilities",
    "tf.autograph.": "autograph display options",
    "tf.saved_model.": "file layout checks",
    "tf.data.experimental.": "type specs (no numbers)",
    "tf.train.sdca_": "raw ops of a removed optimizer",
    "tf.feature_column.": "feature-column specs (no numbers)",
    "tf.io.serialize": "serialized protos",
    "tf.serialize": "serialized protos",
    "tf.parse_": "proto parsing",
    "tf.io.parse_": "proto parsing",
    "tf.io.decode_csv": "text parsing (tf.decode_csv has a numeric case)",
    "tf.random.stateless_multinomial": "stateless draws: same seed, different kernel version",
    "tf.nn.ctc_beam_search_decoder": "decoder output structure",
    "tf.nn.embedding_lookup_sparse": "sparse ids",
    "tf.nn.fractional_": "random pooling (refused)",
    "tf.sparse": "SparseTensor inputs",
    "tf.string_split": "ragged output",
    "tf.data.": "dataset plumbing",
    "tf.initializers.uniform_unit_scaling": "refused",
    "tf.uniform_unit_scaling_initializer": "refused",
    "tf.image.sample_distorted_bounding_box": "random crop boxes",
    "tf.image.crop_and_resize": "sampling positions (same op, renamed argument box_ind)",
    "tf.image.draw_bounding_boxes": "images of boxes",
    "tf.contrib.": "tf.contrib (module deprecation: refused or renamed; renames resolve)",
    "slim.": "tf-slim (regularizers have numeric cases)",
    "tf.keras.": "Keras 3 (tf1clip's proven tables decide)",
    "tf.device": "device placement",
    "tf.name_scope": "names only (refused)",
    "tf.debugging.assert_": "assertions",
    "tf.assert_": "assertions",
    "tf.image.extract_glimpse": "refused",
    "tf.nn.conv3d": "same kernel as conv2d's rename (filter → filters)",
    "tf.nn.conv3d_transpose": "same rename as conv2d_transpose",
    "tf.constant": "verify_shape: refused (TF 2 always verifies)",
    "tf.math.bincount": "same as tf.bincount",
    "tf.strings.split": "refused (ragged)",
    "tf.strings.": "string ops (numeric cases for to_number/to_hash_bucket/length/substr)",
    "tf.distribute.": "strategies (no numbers)",
    "tf.lite.": "converter",
    "tf.summary.": "summaries (refused: compat.v1)",
    "tf.Variable": "constructor (signature check)",
    "tf.layers.InputSpec": "a layer's input spec (no numbers)",
    "tf.train.confusion_matrix": "not in TF 2.21's tf.compat.v1 (tf.confusion_matrix has a numeric case)",
    "tf.nn.dilation2d": "numeric case under #add_argument",
    "*.": "methods of any object (colocate_gradients_with_ops dropped; iterators refused)",
    "tf.image.resize": "refused (half-pixel centers); tests below show the numbers differ",
    "tf.image.resize_": "refused (half-pixel centers)",
}


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _dotted(node) -> str:
    return _code(node)


def tf2_source(tf1_source: str) -> str:
    """The TF 2 source to_tf2 makes of the outermost TF 1 call in `tf1_source` (and its inner calls)."""

    class Rewrite(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            func = _dotted(original.func)
            if not func.startswith("tf.") or isinstance(original.func, cst.Call):
                return updated
            # each name of ENV is one tensor, as the translator's model knows of a variable
            name, call = to_tf2(func, updated, one_tensor=lambda node: isinstance(node, cst.Name))
            return call.with_changes(func=cst.parse_expression(name)) if name != func else call

    return _code(cst.parse_expression(tf1_source).visit(Rewrite()))


def _tensors(ns_tf, names):
    return {k: ns_tf.constant(v) for k, v in ENV.items() if k in names}


def run_tf1(source: str, variables=("x",)):
    graph = tf.Graph()
    with graph.as_default():
        scope = {"tf": tf.compat.v1, **_tensors(tf, ENV)}
        out = eval(source, scope)  # noqa: S307 - the test's own source text
        with tf.compat.v1.Session(graph=graph) as sess:
            return sess.run(out)


def run_tf2(source: str):
    scope = {"tf": tf, **_tensors(tf, ENV)}
    needs_graph = "tf.gradients" in source or "tf.hessians" in source
    if needs_graph:
        out = tf.function(lambda: eval(source, scope))()  # noqa: S307
    else:
        out = eval(source, scope)  # noqa: S307
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, out)


def _same(a, b):
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_tf1_graph_and_tf2_eager_give_the_same_numbers(key):
    source = SAMPLES[key]
    converted = tf2_source(source)
    _same(run_tf1(source), run_tf2(converted))


def _rows():
    """Every spec row that changes a call: keyword renames, reorders, transformers, renames to
    another TF 2 function object."""
    rows = set(spec.KEYWORD_RENAMES) | set(spec.REORDERS) | set(spec.TRANSFORMERS)
    for old, new in spec.RENAMES.items():
        if new.startswith("tf.compat.v1."):
            continue
        try:
            same = _resolve(tf.compat.v1, old[3:]) is _resolve(tf, new.replace("tf.compat.v2.", "tf.")[3:])
        except AttributeError:
            same = False
        if not same:
            rows.add(old)
    return sorted(rows)


def _resolve(root, dotted):
    for part in dotted.split("."):
        root = getattr(root, part)
    return root


def _refused(row: str) -> bool:
    try:
        to_tf2(row, cst.parse_expression(f"{row.replace('*.', 'obj.')}(a)"))
    except NoTF2Mapping:
        return True
    except Exception:  # noqa: BLE001 - a sample call of the wrong arity is not a refusal
        return False
    return False


def test_every_call_changing_spec_row_is_proven_refused_or_explained():
    covered = {k.split("#")[0] for k in SAMPLES}
    missing = [row for row in _rows() if row not in covered and not _refused(row)
               and not any(row.startswith(prefix) or row == prefix for prefix in NOT_NUMERIC)]
    assert not missing, f"spec rows with no numeric case, no refusal and no reason: {missing}"


def test_dropout_keep_prob_becomes_the_drop_rate():
    """tf.nn.dropout(x, keep_prob=0.8): TF 1 keeps ~80% and scales them by 1/0.8; so does TF 2's call."""
    big = np.ones((200, 500), np.float32)
    source = tf2_source("tf.nn.dropout(big, 0.8, None, 3)")
    assert "rate=1 - 0.8" in source
    graph = tf.Graph()
    with graph.as_default():
        out = tf.compat.v1.nn.dropout(tf.constant(big), 0.8, None, 3)
        with tf.compat.v1.Session(graph=graph) as sess:
            old = sess.run(out)
    new = eval(source, {"tf": tf, "big": tf.constant(big)}).numpy()  # noqa: S307
    for kept in (old[old != 0], new[new != 0]):
        np.testing.assert_allclose(kept, 1 / 0.8, rtol=1e-6)
    assert abs((old != 0).mean() - 0.8) < 0.01 and abs((new != 0).mean() - 0.8) < 0.01


def test_softmax_cross_entropy_v1_stops_the_labels_gradient():
    source = "tf.nn.softmax_cross_entropy_with_logits(labels=labels * 2.0, logits=logits)"
    converted = tf2_source(source)
    assert "tf.stop_gradient(labels * 2.0)" in converted
    graph = tf.Graph()
    with graph.as_default():
        lab, log = tf.constant(ENV["labels"]), tf.constant(ENV["logits"])
        loss = tf.compat.v1.nn.softmax_cross_entropy_with_logits(labels=lab * 2.0, logits=log)
        g_lab, g_log = tf.compat.v1.gradients(tf.reduce_sum(loss), [lab, log])
        assert g_lab is None
        with tf.compat.v1.Session(graph=graph) as sess:
            old_loss, old_g = sess.run([loss, g_log])
    lab, log = tf.constant(ENV["labels"]), tf.constant(ENV["logits"])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([lab, log])
        loss = eval(converted, {"tf": tf, "labels": lab, "logits": log})  # noqa: S307
        total = tf.reduce_sum(loss)
    assert tape.gradient(total, lab) is None
    np.testing.assert_allclose(loss.numpy(), old_loss, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(total, log).numpy(), old_g, rtol=1e-6)


@pytest.mark.parametrize("kind, scale", [("l1", 0.3), ("l2", 0.3)])
def test_slim_regularizers_become_keras_ones_with_the_same_penalty(kind, scale):
    import tf_slim as slim

    w = RNG.randn(4, 3).astype(np.float32)
    name, call = to_tf2(f"slim.{kind}_regularizer", cst.parse_expression(f"slim.{kind}_regularizer({scale})"))
    keras = eval(_code(call.with_changes(func=cst.parse_expression(name))), {"tf": tf})  # noqa: S307
    graph = tf.Graph()
    with graph.as_default():
        penalty = getattr(slim, f"{kind}_regularizer")(scale)(tf.constant(w))
        with tf.compat.v1.Session(graph=graph) as sess:
            old = sess.run(penalty)
    np.testing.assert_allclose(float(keras(tf.constant(w))), old, rtol=1e-6)


def _drawn_both_ways(tf1: str, shape: tuple) -> tuple:
    """(TF 1.x's initializer `tf1` drawn in a graph, its TF 2 spelling drawn eagerly), of `shape`."""
    graph = tf.Graph()
    with graph.as_default():
        values = eval(tf1, {"tf": tf.compat.v1})(shape, dtype=tf.float32)  # noqa: S307
        with tf.compat.v1.Session(graph=graph) as sess:
            old = sess.run(values)
    return old, eval(tf2_source(tf1), {"tf": tf})(shape, dtype=tf.float32).numpy()  # noqa: S307


@pytest.mark.parametrize("tf1, stat", [
    ("tf.random_normal_initializer()", (0.0, 1.0)),
    ("tf.random_normal_initializer(0.5, 0.1)", (0.5, 0.1)),
    ("tf.random_uniform_initializer()", (0.5, 1 / np.sqrt(12))),
    ("tf.random_uniform_initializer(-2.0)", (-0.5, 3 / np.sqrt(12))),
    ("tf.truncated_normal_initializer()", (0.0, 0.8796)),
    ("tf.truncated_normal_initializer(stddev=0.1)", (0.0, 0.08796)),
    ("tf.glorot_uniform_initializer()", (0.0, np.sqrt(6 / 400) / np.sqrt(3))),
    ("tf.zeros_initializer()", (0.0, 0.0)),
    ("tf.constant_initializer(0.25)", (0.25, 0.0)),
    # fans of a (200, 200) kernel: 200 in, 200 out; std = sqrt(scale / fan) for every distribution
    ("tf.glorot_normal_initializer()", (0.0, np.sqrt(1 / 200))),
    ("tf.initializers.glorot_normal(seed=3)", (0.0, np.sqrt(1 / 200))),
    ("tf.initializers.glorot_uniform()", (0.0, np.sqrt(1 / 200))),
    ("tf.variance_scaling_initializer()", (0.0, np.sqrt(1 / 200))),
    ("tf.variance_scaling_initializer(2.0, 'fan_avg', 'uniform')", (0.0, np.sqrt(2 / 200))),
    ("tf.variance_scaling_initializer(mode='fan_out', distribution='untruncated_normal')", (0.0, np.sqrt(1 / 200))),
    ("tf.variance_scaling_initializer(3.0, distribution='normal')", (0.0, np.sqrt(3 / 200))),
    ("tf.initializers.variance_scaling(scale=0.5)", (0.0, np.sqrt(0.5 / 200))),
    ("tf.initializers.he_normal()", (0.0, np.sqrt(2 / 200))),
    ("tf.initializers.he_uniform()", (0.0, np.sqrt(2 / 200))),
    ("tf.initializers.lecun_normal()", (0.0, np.sqrt(1 / 200))),
    ("tf.initializers.lecun_uniform()", (0.0, np.sqrt(1 / 200))),
    # an orthogonal (200, 200) matrix: unit rows, so entries of variance 1 / 200 (times gain²)
    ("tf.orthogonal_initializer()", (0.0, np.sqrt(1 / 200))),
    ("tf.initializers.orthogonal(0.5)", (0.0, 0.5 * np.sqrt(1 / 200))),
    ("tf.initializers.identity(2.0)", (2 / 200, 2 * np.sqrt(1 / 200 * (1 - 1 / 200)))),
    ("tf.initializers.ones()", (1.0, 0.0)),
])
def test_initializers_draw_from_tf1s_distribution(tf1, stat):
    """An initializer's TF 2 spelling with TF 1's defaults written out (random_normal: stddev 1.0,
    not TF 2's 0.05): the same distribution (moments of 40 000 draws), TF 1 graph vs TF 2 eager."""
    shape = (200, 200)
    old, new = _drawn_both_ways(tf1, shape)
    for drawn in (old, new):
        assert abs(drawn.mean() - stat[0]) < 0.01 + 0.02 * stat[1]
        assert abs(drawn.std() - stat[1]) < 0.01 + 0.02 * stat[1]


@pytest.mark.parametrize("tf1, shape", [
    ("tf.glorot_normal_initializer()", (5, 5, 40, 50)),          # fan_in 1000, fan_out 1250
    ("tf.variance_scaling_initializer(mode='fan_out')", (5, 5, 40, 50)),
    ("tf.initializers.he_uniform()", (4, 10, 1250)),             # fan_in 40, fan_out 12 500
    ("tf.variance_scaling_initializer(mode='fan_avg', distribution='uniform')", (50000,)),  # a bias: 50 000 both
    ("tf.orthogonal_initializer(2.0)", (5, 5, 40, 50)),          # 1000 rows, 50 columns
])
def test_initializers_compute_tf1s_fans_for_every_rank(tf1, shape):
    """The fans TF 1.x computed for a kernel of any rank (its receptive field times its last two
    dimensions; a vector's length for both): the same spread, TF 1 graph vs TF 2 eager."""
    old, new = _drawn_both_ways(tf1, shape)
    assert new.shape == old.shape == shape
    assert abs(new.std() / old.std() - 1) < 0.03, (old.std(), new.std())
    if "orthogonal" in tf1:  # columns orthogonal, of length gain, on both sides
        for drawn in (old, new):
            flat = drawn.reshape(-1, shape[-1])
            np.testing.assert_allclose(flat.T @ flat, 4.0 * np.eye(shape[-1]), atol=1e-4)


def test_resize_images_is_refused_because_tf2_resize_computes_other_numbers():
    graph = tf.Graph()
    with graph.as_default():
        old = tf.compat.v1.image.resize_images(ENV["img"], [3, 3], method=tf.image.ResizeMethod.BILINEAR)
        with tf.compat.v1.Session(graph=graph) as sess:
            old = sess.run(old)
    new = tf.image.resize(ENV["img"], [3, 3], method="bilinear").numpy()
    assert np.abs(old - new).max() > 1e-2  # the spec's rename would change the numbers
    for name in ("tf.image.resize_images", "tf.image.resize"):
        with pytest.raises(NoTF2Mapping, match="half"):
            to_tf2(name, cst.parse_expression(f"{name}(img, [3, 3], method=tf.image.ResizeMethod.BILINEAR)"))


@pytest.mark.parametrize("tf1, reason", [
    ("tf.train.AdamOptimizer(0.1)", "tf.compat.v1"),
    ("tf.contrib.layers.fully_connected(x, 3)", "contrib"),
    ("tf.nn.rnn_cell.BasicLSTMCell(3)", "tf.compat.v1"),
    ("tf.layers.dense(x, 3)", "does not exist in TF 2"),
    ("tf.nn.dropout(x)", "neither keep_prob nor rate"),
    ("tf.nn.dropout(x, 0.5, rate=0.5)", "both keep_prob and rate"),
    ("tf.zeros_like(x, optimize=False)", "optimize"),
    ("tf.cond(p, f, g, strict=False)", "strict"),
    ("tf.Variable(v, True, ['c'])", "collections"),
    ("tf.reduce_sum(x, 1, True, 'n', [0])", "twice"),
    ("tf.nn.embedding_lookup([a, b], ids)", "shards"),
    ("tf.nn.nce_loss(w, b, y, x, 2, 5)", "not known to be one variable"),
    ("tf.nn.sampled_softmax_loss(w, b, y, x, 2, 5, partition_strategy='mod')", "partition_strategy='mod'"),
    ("tf.image.resize_bilinear(img, [2, 2])", "half_pixel"),
    ("tf.space_to_batch(img, [[0, 0], [0, 0]], block_size=2)", "block_shape"),
    ("tf.keras.models.save_model(m, 'p')", "save_format"),
    ("tf.random_normal_initializer(stddev=0.1, dtype=tf.float32)", "dtype"),
    ("tf.orthogonal_initializer(1.0, None, tf.float32)", "3 positional"),
    ("tf.variance_scaling_initializer(**kw)", "kwargs"),
    ("tf.app.flags.DEFINE_integer('a', 1, 'h')", "flags"),
    ("tf.keras.optimizers.Adagrad(0.1)", "Keras 3"),
    ("tf.nn.dropout(*args)", "args"),
])
def test_meaning_that_cannot_be_kept_is_refused(tf1, reason):
    call = cst.parse_expression(tf1)
    with pytest.raises(NoTF2Mapping, match=reason):
        to_tf2(_dotted(call.func), call)


def test_every_refusing_transformer_row_refuses():
    for name, row in spec.TRANSFORMERS.items():
        if row["kind"] == "refuse":
            assert _refused(name), name


def test_every_compat_rename_refuses_unless_overridden():
    for old, new in spec.RENAMES.items():
        if new.startswith("tf.compat.v1.") and old not in OVERRIDES:
            with pytest.raises(NoTF2Mapping):
                reference_to_tf2(old)


def test_named_transforms_are_the_classified_ones():
    used = {row["function"] for row in spec.TRANSFORMERS.values() if row["kind"] == "transform"}
    assert used == set(api_transforms.FUNCTIONS)


def test_overrides_target_real_tf2_symbols():
    for name, override in OVERRIDES.items():
        _resolve(tf, override.target[3:])

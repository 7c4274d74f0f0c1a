"""The smaller tf.contrib pieces against TF 1.15's semantics: learn, HParams, data, projector,
opt (LazyAdam, AdamW), framework.nest, and TF 1.x flags whose names absl's logging took.

Numbers are written out by hand or recomputed in NumPy; graphs run in tf.compat.v1 graph mode;
the runner's behaviour runs in real `tf1clip run` subprocesses.
"""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
import tensorflow as tf

from conftest import run_tf1clip
from test_runner import stderr_lines
from tf1clip.contrib import data as contrib_data
from tf1clip.contrib import framework, learn, opt, training
from tf1clip.contrib.tensorboard.plugins import projector

v1 = tf.compat.v1


def test_vocabulary_processor_ids_trim_and_round_trip(tmp_path):
    docs = ["the cat sat", "the dog sat down", "a cat"]
    proc = learn.preprocessing.VocabularyProcessor(4)
    ids = np.array(list(proc.fit_transform(docs)))
    # ids by first appearance, 0 for unknown / padding
    assert ids.tolist() == [[1, 2, 3, 0], [1, 4, 3, 5], [6, 2, 0, 0]]
    assert list(proc.transform(["the bird"]))[0].tolist() == [1, 0, 0, 0]
    assert list(proc.reverse([[1, 2, 0]])) == ["the cat <UNK>"]
    trimmed = learn.preprocessing.VocabularyProcessor(3, min_frequency=1)
    out = np.array(list(trimmed.fit_transform(docs)))
    # only words seen more than once stay; ids by frequency, ties alphabetical: cat, sat, the
    assert out.tolist() == [[3, 1, 2], [3, 0, 2], [0, 1, 0]]
    path = tmp_path / "vocab"
    proc.save(str(path))
    again = learn.preprocessing.VocabularyProcessor.restore(str(path))
    assert len(again.vocabulary_) == 7 and list(again.transform(["sat down"]))[0].tolist() == [3, 5, 0, 0]
    assert learn.preprocessing.TOKENIZER_RE.findall("Don't-stop HTTPServer x") == ["Don't-stop", "HTTP", "Server", "x"]
    assert (learn.ModeKeys.TRAIN, learn.ModeKeys.EVAL, learn.ModeKeys.INFER) == ("train", "eval", "infer")


def test_hparams_types_parse_and_json():
    hp = training.HParams(learning_rate=0.1, layers=2, name="nmt", sizes=[1, 2], flag=True)
    hp.add_hparam("extra", 3)
    hp.parse("learning_rate=0.5,sizes=[4,5,6],flag=false,layers=7")
    hp.parse("sizes[0]=9")
    assert (hp.learning_rate, hp.layers, hp.sizes, hp.flag) == (0.5, 7, [9, 5, 6], False)
    hp.override_from_dict({"layers": 3, "learning_rate": 2})  # int -> float is allowed
    assert hp.learning_rate == 2.0 and isinstance(hp.learning_rate, float)
    for bad in ({"layers": 1.5}, {"name": 3}, {"flag": 1}, {"layers": [1]}, {"sizes": 2}):
        with pytest.raises(ValueError):
            hp.override_from_dict(bad)
    with pytest.raises(ValueError, match="reserved"):
        hp.add_hparam("values", 1)
    assert json.loads(hp.to_json(sort_keys=True)) == hp.values()
    assert hp.to_json(indent=4, sort_keys=True).startswith('{\n    "extra": 3')
    assert training.HParams(a=1).parse_json('{"a": 5}').a == 5
    assert "layers" in hp and hp.get("missing", 4) == 4 and hp.get("layers", 1) == 3
    hp.del_hparam("extra")
    assert "extra" not in hp.values()


def test_contrib_data_transformations():
    with tf.Graph().as_default():
        ds = v1.data.Dataset.range(7).apply(contrib_data.batch_and_drop_remainder(3))
        mapped = v1.data.Dataset.range(5).apply(contrib_data.map_and_batch(lambda x: x * 10, 2))
        padded = v1.data.Dataset.from_tensor_slices([[1, 2], [3, 4], [5, 6]]).apply(
            contrib_data.padded_batch_and_drop_remainder(2, [3]))
        with v1.Session() as sess:
            def collect(d):
                it = v1.data.make_one_shot_iterator(d).get_next()
                out = []
                try:
                    while True:
                        out.append(sess.run(it).tolist())
                except tf.errors.OutOfRangeError:
                    return out

            assert collect(ds) == [[0, 1, 2], [3, 4, 5]]  # the last partial batch dropped
            assert collect(mapped) == [[0, 10], [20, 30], [40]]
            assert collect(padded) == [[[1, 2, 0], [3, 4, 0]]]


def test_projector_writes_its_config(tmp_path):
    config = projector.ProjectorConfig()
    embedding = config.embeddings.add()
    embedding.tensor_name = "embedding:0"
    embedding.metadata_path = "labels.tsv"
    with tf.Graph().as_default():
        writer = v1.summary.FileWriter(str(tmp_path))
        projector.visualize_embeddings(writer, config)
        writer.close()
    text = (tmp_path / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "embedding:0"' in text and 'metadata_path: "labels.tsv"' in text


def _adam_numpy(w, m, v, g, t, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    step = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - step * m / (np.sqrt(v) + eps), m, v


def test_lazy_adam_touches_only_the_gathered_rows():
    table0 = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    ids = [[1, 1, 3], [0, 1, 1]]
    with tf.Graph().as_default():
        table = v1.get_variable("table", initializer=table0)
        index = v1.placeholder(tf.int32, [3])
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, index)))
        train = opt.LazyAdamOptimizer(0.1).minimize(loss)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for step_ids in ids:
                sess.run(train, {index: step_ids})
            got = sess.run(table)
    w, m, v = table0.astype(np.float64), np.zeros((4, 3)), np.zeros((4, 3))
    for t, step_ids in enumerate(ids, 1):
        grad = np.zeros((4, 3))
        for i in step_ids:  # duplicates summed (the v1 optimizer's deduplication)
            grad[i] += 2 * w[i]
        rows = sorted(set(step_ids))
        w_new, m_new, v_new = _adam_numpy(w, m, v, grad, t)
        w[rows], m[rows], v[rows] = w_new[rows], m_new[rows], v_new[rows]  # other rows untouched
    np.testing.assert_allclose(got, w, rtol=1e-5)
    assert np.array_equal(got[2], table0[2])  # never looked up: Adam would have moved it through m


def test_adamw_decays_before_adam_and_only_listed_variables():
    def run(use_minimize):
        with tf.Graph().as_default():
            a = v1.get_variable("a", initializer=[1.0, -2.0])
            b = v1.get_variable("b", initializer=[3.0])
            loss = tf.reduce_sum(a * a) + tf.reduce_sum(b)
            optimizer = opt.AdamWOptimizer(weight_decay=0.01, learning_rate=0.1)
            if use_minimize:
                train = optimizer.minimize(loss, decay_var_list=[a])
            else:
                train = optimizer.apply_gradients(optimizer.compute_gradients(loss), decay_var_list=[a])
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                sess.run(train)
                return sess.run([a, b])

    expected_a, _, _ = _adam_numpy(np.array([1.0, -2.0]) * (1 - 0.01), 0, 0, 2 * np.array([1.0, -2.0]), 1)
    got_a, got_b = run(use_minimize=False)
    np.testing.assert_allclose(got_a, expected_a, rtol=1e-6)
    np.testing.assert_allclose(got_b, _adam_numpy(np.array([3.0]), 0, 0, np.array([1.0]), 1)[0], rtol=1e-6)
    # TF 1.15's minimize(decay_var_list=...) lost the list on its way to apply_gradients: every
    # variable decays. Kept as TF 1.15 had it (the numbers of a TF 1.x run).
    got_a, got_b = run(use_minimize=True)
    np.testing.assert_allclose(got_a, expected_a, rtol=1e-6)
    np.testing.assert_allclose(got_b, _adam_numpy(np.array([3.0 * 0.99]), 0, 0, np.array([1.0]), 1)[0], rtol=1e-6)


def test_framework_nest_keeps_is_sequence():
    assert framework.nest.is_sequence((1, 2)) and not framework.nest.is_sequence(1)
    assert framework.nest.flatten({"b": [1, 2], "a": 3}) == [3, 1, 2]


def test_old_flag_names_and_maybe_download_under_run(tmp_path):
    script = tmp_path / "flags_script.py"
    script.write_text(textwrap.dedent("""
        import tensorflow as tf
        tf.app.flags.DEFINE_string("log_dir", "./logs", "where the summaries go")
        tf.flags.DEFINE_integer("steps", 2, "how many")
        FLAGS = tf.app.flags.FLAGS

        def main(_):
            print("flags", FLAGS.log_dir, FLAGS.steps)
            tf.contrib.learn.datasets.base.maybe_download("inception5h.zip", "data", "http://example.com/i.zip")

        tf.app.run()
    """))
    proc = run_tf1clip("run", script, "--log_dir=/tmp/x", "--steps=5", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "flags /tmp/x 5" in proc.stdout
    lines = stderr_lines(proc)
    assert len(lines) == 1 and lines[0].startswith(f"{script}:9: maybe_download: ")
    assert "tf1clip never downloads: fetch http://example.com/i.zip into data yourself" in lines[0]


def test_crf_against_brute_force_enumeration():
    import itertools

    from tf1clip.contrib import crf

    rng = np.random.RandomState(3)
    scores = rng.normal(size=(3, 4, 3)).astype(np.float32)   # [batch, time, tags]
    trans = rng.normal(size=(3, 3)).astype(np.float32)
    tags = np.array([[0, 2, 1, 1], [2, 2, 0, 0], [1, 0, 0, 0]], dtype=np.int32)
    lengths = np.array([4, 2, 1], dtype=np.int32)
    with tf.Graph().as_default():
        with v1.variable_scope("crf"):
            ll, transitions = crf.crf_log_likelihood(tf.constant(scores), tf.constant(tags), tf.constant(lengths),
                                                      tf.constant(trans))
            decoded, best = crf.crf_decode(tf.constant(scores), tf.constant(trans), tf.constant(lengths))
            ll_var, made = crf.crf_log_likelihood(tf.constant(scores), tf.constant(tags), tf.constant(lengths))
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            got_ll, got_tags, got_best = sess.run([ll, decoded, best])
            assert made.name == "crf/transitions:0" and made.shape.as_list() == [3, 3]

    def score(b, seq):
        return sum(scores[b, t, s] for t, s in enumerate(seq)) + sum(trans[a, c] for a, c in zip(seq, seq[1:]))

    for b, n in enumerate(lengths):
        all_scores = {seq: score(b, seq) for seq in itertools.product(range(3), repeat=int(n))}
        log_z = np.log(np.sum(np.exp(list(all_scores.values()))))
        np.testing.assert_allclose(got_ll[b], score(b, tuple(tags[b, :n])) - log_z, rtol=1e-5)
        best_seq = max(all_scores, key=all_scores.get)
        assert tuple(got_tags[b, :n]) == best_seq
        np.testing.assert_allclose(got_best[b], all_scores[best_seq], rtol=1e-5)
        viterbi, viterbi_score = crf.viterbi_decode(scores[b, :n], trans)
        assert tuple(viterbi) == best_seq and np.isclose(viterbi_score, all_scores[best_seq])


def test_contrib_lookup_is_tensorflows_lookup_ops(tmp_path):
    from tf1clip.contrib import lookup

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\nc\n")
    with tf.Graph().as_default():
        table = lookup.index_table_from_file(str(vocab), default_value=-1)
        ids = table.lookup(tf.constant(["b", "z", "a"]))
        with v1.Session() as sess:
            sess.run(v1.tables_initializer())
            assert sess.run(ids).tolist() == [1, -1, 0]


def test_contrib_losses_are_tf_slims_loss_ops_predictions_first():
    """tf.contrib.losses (TF 1.15's loss_ops, tf-slim's losses): predictions first, the mean over the elements,
    the loss in the LOSSES collection and in get_total_loss; mean_squared_error by hand."""
    from tf1clip.contrib import losses

    with tf.Graph().as_default():
        predictions = tf.constant([[1.0, 2.0], [3.0, 5.0]])
        labels = tf.constant([[1.0, 1.0], [1.0, 1.0]])
        mse = losses.mean_squared_error(predictions, labels, weights=0.5)
        total = losses.get_total_loss()
        with v1.Session() as sess:
            got, summed = sess.run([mse, total])
    assert got == pytest.approx(0.5 * (0 + 1 + 4 + 16) / 4) and summed == pytest.approx(got)


def test_slim_batch_norm_of_a_4d_input_runs_under_run(tmp_path):
    """tf-slim sends a 4-D batch_norm to the core layer, which TF 2.21 loads from `tf_keras.legacy_tf_layers`
    (tf-keras 2.21 ships it under `tf_keras.src`): it crashed with ModuleNotFoundError. Its numbers: the
    batch normalized (mean 0, variance v / (v + 0.001) per channel), and the update moved the moving mean by
    (1 - decay) of the batch mean."""
    script = tmp_path / "bn4d.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import tensorflow as tf
        x = tf.constant(np.arange(32, dtype=np.float32).reshape(2, 2, 2, 4))
        y = tf.contrib.layers.batch_norm(x, decay=0.5)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            moved = tf.identity(y)
        mean = [v for v in tf.global_variables() if v.name.endswith("moving_mean:0")][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(moved)
            print("out", out.mean(axis=(0, 1, 2)).round(5).tolist(), out.var(axis=(0, 1, 2)).round(5).tolist())
            print("moving_mean", sess.run(mean).round(5).tolist())
    """))
    proc = run_tf1clip("run", script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    values = np.arange(32, dtype=np.float32).reshape(2, 2, 2, 4)
    var = values.var(axis=(0, 1, 2))
    assert f"out {[0.0] * 4} {np.round(var / (var + 0.001), 5).tolist()}" in proc.stdout, proc.stdout
    assert f"moving_mean {np.round(values.mean(axis=(0, 1, 2)) * 0.5, 5).tolist()}" in proc.stdout, proc.stdout

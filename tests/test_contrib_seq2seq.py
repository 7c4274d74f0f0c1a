"""tf.contrib.seq2seq on TF 2.21 against TF 1.15's documented math, recomputed here in NumPy.

Each case runs a small graph under `tf1clip run` (the legacy cells need the TF 1.x face). The
script draws its weights with NumPy, loads them into the graph's variables and prints them
with the graph's outputs as JSON; the test recomputes the outputs from those weights with the
formulas of TF 1.15's source (cells, helpers, the decode loop, attention) and compares.
"""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from conftest import run_tf1clip

PRELUDE = """
import json
import numpy as np
import tensorflow as tf
rng = np.random.RandomState(7)

def load_all(sess):
    weights = {}
    for v in tf.global_variables():
        value = rng.uniform(-0.8, 0.8, v.shape.as_list()).astype(np.float32)
        if v.name.endswith("attention_g:0") or v.name.endswith("attention_b:0"):
            value = rng.uniform(0.5, 1.5, v.shape.as_list()).astype(np.float32)
        v.load(value, sess)
        weights[v.name] = value.tolist()
    return weights

def dump(**values):
    print("JSON" + json.dumps({k: np.asarray(v).tolist() for k, v in values.items()}))
"""


def _run(tmp_path, body):
    script = tmp_path / "case.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    proc = run_tf1clip("run", script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("JSON"))
    data = json.loads(line[4:])
    return {k: np.asarray(v) if not isinstance(v, dict) else v for k, v in data.items()}


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _crossent(logits, targets):
    logp = np.log(_softmax(logits))
    return -np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]


def test_sequence_loss_reductions(tmp_path):
    out = _run(tmp_path, """
        logits = rng.normal(size=(2, 3, 4)).astype(np.float32)
        targets = np.array([[1, 3, 0], [2, 2, 1]], dtype=np.int32)
        weights = np.array([[1.0, 0.5, 0.0], [1.0, 1.0, 2.0]], dtype=np.float32)
        s = tf.contrib.seq2seq.sequence_loss
        L, T, W = tf.constant(logits), tf.constant(targets), tf.constant(weights)
        cases = {
            "mean": s(L, T, W),
            "per_example": s(L, T, W, average_across_batch=False),
            "per_step": s(L, T, W, average_across_timesteps=False),
            "none": s(L, T, W, average_across_timesteps=False, average_across_batch=False),
            "sum_both": s(L, T, W, average_across_timesteps=False, average_across_batch=False,
                          sum_over_timesteps=True, sum_over_batch=True),
            "sum_steps": s(L, T, W, average_across_timesteps=False, average_across_batch=False,
                           sum_over_timesteps=True),
            "zero_weights": s(L, T, tf.zeros_like(W)),
        }
        try:
            s(L, T, W, sum_over_timesteps=True)
            clash = "no error"
        except ValueError as exc:
            clash = str(exc)
        with tf.Session() as sess:
            values = sess.run(cases)
        print("CLASH", clash)
        dump(logits=logits, **values)
    """)
    ce = _crossent(out["logits"], np.array([[1, 3, 0], [2, 2, 1]]))
    w = np.array([[1.0, 0.5, 0.0], [1.0, 1.0, 2.0]])
    weighted = ce * w
    np.testing.assert_allclose(out["mean"], weighted.sum() / w.sum(), rtol=1e-5)
    np.testing.assert_allclose(out["per_example"], weighted.sum(1) / w.sum(1), rtol=1e-5)
    np.testing.assert_allclose(out["per_step"], weighted.sum(0) / w.sum(0), rtol=1e-5)
    np.testing.assert_allclose(out["none"], weighted, rtol=1e-5)
    np.testing.assert_allclose(out["sum_both"], weighted.sum() / 5, rtol=1e-5)  # 5 non-zero weights
    np.testing.assert_allclose(out["sum_steps"], weighted.sum(1) / np.array([2, 3]), rtol=1e-5)
    assert out["zero_weights"] == 0.0  # a division by zero weight is 0, not NaN


def _rnn_step(x, h, kernel, bias):
    return np.tanh(np.concatenate([x, h], 1) @ kernel + bias)


def test_training_helper_basic_decoder_dynamic_decode(tmp_path):
    out = _run(tmp_path, """
        inputs = rng.normal(size=(2, 4, 3)).astype(np.float32)
        lengths = np.array([4, 2], dtype=np.int32)
        cell = tf.nn.rnn_cell.BasicRNNCell(5)
        helper = tf.contrib.seq2seq.TrainingHelper(tf.constant(inputs), tf.constant(lengths))
        layer = tf.layers.Dense(6, name="proj")
        h0 = tf.constant(rng.normal(size=(2, 5)).astype(np.float32))
        decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, h0, output_layer=layer)
        outputs, state, seq_len = tf.contrib.seq2seq.dynamic_decode(decoder, impute_finished=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            weights = load_all(sess)
            o, s, l, h = sess.run([outputs, state, seq_len, h0])
        dump(inputs=inputs, h0=h, rnn_output=o.rnn_output, sample_id=o.sample_id, state=s, lengths=l,
             kernel=weights["decoder/basic_rnn_cell/kernel:0"], bias=weights["decoder/basic_rnn_cell/bias:0"],
             proj=weights["decoder/proj/kernel:0"], proj_bias=weights["decoder/proj/bias:0"])
    """)
    x, h = out["inputs"], out["h0"]
    expected = np.zeros((2, 4, 6))
    lengths = np.array([4, 2])
    for t in range(4):
        new_h = _rnn_step(x[:, t], h, out["kernel"], out["bias"])
        logits = new_h @ out["proj"] + out["proj_bias"]
        done = t >= lengths  # finished before this step: outputs zero, state copied through
        expected[:, t] = np.where(done[:, None], 0.0, logits)
        h = np.where(done[:, None], h, new_h)
    np.testing.assert_allclose(out["rnn_output"], expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(out["sample_id"][0], expected[0].argmax(-1))
    np.testing.assert_allclose(out["state"], h, rtol=1e-4, atol=1e-5)
    assert out["lengths"].tolist() == [4, 2]


def test_greedy_embedding_helper_stops_at_end_token(tmp_path):
    out = _run(tmp_path, """
        embedding = rng.normal(size=(5, 3)).astype(np.float32)
        cell = tf.nn.rnn_cell.BasicRNNCell(5)
        helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(tf.constant(embedding), tf.fill([3], 1), 2)
        h0 = tf.constant(rng.normal(size=(3, 5)).astype(np.float32) * 3)
        decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, h0)
        outputs, _, seq_len = tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=6)
        sampled = tf.contrib.seq2seq.SampleEmbeddingHelper(tf.constant(embedding), tf.fill([3], 1), 2,
                                                           softmax_temperature=1e-7, seed=3)
        s_out, _, s_len = tf.contrib.seq2seq.dynamic_decode(
            tf.contrib.seq2seq.BasicDecoder(cell, sampled, h0), maximum_iterations=6)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            weights = load_all(sess)
            o, l, so, sl, h = sess.run([outputs, seq_len, s_out, s_len, h0])
        dump(embedding=embedding, h0=h, ids=o.sample_id, lengths=l, sampled_ids=so.sample_id, sampled_len=sl,
             kernel=weights["decoder/basic_rnn_cell/kernel:0"], bias=weights["decoder/basic_rnn_cell/bias:0"])
    """)
    emb, h = out["embedding"], out["h0"]
    x = emb[[1, 1, 1]]
    finished = np.zeros(3, bool)
    lengths = np.zeros(3, int)
    ids_seen = []
    for t in range(6):
        h = _rnn_step(x, h, out["kernel"], out["bias"])
        ids = h.argmax(-1)  # the outputs are the cell outputs (no output layer)
        ids_seen.append(ids)
        lengths = np.where(~finished, t + 1, lengths)
        finished |= ids == 2
        if finished.all():
            break
        x = emb[ids]
    steps = len(ids_seen)
    np.testing.assert_array_equal(out["ids"], np.stack(ids_seen, 1)[:, :steps])
    assert out["lengths"].tolist() == lengths.tolist()
    # a temperature of 1e-7 makes the softmax one-hot: sampling equals the greedy ids
    np.testing.assert_array_equal(out["sampled_ids"], out["ids"])
    assert out["sampled_len"].tolist() == lengths.tolist()


ATTENTION_CASE = """
    memory = rng.normal(size=(2, 4, 3)).astype(np.float32)
    mem_len = np.array([4, 2], dtype=np.int32)
    inputs = rng.normal(size=(2, 3, 2)).astype(np.float32)
    mechanism = tf.contrib.seq2seq.{mechanism}(5, tf.constant(memory), memory_sequence_length=tf.constant(mem_len),
                                               {option}=True)
    cell = tf.contrib.seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(5), mechanism, attention_layer_size=3,
                                               alignment_history=True)
    helper = tf.contrib.seq2seq.TrainingHelper(tf.constant(inputs), tf.constant([3, 3]))
    decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(2, tf.float32))
    outputs, state, _ = tf.contrib.seq2seq.dynamic_decode(decoder)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        weights = load_all(sess)
        o, history = sess.run([outputs.rnn_output, state.alignment_history.stack()])
    print("NAMES", sorted(weights))
    dump(memory=memory, inputs=inputs, output=o, history=history,
         **{{k[:-2].replace("decoder/", "").replace("/", "__"): v for k, v in weights.items()}})
"""


@pytest.mark.parametrize("mechanism, option", [("LuongAttention", "scale"), ("BahdanauAttention", "normalize")])
def test_attention_wrapper_against_its_formulas(tmp_path, mechanism, option):
    out = _run(tmp_path, ATTENTION_CASE.format(mechanism=mechanism, option=option))
    w = {k: np.asarray(v) for k, v in out.items()}
    mask = np.arange(4)[None, :] < np.array([4, 2])[:, None]
    values = w["memory"] * mask[..., None]          # memory zeroed past its length
    keys = values @ w["memory_layer__kernel"]
    attention, h = np.zeros((2, 3)), np.zeros((2, 5))
    outputs, history = [], []
    for t in range(3):
        cell_in = np.concatenate([w["inputs"][:, t], attention], 1)  # cell_input_fn: [inputs, attention]
        h = _rnn_step(cell_in, h, w["attention_wrapper__basic_rnn_cell__kernel"],
                      w["attention_wrapper__basic_rnn_cell__bias"])
        if mechanism == "LuongAttention":
            score = w["attention_wrapper__luong_attention__attention_g"] * np.einsum("bu,btu->bt", h, keys)
        else:
            q = h @ w["attention_wrapper__bahdanau_attention__query_layer__kernel"]
            v = w["attention_wrapper__bahdanau_attention__attention_v"]
            normed_v = w["attention_wrapper__bahdanau_attention__attention_g"] * v / np.sqrt((v * v).sum())
            score = (normed_v * np.tanh(keys + q[:, None, :] + w["attention_wrapper__bahdanau_attention__attention_b"])).sum(-1)
        align = _softmax(np.where(mask, score, -np.inf))
        context = np.einsum("bt,btd->bd", align, values)
        attention = np.concatenate([h, context], 1) @ w["attention_wrapper__attention_layer__kernel"]
        outputs.append(attention)
        history.append(align)
    np.testing.assert_allclose(out["output"], np.stack(outputs, 1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["history"], np.stack(history), rtol=1e-4, atol=1e-6)
    assert np.all(out["history"][:, 1, 2:] == 0)  # no attention past the memory's length


def test_tile_batch_and_unprovided_names(tmp_path):
    out = _run(tmp_path, """
        with tf.Session() as sess:
            tiled = sess.run(tf.contrib.seq2seq.tile_batch({"a": tf.constant([[1, 2], [3, 4]])}, 3)["a"])
        try:
            tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper
            message = "provided"
        except AttributeError as exc:
            message = str(exc)
        dump(tiled=tiled, message=message)
    """)
    assert out["tiled"].tolist() == [[1, 2]] * 3 + [[3, 4]] * 3
    assert str(out["message"]).startswith("tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper is not provided by tf1clip")
    assert str(out["message"]).endswith("feed sampled ids yourself with a CustomHelper")


BEAM_CASE = """
    V, H, END = 3, 4, 2
    embedding = rng.normal(size=(V, H)).astype(np.float32)
    h0 = rng.normal(size=(2, H)).astype(np.float32)
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    layer = tf.layers.Dense(V, name="proj")
    decoder = tf.contrib.seq2seq.BeamSearchDecoder(
        cell, tf.constant(embedding), tf.fill([2], 0), END, tf.contrib.seq2seq.tile_batch(tf.constant(h0), 9), 9,
        output_layer=layer, length_penalty_weight={penalty})
    outputs, state, _ = tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        weights = load_all(sess)
        ids, scores, lengths = sess.run([outputs.predicted_ids, outputs.beam_search_decoder_output.scores,
                                         state.lengths])
    dump(embedding=embedding, h0=h0, ids=ids, scores=scores, lengths=lengths,
         **{{k[:-2].replace("decoder/", "").replace("/", "__"): v for k, v in weights.items()}})
"""


def _brute_force_beams(w, batch, penalty):
    """Every hypothesis of at most 3 tokens (ending at the first end token 2), scored as TF 1.15
    scores beams: the summed log-softmax, divided by ((5 + length) / 6) ** penalty, where the
    length counts the end token only from the step after it was emitted (TF 1.15 adds 0 to the
    length of the end-token continuation, and 1 to the stored length of a beam that ends)."""
    import itertools

    def log_softmax(x):
        return x - np.log(np.exp(x - x.max()).sum()) - x.max()

    hyps = {}
    for seq in itertools.product(range(3), repeat=3):
        seq = seq[:seq.index(2) + 1] if 2 in seq else seq
        if seq in hyps:
            continue
        h, token, total = w["h0"][batch], 0, 0.0
        for s in seq:
            h = np.tanh(np.concatenate([w["embedding"][token], h]) @ w["basic_rnn_cell__kernel"] + w["basic_rnn_cell__bias"])
            total += log_softmax(h @ w["proj__kernel"] + w["proj__bias"])[s]
            token = s
        scored_length = len(seq) - 1 if len(seq) == 3 and seq[-1] == 2 else len(seq)
        hyps[seq] = total / ((5.0 + scored_length) / 6.0) ** penalty
    return sorted(hyps.items(), key=lambda kv: -kv[1])


@pytest.mark.parametrize("penalty", [0.0, 0.8])
def test_beam_search_decoder_finds_the_best_hypotheses(tmp_path, penalty):
    """Beam width 9 >= every live hypothesis at each step, so the 9 beams are exactly the 9 best of
    all 15 hypotheses of length <= 3: checked by enumerating them."""
    out = _run(tmp_path, BEAM_CASE.format(penalty=penalty))
    w = {k: np.asarray(v) for k, v in out.items()}
    for b in range(2):
        best = _brute_force_beams(w, b, penalty)[:9]
        for k, (seq, score) in enumerate(best):
            padded = list(seq) + [2] * (3 - len(seq))       # gather_tree: end token after the end
            assert out["ids"][b, :, k].tolist() == padded, (b, k)
            np.testing.assert_allclose(out["scores"][b, -1, k], score, rtol=1e-4, atol=1e-5)
            assert out["lengths"][b, k] == len(seq)

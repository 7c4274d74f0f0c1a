"""tf.contrib.rnn's extra cells and tf.contrib.legacy_seq2seq against TF 1.15's math, in NumPy.

As in test_contrib_seq2seq.py: a small graph runs under `tf1clip run`, its variables get
NumPy-drawn values, and the test recomputes the outputs from those values with the formulas of
TF 1.15's kernels and source (LSTMBlockCell / GRUBlockCell op docs, contrib's
LayerNormBasicLSTMCell, legacy_seq2seq's attention_decoder and losses).
"""
from __future__ import annotations

import numpy as np

from test_contrib_seq2seq import _crossent, _run, _softmax


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def test_block_and_layer_norm_cells(tmp_path):
    out = _run(tmp_path, """
        x = rng.normal(size=(2, 3, 4)).astype(np.float32)
        runs = {}
        for name, cell in [("lstm", tf.contrib.rnn.LSTMBlockCell(5, forget_bias=0.7, cell_clip=0.9, use_peephole=True)),
                           ("gru", tf.contrib.rnn.GRUBlockCell(5)),
                           ("ln", tf.contrib.rnn.LayerNormBasicLSTMCell(5, forget_bias=0.3))]:
            runs[name] = tf.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32, scope=name)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            weights = load_all(sess)
            values = sess.run(runs)
        dump(x=x, lstm_out=values["lstm"][0], lstm_c=values["lstm"][1].c, gru_out=values["gru"][0],
             ln_out=values["ln"][0], ln_c=values["ln"][1].c,
             **{k[:-2].replace("/", "__"): v for k, v in weights.items()})
    """)
    w, x = out, out["x"]
    # LSTMBlockCell (op doc): [i, ci, f, o] = [x, h] W + b; f += forget_bias; peepholes; clip.
    c = h = np.zeros((2, 5))
    for t in range(3):
        gates = np.concatenate([x[:, t], h], 1) @ w["lstm__lstm_cell__kernel"] + w["lstm__lstm_cell__bias"]
        i, ci, f, o = np.split(gates, 4, axis=1)
        i = _sigmoid(c * w["lstm__lstm_cell__w_i_diag"] + i)
        f = _sigmoid(c * w["lstm__lstm_cell__w_f_diag"] + f + 0.7)
        c = np.clip(np.tanh(ci) * i + c * f, -0.9, 0.9)
        h = np.tanh(c) * _sigmoid(c * w["lstm__lstm_cell__w_o_diag"] + o)
        np.testing.assert_allclose(out["lstm_out"][:, t], h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["lstm_c"], c, rtol=1e-4, atol=1e-5)
    # GRUBlockCell (op doc): [r, u] = sigmoid([x, h] w_ru + b_ru); c = tanh([x, r h] w_c + b_c).
    h = np.zeros((2, 5))
    for t in range(3):
        r, u = np.split(_sigmoid(np.concatenate([x[:, t], h], 1) @ w["gru__gru_cell__w_ru"] + w["gru__gru_cell__b_ru"]), 2, 1)
        cand = np.tanh(np.concatenate([x[:, t], r * h], 1) @ w["gru__gru_cell__w_c"] + w["gru__gru_cell__b_c"])
        h = u * h + (1 - u) * cand
        np.testing.assert_allclose(out["gru_out"][:, t], h, rtol=1e-4, atol=1e-5)
    # LayerNormBasicLSTMCell: gates normalized one by one, then the new c; no bias.
    p = "ln__layer_norm_basic_lstm_cell__"
    c = h = np.zeros((2, 5))
    for t in range(3):
        i, j, f, o = np.split(np.concatenate([x[:, t], h], 1) @ w[p + "kernel"], 4, axis=1)
        i, j, f, o = (_layer_norm(g, w[f"{p}{n}__gamma"], w[f"{p}{n}__beta"])
                      for g, n in ((i, "input"), (j, "transform"), (f, "forget"), (o, "output")))
        c = _layer_norm(c * _sigmoid(f + 0.3) + _sigmoid(i) * np.tanh(j), w[p + "state__gamma"], w[p + "state__beta"])
        h = np.tanh(c) * _sigmoid(o)
        np.testing.assert_allclose(out["ln_out"][:, t], h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["ln_c"], c, rtol=1e-4, atol=1e-5)


def test_legacy_attention_decoder_and_losses(tmp_path):
    out = _run(tmp_path, """
        states = rng.normal(size=(2, 3, 4)).astype(np.float32)
        inputs = [tf.constant(rng.normal(size=(2, 2)).astype(np.float32)) for _ in range(2)]
        init = tf.constant(rng.normal(size=(2, 4)).astype(np.float32))
        outputs, state = tf.contrib.legacy_seq2seq.attention_decoder(
            inputs, init, tf.constant(states), tf.nn.rnn_cell.BasicRNNCell(4), output_size=5)
        targets = [tf.constant([1, 4]), tf.constant([0, 2])]
        weights = [tf.constant([1.0, 0.5]), tf.constant([0.0, 2.0])]
        by_example = tf.contrib.legacy_seq2seq.sequence_loss_by_example(outputs, targets, weights)
        loss = tf.contrib.legacy_seq2seq.sequence_loss(outputs, targets, weights)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            weights_ = load_all(sess)
            o, s, be, l, xs, h0 = sess.run([outputs, state, by_example, loss, inputs, init])
        dump(states=states, xs=xs, h0=h0, outputs=o, state=s, by_example=be, loss=l,
             **{k[len("attention_decoder/"):-2].replace("/", "__") or "none": v for k, v in weights_.items()})
    """)
    w = out
    hidden = out["states"]                     # [batch, length, size]
    features = hidden @ w["AttnW_0"][0, 0]     # the 1x1 convolution
    h = out["h0"]
    attn = np.zeros((2, 4))
    outputs = []
    for t in range(2):
        x = np.concatenate([out["xs"][t], attn], 1) @ w["kernel"] + w["bias"]
        h = np.tanh(np.concatenate([x, h], 1) @ w["basic_rnn_cell__kernel"] + w["basic_rnn_cell__bias"])
        y = h @ w["Attention_0__kernel"] + w["Attention_0__bias"]
        s = (w["AttnV_0"] * np.tanh(features + y[:, None, :])).sum(-1)
        attn = np.einsum("bl,bld->bd", _softmax(s), hidden)
        outputs.append(np.concatenate([h, attn], 1) @ w["AttnOutputProjection__kernel"] + w["AttnOutputProjection__bias"])
    np.testing.assert_allclose(out["outputs"], np.stack(outputs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["state"], h, rtol=1e-4, atol=1e-5)
    ce = np.stack([_crossent(outputs[0], np.array([1, 4])), _crossent(outputs[1], np.array([0, 2]))])
    weights = np.array([[1.0, 0.5], [0.0, 2.0]])
    by_example = (ce * weights).sum(0) / (weights.sum(0) + 1e-12)
    np.testing.assert_allclose(out["by_example"], by_example, rtol=1e-4)
    np.testing.assert_allclose(out["loss"], by_example.sum() / 2, rtol=1e-4)


def test_embedding_attention_seq2seq_with_buckets(tmp_path):
    out = _run(tmp_path, """
        V, H = 7, 4
        enc = [tf.placeholder(tf.int32, [None]) for _ in range(4)]
        dec = [tf.placeholder(tf.int32, [None]) for _ in range(4)]
        wts = [tf.placeholder(tf.float32, [None]) for _ in range(4)]
        # One call: the encoder gets a deep copy of the cell (its own weights), as in TF 1.15.
        with tf.Graph().as_default():
            x = [tf.placeholder(tf.int32, [None]) for _ in range(2)]
            tf.contrib.legacy_seq2seq.embedding_attention_seq2seq(x, x, tf.contrib.rnn.GRUCell(H), V, V, 3)
            encoder = [v.name for v in tf.trainable_variables() if "/rnn/" in v.name]
            decoder_gru = [v.name for v in tf.trainable_variables() if "attention_decoder/" in v.name and "gru" in v.name]
        # Buckets: a built cell cannot be deep-copied (TF 1.15 neither); scripts shared it, so do we.
        setattr(tf.contrib.rnn.GRUCell, "__deepcopy__", lambda self, _: self)
        cell = tf.contrib.rnn.GRUCell(H)
        def seq2seq(x, y):
            return tf.contrib.legacy_seq2seq.embedding_attention_seq2seq(
                x, y, cell, num_encoder_symbols=V, num_decoder_symbols=V, embedding_size=3, feed_previous=False)
        outputs, losses = tf.contrib.legacy_seq2seq.model_with_buckets(enc, dec, dec[1:] + [dec[0]], wts,
                                                                       [(2, 2), (4, 4)], seq2seq)
        check = tf.contrib.legacy_seq2seq.sequence_loss(outputs[1], dec[1:] + [dec[0]], wts)
        feed = {p: rng.randint(0, V, 3) for p in enc + dec}
        feed.update({p: np.ones(3, np.float32) for p in wts})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            l, c = sess.run([losses, check], feed)
        dump(losses=l, check=c, encoder=encoder, decoder_gru=decoder_gru, shapes=[len(o) for o in outputs])
    """)
    assert out["shapes"].tolist() == [2, 4]
    np.testing.assert_allclose(out["losses"][1], out["check"], rtol=1e-6)
    # TF 1.15 deep-copies the cell for the encoder: its own GRU weights and embedding.
    encoder = [str(n) for n in out["encoder"]]
    assert "embedding_attention_seq2seq/rnn/embedding_wrapper/embedding:0" in encoder
    assert any("gru_cell" in n for n in encoder) and len(out["decoder_gru"]) == 4
    assert 0 < out["losses"][0] < np.log(7) * 3

"""Randomness under `tf1clip parity`: `--no-dropout` makes dropout the identity on both sides
(checked against numbers computed by hand), through every dropout entry point; the default
policy seeds graphs the script creates itself. Real TensorFlow in real subprocesses."""
import json
import re

import numpy as np

from conftest import FIXTURES, run_python, run_tf1clip

PAIR = FIXTURES / "parity" / "dropout_tf1.py", FIXTURES / "parity" / "dropout_tf2.py"


def _hand_losses(steps, lr=0.1):
    """dropout_tf1.py with dropout as the identity: mean((X w - Y)^2), w from 0.5, plain GD."""
    x = np.linspace(-1.0, 1.0, 24).reshape(8, 3)
    y = np.arange(8).reshape(8, 1) / 4.0
    w = np.full((3, 1), 0.5)
    losses = []
    for _ in range(steps):
        error = x @ w - y
        losses.append(float(np.mean(error ** 2)))
        w = w - lr * 2.0 * x.T @ error / len(x)
    return losses


def test_no_dropout_makes_tf1_and_tf2_dropout_the_identity(tmp_path):
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", *PAIR, "--no-dropout", "--json", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "randomness: --no-dropout: dropout and tf.data shuffles are the identity on both sides" in proc.stdout
    rows = json.loads(report.read_text())["optimizers"][0]["rows"]
    expected = _hand_losses(4)  # 0.870451, 0.825701, ...
    assert np.allclose([r["loss_old"] for r in rows], expected, rtol=1e-6, atol=0)
    assert np.allclose([r["loss_new"] for r in rows], expected, rtol=1e-6, atol=0)


def test_seeded_alike_the_different_random_streams_fail_and_keyed_dropout_passes(tmp_path):
    """TF 1.x and TF 2 draw different streams from the same seeds (--same-seeds fails at step 1);
    the default for a TF 2 NEW keys each mask by what the dropout is, and the pair passes."""
    proc = run_tf1clip("parity", *PAIR, "--same-seeds", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "randomness: same seeds on both sides" in proc.stdout
    assert "step 1 leaves tolerance" in proc.stdout
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", *PAIR, "--json", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "randomness: TF 1.x against TF 2, dropout keyed" in proc.stdout
    rows = json.loads(report.read_text())["optimizers"][0]["rows"]
    assert all(r["loss_abs"] == 0 for r in rows), rows
    assert not np.allclose([r["loss_old"] for r in rows], _hand_losses(4), rtol=1e-3)  # dropout did drop


def test_no_dropout_makes_a_tf_data_shuffle_the_identity_against_its_tf2_translation(tmp_path):
    """TF 1.x's shuffle seeds come from the graph's op count, the TF 2 program's from its own:
    different orders by default, the same (unshuffled) order with --no-dropout."""
    import sys

    sys.path.insert(0, str(FIXTURES.parent))
    from codemods.tf2 import convert

    old = FIXTURES / "parity" / "shuffle_tf1.py"
    result = convert(old.read_text(), old.name)
    assert result.text is not None, result.notes
    new = tmp_path / "shuffle_tf2.py"
    new.write_text(result.text)
    assert ".shuffle(" in result.text  # the translation keeps the shuffle: parity decides what it draws
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", old, new, "--no-dropout", "--json", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(report.read_text())["optimizers"][0]["rows"]
    # unshuffled, step 1 is the first 8 rows from w = 0, b = 0: mean(y^2) by hand
    data_x = np.linspace(-1.0, 1.0, 96, dtype=np.float32).reshape(32, 3)
    first = (data_x[:8].sum(axis=1) * 2.0 + 1.0) ** 2
    assert np.isclose(rows[0]["loss_old"], first.mean(), rtol=1e-6)
    proc = run_tf1clip("parity", old, new, "--same-seeds", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # other seeds, other orders


def test_keyed_policy_draws_the_same_shuffle_on_both_sides_and_sees_another_buffer_size(tmp_path):
    """With no flags (TF 1.x against TF 2), a shuffle without a seed gets the op seed of its
    creation order on both sides: the same order, really shuffled; a buffer of 4 instead of 32 fails."""
    import sys

    sys.path.insert(0, str(FIXTURES.parent))
    from codemods.tf2 import convert

    old = FIXTURES / "parity" / "shuffle_tf1.py"
    text = convert(old.read_text(), old.name).text
    assert text.count(".shuffle(32)") == 1, text
    new = tmp_path / "shuffle_tf2.py"
    new.write_text(text)
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", old, new, "--json", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(report.read_text())["optimizers"][0]["rows"]
    data_x = np.linspace(-1.0, 1.0, 96, dtype=np.float32).reshape(32, 3)
    unshuffled = ((data_x[:8].sum(axis=1) * 2.0 + 1.0) ** 2).mean()
    assert not np.isclose(rows[0]["loss_old"], unshuffled, rtol=1e-3)  # the shuffle did shuffle
    smaller = tmp_path / "shuffle_small_buffer.py"
    smaller.write_text(text.replace(".shuffle(32)", ".shuffle(4)"))
    proc = run_tf1clip("parity", old, smaller, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr


TF1_ENTRY_POINTS = """
import numpy as np
import tensorflow as tf
import tensorflow.contrib.slim as slim
x = tf.constant(np.arange(1.0, 25.0, dtype=np.float32).reshape(2, 3, 4))
flat = tf.reshape(x, [2, 12])
outs = {
    "nn.dropout keep_prob": tf.nn.dropout(flat, keep_prob=0.5),
    "nn.dropout rate": tf.nn.dropout(flat, rate=0.5),
    "layers.dropout": tf.layers.dropout(flat, rate=0.5, training=True),
    "layers.Dropout": tf.layers.Dropout(0.5)(flat, training=True),
    "keras Dropout": tf.keras.layers.Dropout(0.5)(flat, training=True),
    "keras SpatialDropout1D": tf.keras.layers.SpatialDropout1D(0.5)(x, training=True),
    "contrib.layers.dropout": tf.contrib.layers.dropout(flat, keep_prob=0.5),
    "slim.dropout": slim.dropout(flat, keep_prob=0.5, is_training=True),
}
# DropoutWrapper around an identity-like cell: compare with the same cell unwrapped
cell = tf.nn.rnn_cell.BasicRNNCell(4, activation=tf.identity, name="cell")
plain, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="plain")
for variational in (False, True):
    wrapped = tf.nn.rnn_cell.DropoutWrapper(cell, input_keep_prob=0.5, output_keep_prob=0.5, state_keep_prob=0.5,
                                            variational_recurrent=variational, input_size=4, dtype=tf.float32)
    out, _ = tf.nn.dynamic_rnn(wrapped, x, dtype=tf.float32, scope="plain")
    outs[f"DropoutWrapper variational={variational}"] = out - plain
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    values = sess.run(outs)
    base = {"keras SpatialDropout1D": sess.run(x)}
    for name, value in sorted(values.items()):
        reference = base.get(name, sess.run(flat)) if not name.startswith("DropoutWrapper") else 0.0
        print(f"{name}: {float(np.abs(value - reference).max())}")
"""

TF2_ENTRY_POINTS = """
import numpy as np
import tensorflow as tf
x = tf.constant(np.arange(1.0, 25.0, dtype=np.float32).reshape(2, 3, 4))
outs = {
    "nn.dropout": tf.nn.dropout(x, rate=0.5),
    "stateless_dropout": tf.nn.experimental.stateless_dropout(x, rate=0.5, seed=[1, 2]),
    "keras Dropout": tf.keras.layers.Dropout(0.5)(x, training=True),
    "keras SpatialDropout1D": tf.keras.layers.SpatialDropout1D(0.5)(x, training=True),
}
layer = tf.keras.layers.Dropout(0.5)
traced = tf.function(lambda t: layer(t, training=True))
outs["keras Dropout in tf.function"] = traced(x)
for name, value in sorted(outs.items()):
    print(f"{name}: {float(np.abs(value.numpy() - x.numpy()).max())}")
"""


def _record(tmp_path, side, source, *options):
    script = tmp_path / f"{side}.py"
    script.write_text(source)
    env = {"TF_USE_LEGACY_KERAS": "1"} if side == "old" else None
    return run_python("-m", "tf1clip.parity.record", f"--side={side}", f"--out={tmp_path / side}", *options,
                      "--", script, cwd=tmp_path, env=env)


def _max_diffs(stdout):
    return {name: float(value) for name, value in re.findall(r"^(.+): ([0-9.e+-]+)$", stdout, re.M)}


def test_every_dropout_entry_point_is_the_identity_with_no_dropout(tmp_path):
    for side, source, count in (("old", TF1_ENTRY_POINTS, 10), ("new", TF2_ENTRY_POINTS, 5)):
        proc = _record(tmp_path, side, source, "--no-dropout")
        assert proc.returncode == 0, proc.stderr[-3000:]
        diffs = _max_diffs(proc.stdout)
        assert len(diffs) == count, proc.stdout
        assert all(d == 0.0 for d in diffs.values()), diffs
        # and the same script without the option does drop (so the check above can fail)
        proc = _record(tmp_path, side, source)
        assert proc.returncode == 0, proc.stderr[-3000:]
        dropped = _max_diffs(proc.stdout)
        assert all(d > 0.0 for d in dropped.values()), dropped


SEEDS_IN_OWN_GRAPH = """
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
with tf.Graph().as_default():
    with tf.Session() as sess:
        print("own graph", sess.run(tf.random_uniform([3])).tolist())
tf.reset_default_graph()
with tf.Session() as sess:
    print("reset graph", sess.run(tf.random_uniform([3])).tolist())
"""


def test_graphs_the_script_makes_get_the_same_seed_every_run(tmp_path):
    printed = []
    for _ in range(2):
        proc = _record(tmp_path, "new", SEEDS_IN_OWN_GRAPH)
        assert proc.returncode == 0, proc.stderr[-3000:]
        printed.append(proc.stdout)
    assert printed[0] == printed[1] and printed[0].count("graph") == 2


def test_an_unordered_graph_runs_on_one_schedule_so_the_same_program_passes_run_after_run(tmp_path):
    """Hand-written backprop whose W1 gradient reads W2 while the same Session.run assigns W2:
    TF 1.x takes either order from run to run (`tf1clip run` printed 1.025434 and 1.025336 here);
    under parity every Session.run executes its ops in the calling thread, one at a time, so OLD
    and an identical copy fetch the same losses, twice over."""
    script = FIXTURES / "parity" / "unordered_assigns.py"
    copy = tmp_path / "copy_of_unordered_assigns.py"
    copy.write_bytes(script.read_bytes())
    for _ in range(2):
        report = tmp_path / "report.json"
        proc = run_tf1clip("parity", script, copy, "--json", report, cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "each Session.run in its calling thread, one op at a time" in proc.stdout
        fetched = json.loads(report.read_text())["fetched"]
        assert fetched["status"] == "equal" and fetched["count"] == 20, fetched

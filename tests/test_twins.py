"""Each TF2 twin computes what its TF 1.x construct computed, with TF 1.x's variable names.

For every case: a TF 1.x snippet runs under `tf.compat.v1` in graph mode (TF_USE_LEGACY_KERAS=1,
the cells of tf.nn.rnn_cell, tf-slim's batch_norm through tf1clip.slim) in a graph of its own, which
saves its inputs, variable names and values, outputs, final states, gradients (of a fixed random
projection of everything it returned, with respect to the input and every trainable variable)
and the variables after its update ops. Then plain TF 2.21 with Keras 3, from a fresh Keras session,
writes the twin source (`codemods.tf2.twins.source`) and builds each layer from the TF 1 call through
`twins.instantiate`, loads the TF 1 values by variable name (so the names must be TF 1's), runs
it eagerly and again inside a tf.function, and compares everything (atol 1e-6). The cases share two
processes, one a side (TensorFlow's import is most of a case's time); a case that fails fails its
own test only.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import run_python

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "basic_lstm_dynamic_rnn": dict(
        shape=[3, 6, 4], lengths=[6, 4, 1],
        tf1="cell = tf.nn.rnn_cell.BasicLSTMCell(5)\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "basic_lstm_forget_bias_time_major_initial_state": dict(
        shape=[6, 3, 4], lengths=None,
        tf1="cell = tf.nn.rnn_cell.BasicLSTMCell(5, forget_bias=0.3)\n"
            "init = tf.nn.rnn_cell.LSTMStateTuple(tf.ones([3, 5]) * 0.5, tf.ones([3, 5]) * -0.25)\n"
            "result = tf.nn.dynamic_rnn(cell, x, initial_state=init, time_major=True, scope='encoder')\n"),
    "lstm_cell": dict(
        shape=[3, 5, 4], lengths=[5, 2, 3],
        tf1="cell = tf.nn.rnn_cell.LSTMCell(6)\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "lstm_cell_peepholes_projection_clips": dict(
        shape=[3, 5, 4], lengths=[5, 2, 3], scale=3.0,
        tf1="cell = tf.nn.rnn_cell.LSTMCell(6, use_peepholes=True, cell_clip=0.8, num_proj=3, proj_clip=0.2, "
            "forget_bias=0.5)\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "gru_cell": dict(
        shape=[3, 6, 4], lengths=[6, 3, 5],
        tf1="cell = tf.nn.rnn_cell.GRUCell(5)\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "multi_rnn_cell": dict(
        shape=[3, 5, 4], lengths=[5, 4, 2],
        tf1="cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(5), tf.nn.rnn_cell.GRUCell(3), "
            "tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True)])\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "static_rnn": dict(
        shape=[3, 5, 4], lengths=[5, 3, 1],
        tf1="cell = tf.nn.rnn_cell.BasicLSTMCell(5)\n"
            "result = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=lengths, dtype=tf.float32)\n"),
    "bidirectional_dynamic_rnn": dict(
        shape=[3, 6, 4], lengths=[6, 2, 4],
        tf1="fw = tf.nn.rnn_cell.BasicLSTMCell(5)\n"
            "bw = tf.nn.rnn_cell.GRUCell(3)\n"
            "result = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "bidirectional_no_lengths": dict(
        shape=[3, 4, 4], lengths=None,
        tf1="fw = tf.nn.rnn_cell.LSTMCell(5)\n"
            "bw = tf.nn.rnn_cell.LSTMCell(5)\n"
            "result = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, dtype=tf.float32, scope='birnn')\n"),
    "basic_rnn_cell": dict(
        shape=[3, 6, 4], lengths=[6, 2, 5],
        tf1="cell = tf.nn.rnn_cell.BasicRNNCell(5)\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "basic_rnn_cell_relu_multi": dict(
        shape=[3, 5, 4], lengths=None,
        tf1="cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicRNNCell(5, activation=tf.nn.relu), "
            "tf.nn.rnn_cell.BasicRNNCell(3)])\n"
            "result = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope='encoder')\n"),
    "dropout_wrapper_keep_one_in_multi": dict(
        shape=[3, 5, 4], lengths=[5, 3, 4],
        tf1="cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(5), "
            "output_keep_prob=1.0), tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(3), input_keep_prob=1, "
            "state_keep_prob=1.0)])\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "dropout_wrapper_seeded_masks": dict(
        # keep < 1 with a seed: the twin draws TF 1's masks (op seeds from the wrapper's seed, the
        # graph seed 0 on both sides), on inputs, the LSTM state's h (never c) and outputs; one
        # step at a time (a random op reads no data: with parallel steps, which step draws first is
        # the scheduler's choice, in TF 1 as in TF 2)
        shape=[3, 6, 4], lengths=[6, 4, 2],
        masks=True,
        tf1="cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(5), input_keep_prob=0.8, "
            "output_keep_prob=0.7, state_keep_prob=0.6, seed=7)\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32, parallel_iterations=1)\n"),
    "dropout_wrapper_tensor_keep_one": dict(
        # a keep probability that is a tensor (TF 1: not a constant, so a dropout op at every step,
        # the identity when it is 1), as a fed keep_prob is
        shape=[3, 5, 4], lengths=[5, 5, 2],
        tf2_replace=[("tf.placeholder_with_default(1.0, [])", "tf.constant(1.0)")],
        tf1="keep = tf.placeholder_with_default(1.0, [])\n"
            "cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), input_keep_prob=keep, "
            "output_keep_prob=keep, state_keep_prob=keep)\n"
            "result = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)\n"),
    "dropout_wrapper_seeded_state_of_multi": dict(
        # around a MultiRNNCell: its tuple state dropped out tensor by tensor (an LSTM state's c kept),
        # each with its own seed (index in the flattened state, as TF 1 counted)
        shape=[3, 5, 4], lengths=None, masks=True,
        tf1="cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicRNNCell(4), "
            "tf.nn.rnn_cell.LSTMCell(3), tf.nn.rnn_cell.GRUCell(2)]), output_keep_prob=0.75, state_keep_prob=0.5, "
            "seed=11)\n"
            "result = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, parallel_iterations=1)\n"),
    "slim_batch_norm_4d": dict(
        shape=[4, 3, 3, 2], lengths=None, scale=2.0, slim=True,
        tf1="result = slim.batch_norm(x)\n"),
    "slim_batch_norm_2d_scale_relu": dict(
        shape=[6, 3], lengths=None, scale=2.0, slim=True,
        tf1="result = slim.batch_norm(x, decay=0.9, scale=True, activation_fn=tf.nn.relu, scope='bn')\n"),
    "slim_batch_norm_4d_scale": dict(
        shape=[4, 3, 3, 2], lengths=None, slim=True,
        tf1="result = slim.batch_norm(x, scale=True, epsilon=0.01)\n"),
}

TF1_SIDE = r'''
import json, sys, traceback, numpy as np
sys.path.insert(0, ROOT)
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
jobs = json.load(open(sys.argv[1]))  # [[name, case, npz, meta], ...]: every case, one process
if any(case.get("slim") for _, case, _, _ in jobs):
    import tf1clip.slim  # tf-slim with its TF 2.21 breakages mended (a 4-D batch_norm's core layer too)


def run_case(case, npz, meta):
    """One case in a graph of its own (its variable names and op seeds as in a process of its own)."""
    slim = tf1clip.slim if case.get("slim") else None
    rng = np.random.RandomState(0)
    x_value = (rng.randn(*case["shape"]) * case.get("scale", 1.0)).astype(np.float32)
    tf.set_random_seed(0)
    x = tf.constant(x_value)
    lengths = None if case["lengths"] is None else tf.constant(case["lengths"], tf.int32)
    scope = {"tf": tf, "x": x, "lengths": lengths, "slim": slim}
    exec(case["tf1"], scope)
    flat = tf.nest.flatten(scope["result"])
    projections = [rng.randn(*t.shape.as_list()).astype(np.float32) for t in flat]
    loss = tf.add_n([tf.reduce_sum(t * p) for t, p in zip(flat, projections)])
    trainable = tf.trainable_variables()
    every = tf.global_variables()
    grads = tf.gradients(loss, [x] + trainable)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        initial = sess.run(every)
        outputs, gradients, _ = sess.run([flat, grads, updates])
        after = sess.run(every)
    names = [v.name[:-2] for v in every]
    arrays = {"x": x_value}
    arrays.update({f"projection/{i}": p for i, p in enumerate(projections)})
    arrays.update({f"output/{i}": o for i, o in enumerate(outputs)})
    arrays.update({f"initial/{n}": v for n, v in zip(names, initial)})
    arrays.update({f"after/{n}": v for n, v in zip(names, after)})
    arrays["grad/x"] = gradients[0]
    arrays.update({f"grad/{v.name[:-2]}": g for v, g in zip(trainable, gradients[1:])})
    np.savez(npz, **arrays)
    json.dump({"names": names, "trainable": [v.name[:-2] for v in trainable], "outputs": len(outputs)},
              open(meta, "w"))


failures = {}
for name, case, npz, meta in jobs:
    try:
        with tf.Graph().as_default():
            run_case(case, npz, meta)
    except Exception:  # noqa: BLE001 - one case's failure is that case's test's
        failures[name] = traceback.format_exc()
json.dump(failures, open(sys.argv[2], "w"))
'''

TF2_SIDE = r'''
import collections, importlib, json, sys, traceback, numpy as np
sys.path.insert(0, ROOT)
import libcst as cst
import tensorflow as tf
from codemods.tf2 import twins



def translate(tf1_source):
    """A minimal translator for the test: twin constructs built once, rnn/layer calls in `forward`."""
    state, step, classes = [], [], set()

    class Twins(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            dotted = cst.Module([]).code_for_node(original.func)
            name = twins.canonical(dotted.replace("tf.contrib.rnn.", "tensorflow.contrib.rnn."))
            if twins.lookup(name) is None:
                return updated
            made = twins.instantiate(name, updated)
            classes.add(made.twin.CLASS)
            if made.call is None:
                return made.construct
            layer = f"layer_{len(state)}"
            state.append(f"{layer} = {cst.Module([]).code_for_node(made.construct)}")
            return made.call.with_changes(func=cst.Name(layer))

    for line in tf1_source.splitlines():
        if not line.strip():
            continue
        node = cst.parse_statement(line).visit(Twins())
        text = cst.Module([]).code_for_node(node).strip()
        text = text.replace("tf.nn.rnn_cell.LSTMStateTuple", "LSTMStateTuple")
        (step if "layer_" in text or text.startswith("result") else state).append(text)
    return classes, "\n".join(state), step



def run_case(case, ref, meta, module):
    """One case: its twins written to `module`.py, built, loaded with TF 1's values, compared."""
    tf2_source = case["tf1"]
    for old, new in case.get("tf2_replace", []):
        tf2_source = tf2_source.replace(old, new)
    classes, state_code, step = translate(tf2_source)
    # the twins as the migrated file holds them: a module of plain TF 2 source (autograph can read it)
    classes = sorted(classes | {"LSTMStateTuple"})
    with open(f"{module}.py", "w") as handle:
        handle.write("".join(f"import {m}\n" for m in ["tensorflow as tf", *twins.imports(classes)]) + "\n\n"
                     + twins.source(classes))
    scope = dict(vars(importlib.import_module(module)))
    tf.keras.backend.clear_session()  # Keras' global state as in a fresh process
    tf.random.set_seed(0)  # TF 1's graph seed: seeded dropout draws the same masks
    x = tf.constant(ref["x"])
    lengths = None if case["lengths"] is None else tf.constant(case["lengths"], tf.int32)
    scope.update(x=x, lengths=lengths)
    exec(state_code, scope)
    exec("def forward(x):\n" + "\n".join("    " + s for s in step) + "\n    return result\n", scope)
    forward = scope["forward"]


    def projected(result):
        flat = tf.nest.flatten(result)
        return tf.add_n([tf.reduce_sum(t * ref[f"projection/{i}"]) for i, t in enumerate(flat)]), flat


    layers = [v for k, v in scope.items() if k.startswith("layer_")]
    for layer in layers:  # build the layers (TF 1's names), then start from TF 1's values
        layer.build(x.shape if not isinstance(layer, scope.get("StaticRNN", ())) else [x[:, 0].shape] * x.shape[1])
    weights = [w for layer in layers for w in layer.weights]
    paths = [w.path for w in weights]
    assert sorted(paths) == sorted(meta["names"]), ("names differ", paths, meta["names"])
    trainable = [w.path for layer in layers for w in layer.trainable_weights]
    assert trainable == meta["trainable"], ("trainable order differs", trainable, meta["trainable"])
    for w in weights:
        w.assign(ref[f"initial/{w.path}"])


    def differentiate(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss, flat = projected(forward(x))
        return flat, tape.gradient(loss, [x] + [w for layer in layers for w in layer.trainable_weights])


    # eagerly; a case drawing dropout masks runs inside a tf.function (as the steps do), where the
    # random ops are graph ops executed in the loop as TF 1's were (eager draws come in another order)
    flat, grads = (tf.function(differentiate) if case.get("masks") else differentiate)(x)
    report = {}


    def same(label, new, old):
        new, old = np.asarray(new), np.asarray(old)
        assert new.shape == old.shape, (label, new.shape, old.shape)
        report[label] = float(np.abs(new - old).max()) if new.size else 0.0
        np.testing.assert_allclose(new, old, rtol=1e-5, atol=1e-6, err_msg=label)


    assert len(flat) == meta["outputs"]
    for i, t in enumerate(flat):
        same(f"output/{i}", t, ref[f"output/{i}"])
    same("grad/x", grads[0], ref["grad/x"])
    for name, g in zip(trainable, grads[1:]):
        same(f"grad/{name}", g, ref[f"grad/{name}"])
    for w in weights:
        same(f"after/{w.path}", w, ref[f"after/{w.path}"])

    for w in weights:  # again inside a tf.function (the step functions' path: autograph loops)
        w.assign(ref[f"initial/{w.path}"])
    traced = tf.function(forward)
    for i, t in enumerate(tf.nest.flatten(traced(x))):
        same(f"tf.function output/{i}", t, ref[f"output/{i}"])
    return {k: v for k, v in sorted(report.items())}


sys.path.insert(0, ".")
outcomes = {}
for index, (name, case, npz, meta) in enumerate(json.load(open(sys.argv[1]))):
    try:
        outcomes[name] = {"ok": run_case(case, np.load(npz), json.load(open(meta)), f"emitted_twins_{index}")}
    except Exception:  # noqa: BLE001 - one case's failure is that case's test's
        outcomes[name] = {"error": traceback.format_exc()}
json.dump(outcomes, open(sys.argv[2], "w"))
'''


# Every test below reads the module fixture: one xdist worker runs them, each side once (`--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("twins")


@pytest.fixture(scope="module")
def twin_runs(tmp_path_factory):
    """Every case through both sides: one TF 1 process (a graph per case) and one TF 2 process (a
    fresh Keras session and a twin module per case), not two processes a case."""
    work = tmp_path_factory.mktemp("twins")
    header = f"ROOT = {str(ROOT)!r}\n"
    (work / "tf1_side.py").write_text(header + TF1_SIDE)
    (work / "tf2_side.py").write_text(header + TF2_SIDE)
    jobs = work / "jobs.json"
    jobs.write_text(json.dumps([[name, CASES[name], str(work / f"{name}.npz"), str(work / f"{name}.json")]
                                for name in sorted(CASES)]))
    old = run_python(work / "tf1_side.py", jobs, work / "tf1_failures.json", cwd=work,
                     env={"TF_USE_LEGACY_KERAS": "1"}, timeout=900)
    assert old.returncode == 0, old.stderr[-3000:]
    failures = json.loads((work / "tf1_failures.json").read_text())
    ran = [[name, case, npz, meta] for name, case, npz, meta in json.loads(jobs.read_text()) if name not in failures]
    jobs.write_text(json.dumps(ran))
    new = run_python(work / "tf2_side.py", jobs, work / "tf2_outcomes.json", cwd=work, timeout=900)
    assert new.returncode == 0, new.stdout[-2000:] + new.stderr[-3000:]
    return work, failures, json.loads((work / "tf2_outcomes.json").read_text())


@pytest.mark.parametrize("case", sorted(CASES))
def test_twin_matches_tf1(case, twin_runs):
    work, failures, outcomes = twin_runs
    assert case not in failures, f"TF 1 side:\n{failures.get(case)}"
    outcome = outcomes[case]
    assert "ok" in outcome, f"TF 2 side:\n{outcome['error'][-3000:]}"
    assert outcome["ok"], "nothing compared"
    assert all(diff <= 1e-5 for diff in outcome["ok"].values()), outcome  # (allclose held each at atol 1e-6)
    names = json.loads((work / f"{case}.json").read_text())["names"]
    assert names, "TF 1 made no variables"
    if "rnn" in case:
        assert any(n.startswith(("rnn/", "encoder/", "bidirectional_rnn/", "birnn/")) for n in names), names


def test_twin_sources_are_plain_tf2_and_named():
    sys.path.insert(0, str(ROOT))
    from codemods.tf2 import twins

    for module in twins.MODULES:
        text = module.SOURCE
        compile(text, module.__name__, "exec")
        assert "tf1clip" not in text and "compat.v1" not in text
        assert text.startswith(("class ", f"{module.CLASS} = "))
    for name, module in twins.TWINS.items():
        assert name.startswith(("tensorflow.", "slim.")) and module.PARAMS and module.DEFAULT_NAME


def test_instantiate_refuses_what_no_twin_reproduces():
    sys.path.insert(0, str(ROOT))
    import libcst as cst

    from codemods.tf2 import twins

    for qualified, call in [
        ("tensorflow.nn.rnn_cell.BasicLSTMCell", "tf.nn.rnn_cell.BasicLSTMCell(4, state_is_tuple=False)"),
        ("tensorflow.nn.rnn_cell.LSTMCell", "tf.nn.rnn_cell.LSTMCell(4, num_unit_shards=2)"),
        ("tensorflow.nn.dynamic_rnn", "tf.nn.dynamic_rnn(cell, x, dtype=tf.float16)"),
        ("slim.batch_norm", "slim.batch_norm(x, data_format='NCHW')"),
        ("slim.batch_norm", "slim.batch_norm(x, fused=False)"),
        ("tensorflow.nn.rnn_cell.GRUCell", "tf.nn.rnn_cell.GRUCell(4, unknown=1)"),
    ]:
        with pytest.raises(twins.TwinUnavailable):
            twins.instantiate(qualified, cst.parse_expression(call))

"""The TF2 tier is never wrong: each probe is refused at the right line, or converted and proven.

fixtures/tf2_safety/probes/ holds tiny TF 1.x scripts, one per construct that once came out
of the TF2 tier silently wrong or as an `error` (issue 14's code review): `keep_prob` passed as
TF 2's drop rate, a fed learning rate dropped, a variable reset dropped, a variable created
inside an expression, `reduction_indices=`/`keep_dims=`, slim's variable names under
`get_collection(scope=)`, a one-shot dataset iterator, `hypothesis = x_train * W + b` left
outside the tape, TF 1's softmax cross-entropy (labels' gradient stopped), the two inputs
that crashed a step, parameter shards read with TF 1's partition_strategy='mod', variables picked
by their TF 1.x names or by identity (`v.name`, `v in head_vars`), and lists and sums filled by
for-loops (`capped = []` then `capped.append(...)`, `l2 = 0.0` then `l2 += ...`), which were moved
into the steps without the statement that made them. For each, `tf1clip migrate --to tf2` must either

* refuse: the compat tier's output, with a TF2-tier note at the line of the construct, or
* convert: the output runs under plain `python` and passes `tf1clip parity` against the
  original (real TensorFlow, real subprocesses), and converting it again changes nothing. CI runs
  parity on a sample of the converted probes (`PROVEN_ON_CI`); `benchmarks/full_proofs.py` on all.

Which one happens may change as the translator learns constructs; being wrong may not.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import run_python, run_tf1clip, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402
from tf1clip.migrate.engine import migrate, migrate_text  # noqa: E402

PROBES = ROOT / "fixtures" / "tf2_safety" / "probes"
PRINTED = ROOT / "fixtures" / "tf2_safety" / "printed"

# probe → the source text of the line(s) a refusal must point at (the construct refused).
WHERE = {
    "dropout_keep_prob": ["tf.nn.dropout(hidden, keep_prob)"],
    "lr_placeholder": ["learning_rate = tf.placeholder", "GradientDescentOptimizer(learning_rate)"],
    "init_reset": ["sess.run(init)"],
    "variable_in_expression": ["tf.Variable(tf.random_normal"],
    "reduction_indices": ["reduction_indices=[1]"],
    "slim_scope_collection": ["get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=\"head\")",
                              "scope=\"head\")"],
    "dataset_one_shot": ["make_one_shot_iterator()", "iterator.get_next()", "pred = tf.layers.dense(x, 2)"],
    "module_level_hypothesis": ["hypothesis = x_train * W + b"],
    "module_level_hypothesis_session": ["hypothesis = x_train * W + b", "sess = tf.Session()",
                                        "sess.run(tf.global_variables_initializer())"],
    "softmax_xent_v1": ["softmax_cross_entropy_with_logits(labels=smoothed"],
    "dense_name_variable": ["name=LAYER"],
    "run_placeholder": ["sess.run(x, feed_dict={x: data_x})"],
    "embedding_shards_by_name": ["tf.nn.embedding_lookup(shards, ids)"],
    "nce_loss_shards": ["tf.nn.nce_loss(weights, biases"],
    "variable_name_filter": ["v.name.startswith(\"head\")"],
    "variable_identity_in": ["if v in head_vars"],
    "variable_list_by_name_loop": ["\"head\" in v.name"],
    "grads_loop_append": ["capped = []", "for g, v in grads_and_vars:", "capped.append("],
    "l2_accumulate_loop": ["l2 = 0.0", "for v in tf.trainable_variables():", "l2 += tf.nn.l2_loss(v)"],
    "grads_filled_by_index": ["capped = [None] * len(gvs)", "for i, (g, v) in enumerate(gvs):", "capped[i] = ("],
    "gradients_of_a_slice": ["tf.gradients(loss, tvars[2:])"],
    "l2_rebind_loop": ["l2 = 0.0", "for v in tf.trainable_variables():", "l2 = l2 + tf.nn.l2_loss(v)"],
    # issue 28: wrong conversions (reaching definitions, unordered updates, fetched structures, shared optimizer)
    "optimizer_two_lists_unnamed": ["train_b = opt.apply_gradients("],
    "weights_class_attribute": ["weights = {"],
    "host_rebound_after_build": ["clip_norm = 100.0"],
    "host_rebound_in_function": ["clip_norm = 100.0"],
    "loop_rebinds_variable": ["for b in range(4):"],
    "two_updates_one_run": ["sess.run([d_train, g_train, loss_d, loss_g]"],
    "fetch_gradient_pairs": ["sess.run([gradient, gvs, apply_gradients]"],
    "weights_dict_read_by_function": ["pred = encoder(x)"],
    "weights_list_read_by_function": ["pred = encoder(x)"],
    "weights_read_through_aliases": ["pred = encoder(x)"],
    "underscore_rebound": ["X_samples, _ = P(z)"],
    "pickle_args_with_file": ["pickle.dump(args, f)"],
    "reset_default_graph_ops": ["ops.reset_default_graph()"],
    "gradient_penalty": ["grad = tf.gradients(critic(X_inter), [X_inter])[0]"],
    "variable_fetched_with_update": ["l, _, w = sess.run([m.loss, m.train_op, m.W]"],
    "loss_shapes_incompatible": ["tf.losses.mean_squared_error(y, pred)"],
    "loss_shapes_from_dict_function": ["tf.losses.mean_squared_error(", "tf.losses.softmax_cross_entropy("],
    "loss_sparse_labels_column": ["tf.losses.sparse_softmax_cross_entropy("],
    "loss_sparse_rank_unknown": ["tf.losses.sparse_softmax_cross_entropy("],
    "feed_dict_values_rebound": ["feed = {x: data_x", "first = {x: data_x"],
    "rmsprop_apply_gradients_clipped": ["optimizer.apply_gradients(capped)"],
    "rmsprop_global_norm_centered": ["opt.apply_gradients(zip(grads, tvars)"],
    "optimize_loss_optimizer_object": ["optimize_loss(loss, global_step"],
    "momentum_fed_rate_nesterov": ["tf.train.MomentumOptimizer(lr"],
    "momentum_sparse_decay": ["tf.train.MomentumOptimizer(rate"],
    "variable_shapes_in_loops": ["v.get_shape()"],
    "learning_rate_schedules": ["tf.train.inverse_time_decay", "tf.train.polynomial_decay", "tf.train.cosine_decay",
                                "tf.train.piecewise_constant", "tf.assign_add("],
}

# probe → a fragment the refusal's reason must hold (the construct, said truly)
REASON = {
    "optimizer_two_lists_unnamed": "second update over another variable list",
    "weights_class_attribute": "class `Params` makes TensorFlow objects in its body",
    "host_rebound_after_build": "`clip_norm` is bound again at line 18 after TF 1.x built the graph",
    "host_rebound_in_function": "`clip_norm` is bound again at line 19 after TF 1.x built the graph",
    "two_updates_one_run": "two update ops together (`d_train`, `g_train`): TF 1.x does not order them",
    "fetch_gradient_pairs": "TF 1.x does not order the read and the update",
    "loss_shapes_incompatible": "incompatible (TF 1.x raised ValueError when it built the graph)",
}


def _probes():
    found = sorted(p.stem for p in PROBES.glob("*.py"))
    assert found == sorted(WHERE), "every probe needs its expected refusal line(s) in WHERE"
    return found


def _lines(text: str, snippets: list) -> set:
    return {i for i, line in enumerate(text.splitlines(), 1) if any(s in line for s in snippets)}


# The probes the TF2 tier converts today (the others are refused): each is proven by parity in the whole
# proof (`benchmarks/full_proofs.py`); CI proves PROVEN_ON_CI, one per class of wrong conversion they
# guard against (dropout's rate, a fed rate, build-time bindings, `_`, module-level dicts read by helpers,
# a variable fetched with the update, an optimizer twin with clipping, lists filled by loops, schedules,
# TF 1's cross-entropy, a name of the graph the training loop binds before an evaluation run), since each
# proof is two TensorFlow processes.
CONVERTED = (
    "dropout_keep_prob", "feed_dict_values_rebound", "gradient_penalty", "gradients_of_a_slice", "grads_filled_by_index",
    "grads_loop_append", "host_rebound_after_build", "host_rebound_in_function", "l2_accumulate_loop",
    "l2_rebind_loop", "learning_rate_schedules", "loop_rebinds_variable", "loss_shapes_from_dict_function",
    "loss_sparse_labels_column",
    "loss_sparse_rank_unknown", "lr_placeholder", "module_level_hypothesis", "module_level_hypothesis_session",
    "momentum_fed_rate_nesterov", "momentum_sparse_decay", "optimize_loss_optimizer_object", "pickle_args_with_file",
    "reduction_indices", "reset_default_graph_ops", "rmsprop_apply_gradients_clipped", "rmsprop_global_norm_centered",
    "run_placeholder", "slim_scope_collection", "softmax_xent_v1", "underscore_rebound",
    "variable_fetched_with_update", "variable_in_expression", "variable_shapes_in_loops",
    "weights_dict_read_by_function", "weights_list_read_by_function", "weights_read_through_aliases")
PROVEN_ON_CI = ("dropout_keep_prob", "lr_placeholder", "host_rebound_after_build", "underscore_rebound",
                "weights_dict_read_by_function", "variable_fetched_with_update", "rmsprop_apply_gradients_clipped",
                "grads_loop_append", "learning_rate_schedules", "softmax_xent_v1", "loop_rebinds_variable")


@pytest.mark.parametrize("probe", _probes())
def test_probe_is_refused_at_its_line_or_converted(probe):
    source = PROBES / f"{probe}.py"
    text = source.read_text()
    outcome = migrate(text, source.name, to="tf2")
    if outcome.tier == "compat":
        assert probe not in CONVERTED, f"{probe} is refused now: take it out of CONVERTED"
        assert outcome.text == migrate_text(text, source.name).text  # the compat tier's output, unchanged
        compile(outcome.text, source.name, "exec")
        refusals = [n for n in outcome.notes if n.kind == "human" and "not converted to the TF2 tier" in n.message]
        assert len(refusals) == 1, outcome.notes
        expected = _lines(text, WHERE[probe])
        assert expected, f"no line of {probe} holds {WHERE[probe]}"
        assert refusals[0].line in expected, (refusals[0], expected)
        assert "Traceback" not in refusals[0].message
        assert REASON.get(probe, "") in refusals[0].message
        return
    assert outcome.tier == "tf2"
    assert probe in CONVERTED, f"{probe} converts now: add it to CONVERTED, so that parity proves it"
    assert "tf1clip" not in outcome.text
    assert convert(outcome.text, source.name).text == outcome.text  # converting twice = once
    compile(outcome.text, source.name, "exec")


@pytest.mark.parametrize("probe", sampled(CONVERTED, PROVEN_ON_CI))
def test_converted_probe_trains_like_the_original(probe, tmp_path):
    source = PROBES / f"{probe}.py"
    new = tmp_path / source.name
    new.write_text(migrate(source.read_text(), source.name, to="tf2").text)
    proc = run_tf1clip("parity", source, new, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "PASS" in proc.stdout


def test_refusals_through_the_cli_are_compat_files_with_their_line(tmp_path):
    """Through the CLI: a refused input ends as a compat-tier file (exit 0), with the input line
    of the refusal in the report, never as `error`."""
    probe = "dense_name_variable"
    (tmp_path / f"{probe}.py").write_text((PROBES / f"{probe}.py").read_text())
    report = tmp_path / "report.json"
    proc = run_tf1clip("migrate", tmp_path / f"{probe}.py", "--to", "tf2", "--report", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import json

    (entry,) = json.loads(report.read_text())["files"]
    assert entry["status"] == "changed" and entry["tier"] == "compat", entry
    lines = {h["line"] for h in entry["left_for_human"] if h["rule"] == "tf2"}
    assert lines & _lines((PROBES / f"{probe}.py").read_text(), WHERE[probe]), entry


@pytest.mark.parametrize("script", sorted(p.stem for p in PRINTED.glob("*.py")))
def test_converted_prints_what_tf1_printed(script, tmp_path):
    """Scripts whose weights start from NumPy values: the TF 1.x run (`tf1clip run`) and the converted
    program (plain `python`) print the same losses and final weights, digit for digit (parity's recorder
    matches one optimizer to one update, so these are proven by their printed output)."""
    source = PRINTED / f"{script}.py"
    outcome = migrate(source.read_text(), source.name, to="tf2")
    assert outcome.tier == "tf2", outcome.notes
    assert convert(outcome.text, source.name).text == outcome.text
    new = tmp_path / "converted.py"
    new.write_text(outcome.text)
    old = run_tf1clip("run", source, cwd=tmp_path, timeout=600)
    ran = run_python(new, cwd=tmp_path, timeout=600)
    assert old.returncode == 0 and ran.returncode == 0, old.stderr[-2000:] + ran.stderr[-2000:]
    printed = [line for line in old.stdout.splitlines() if line.strip()]
    assert len(printed) > 8 and printed == [line for line in ran.stdout.splitlines() if line.strip()], (
        old.stdout, ran.stdout)

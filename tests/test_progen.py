"""progen, the generator of TF 1.x programs for differential testing (benchmarks/progen), and its
driver benchmarks/progen_run.py.

Cheap part: 40 seeds generate valid Python, reproducibly, and together every value of every
dimension, each one visible in the program text (a marker the value must write). Costly part,
kept small for CI: the driver on three fixed seeds (tf1clip run, migrate --to tf2, and parity
on the two that reach the TF2 tier).
"""
from __future__ import annotations

import ast
import json
import re
import sys

import pytest

from conftest import ROOT, run_python

sys.path.insert(0, str(ROOT / "benchmarks"))

from progen import DIMENSIONS, generate  # noqa: E402
from progen.choices import parse_where  # noqa: E402
from progen.program import REBOUND  # noqa: E402

SAMPLE = range(40)
LOOPS = parse_where("state=loop,api=layers_dense")


def _plain(source: str) -> str:
    """The program with the aliases spelled out (`T.` and `nn.` as `tf.` and `tf.nn.`)."""
    source = re.sub(r"(?<![\w.])T\.", "tf.", source)
    return re.sub(r"(?<![\w.])nn\.", "tf.nn.", source)


def _markers(ch) -> dict[str, list[str]]:
    """For each dimension, text the chosen value must put into the program (any one of)."""
    d = ch.details
    opt = {"GradientDescent": "'SGD'", "Momentum": None, "Adam": "'Adam'", "RMSProp": "'RMSProp'",
           "Adagrad": "'Adagrad'"}
    return {
        "state": {"module": ["\nlogits = "], "function_reads": [f"def {d['function_name']}(x"],
                  "function_makes": [f"def {d['function_name']}(x"], "class": ["class Model", "model = Model()"],
                  "dict": ["weights = {", "biases = {"], "list": ["weights = [", "biases = ["],
                  "loop": ["for i in range(len(sizes) - 1):", "for units in hidden_units:", "for units in widths:"]}[
            ch.state],
        "rebind": {"none": [""], "hyper": [f" {d['rebind_target']} = {REBOUND.get(d['rebind_target'] or '', '?')}\n",
                             f"\n{d['rebind_target']} = {REBOUND.get(d['rebind_target'] or '', '?')}\n"],
                   "loop_var": [f"for {d['rebind_target']} in range(n_steps):"]}[ch.rebind],
        "alias": {"none": [""], "nn": ["from tensorflow import nn"], "T": ["T = tf\n"],
                  "opt_cls": ["opt_cls = tf.train."]}[ch.alias],
        "api": {"raw_normal": ["tf.Variable(tf.random_normal("], "raw_truncated": ["tf.Variable(tf.truncated_normal("],
                "get_variable": ["tf.get_variable("], "layers_dense": ["tf.layers.dense("]}[ch.api],
        "front": {"dense": [""], "conv_layers": ["tf.layers.conv2d("], "conv_nn": ["tf.nn.conv2d("],
                  "rnn": ["tf.nn.rnn_cell.BasicLSTMCell(", "tf.nn.dynamic_rnn("]}[ch.front],
        "dropout": {"none": [""], "nn_fed": ["tf.nn.dropout(h"], "nn_const": ["keep_prob=keep_value)"],
                    "layers_training": ["tf.layers.dropout("]}[ch.dropout],
        "loss": {"softmax_v2": ["tf.nn.softmax_cross_entropy_with_logits_v2("],
                 "softmax": ["tf.nn.softmax_cross_entropy_with_logits(", "tf.losses.softmax_cross_entropy("],
                 "sparse_softmax": ["tf.nn.sparse_softmax_cross_entropy_with_logits(",
                                    "tf.losses.sparse_softmax_cross_entropy("],
                 "mse": ["tf.losses.mean_squared_error(", "tf.reduce_mean(tf.square("]}[ch.loss],
        "l2": {"none": [""], "trainable": ["tf.nn.l2_loss(v) for v in tf.trainable_variables()])"],
               "weights": ["tf.nn.l2_loss(W", "tf.nn.l2_loss(w", "tf.nn.l2_loss(self.W", "tf.nn.l2_loss(weights[",
                           "if len(v.get_shape()) > 1"]}[ch.l2],
        "optimizer": [f"{ch.optimizer}Optimizer"] + ([f"optimizer={opt[ch.optimizer]}"] if opt[ch.optimizer] else []),
        "lr": {"const": ["(learning_rate", "learning_rate=learning_rate"], "fed": ["lr = tf.placeholder("],
               "decay": ["tf.train.exponential_decay(starter_learning_rate"]}[ch.lr],
        "clip": {"minimize": [".minimize(loss", ".minimize(self.loss"], "apply": [".apply_gradients(grads_and_vars"],
                 "value": ["tf.clip_by_value(g, -clip_value, clip_value)"], "norm": ["tf.clip_by_norm(g, clip_norm)"],
                 "global_norm": ["tf.clip_by_global_norm(grads, clip_norm)"],
                 "optimize_loss": ["tf.contrib.layers.optimize_loss("]}[ch.clip],
        "none_filter": {"no": [""], "yes": ["unused = tf.Variable("]}[ch.none_filter],
        "fetch": {"list": ["_, l = sess.run(["], "list_with_var": ["_, l, w = sess.run(["],
                  "dict": ["sess.run({'t': "], "separate": ["    l = sess.run("]}[ch.fetch],
        "evaluate": {"no": [""], "yes": ["x: test_x, "]}[ch.evaluate],
        "saver": {"no": [""], "yes": ["saver.save(sess, "]}[ch.saver],
        "summary": {"no": [""], "yes": ["writer.add_summary(summ, "]}[ch.summary],
        "session": {"with": ["with tf.Session() as sess:"], "plain": ["sess = tf.Session()"]}[ch.session],
        "op_run": {"none": [""], "weight_clip": ["sess.run(clip_ops)"], "assign_value": ["count = sess.run(bump)"]}[
            ch.op_run],
        "loop_in": {"module": ["for units in hidden_units:"], "helper_arg": ["def dense_stack(h, widths):"],
                    "helper_default": ["def dense_stack(h, widths=["]}[ch.loop_in] if _loop_of_layers(ch) else [""],
        "act": {"relu": [""], "helper": ["def leaky(t, alpha=0.2):"]}[ch.act],
        "decay_at": {"step": [""], "examples": ["global_step * batch_size, decay_steps"]}[ch.decay_at]
        if ch.lr == "decay" else [""],
        "bn": {"none": [""], "not_wired": ["layers.batch_normalization("],
               "wired": ["with tf.control_dependencies(update_ops):"]}[ch.bn],
    }


def _loop_of_layers(ch) -> bool:
    """The dimension `loop_in` shapes the program: its layers are `tf.layers.dense` made by a loop."""
    return ch.state == "loop" and ch.api == "layers_dense"


def test_sample_is_python_covers_every_value_and_writes_each():
    seen = {name: set() for name in DIMENSIONS}
    # the sample, and seeds of the region where `loop_in` shapes the program (a loop of tf.layers.dense)
    for seed, where in [(seed, None) for seed in SAMPLE] + [(seed, LOOPS) for seed in range(12)]:
        source, ch = generate(seed, where)
        ast.parse(source, filename=f"seed-{seed}")
        assert source.startswith(f"# progen seed {seed}: state={ch.state}, ")
        plain = _plain(source)
        for name, markers in _markers(ch).items():
            assert any(m in plain for m in markers), (seed, name, ch.dims[name], markers)
            if (name != "loop_in" or _loop_of_layers(ch)) and (name != "decay_at" or ch.lr == "decay"):
                seen[name].add(ch.dims[name])
        if ch.none_filter == "yes" and ch.clip in ("apply", "value", "norm", "global_norm"):
            assert "if g is not None" in source, seed
        if ch.none_filter == "no":
            assert "unused" not in source and "is not None" not in source, seed
        if ch.bn != "none":  # after the first hidden layer; the evaluation reads the moving averages
            assert ("bn_training: False" in source) == (ch.evaluate == "yes"), seed
            assert source.count("layers.batch_normalization(") == 1, seed
        else:
            assert "batch_normalization" not in source and "UPDATE_OPS" not in source, seed
        if ch.act == "helper" and ch.state != "loop":  # the hidden layers' activation, not only its def
            assert re.search(r"= leaky\(", source), seed
        if ch.details["layout"] == "pep8" and "\ndef " in source:
            assert re.search(r"[^\n]\n\n\ndef ", source), seed
        seen.setdefault("layout", set()).add(ch.details["layout"])
    missing = {name: sorted(set(values) - seen[name]) for name, values in
               {**DIMENSIONS, "layout": ("compact", "pep8")}.items() if set(values) - seen[name]}
    assert not missing, f"values no seed of the sample chose: {missing}"


def test_a_seed_gives_one_program():
    first, ch = generate(11)
    again, ch2 = generate(11)
    assert first == again and ch.as_dict() == ch2.as_dict()
    assert len({generate(seed)[0] for seed in SAMPLE}) == len(SAMPLE)


# 6 reaches the TF2 tier by making its layers in a loop over a list fixed in the file (read as its passes since
# unroll.py), and runs an assign op after each update (`op_run=assign_value`: the counter's new value printed,
# returned by its step); 410, refused before because the training loop binds `W_out` again before its evaluation
# run, converts since that step is traced before the loop (steps.Steps._traced). No seed of 0:800 is refused at
# 8d6efaf, so the sample has no refusal to group. (Two seeds on CI; benchmarks/progen_run.py runs hundreds.)
DRIVER_SEEDS = "6,410"


def test_driver_runs_migrates_and_proves(tmp_path):
    out = tmp_path / "result.json"
    done = run_python(ROOT / "benchmarks" / "progen_run.py", "--seeds", DRIVER_SEEDS, "--json", out,
                      "--markdown", tmp_path / "result.md", "--scratch", tmp_path / "scratch", timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    f = result["figures"]
    assert (f["programs"], f["run_ok"], f["generator_bugs"], f["migrate_errors"]) == (2, 2, 0, 0), f
    rows = {r["seed"]: {**r, "dims": dict(zip(result["dimensions"], r["dims"]))} for r in result["rows"]}
    assert [rows[s]["tier"] for s in (6, 410)] == ["tf2", "tf2"]
    assert [rows[s]["parity"] for s in (6, 410)] == ["PASS"] * 2, [rows[s] for s in (6, 410)]
    assert (f["tf2_tier"], f["PASS"], f["FAIL"], f["ERROR"]) == (2, 2, 0, 0)
    assert result["wrong_conversions"] == [] and result["generator_bugs"] == [] and result["refusals"] == []
    assert rows[410]["dims"]["rebind"] == "loop_var"
    assert rows[6]["dims"]["op_run"] == "assign_value"
    assert rows[6]["dims"]["state"] == "loop"
    assert "TF2 tier reached: **2/2**" in (tmp_path / "result.md").read_text()
    assert "wrong conversions: **0**" in done.stdout


def test_where_narrows_dimensions_and_rejects_unknown_values():
    where = parse_where("alias=none,fetch=list|dict,state=dict")
    for seed in range(20):
        source, ch = generate(seed, where)
        assert (ch.alias, ch.state) == ("none", "dict") and ch.fetch in ("list", "dict"), seed
        assert ch.api != "layers_dense" and "weights = {" in source
    for bad in ("alias=T|tf", "colour=red"):
        with pytest.raises(ValueError):
            parse_where(bad)
    with pytest.raises(ValueError):       # a dict holds variables: tf.layers.dense is never drawn for it
        generate(0, parse_where("state=dict,api=layers_dense"))

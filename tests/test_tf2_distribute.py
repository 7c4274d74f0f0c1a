"""`tf1clip migrate --to tf2 --strategy mirrored|multi_worker` (codemods/tf2/distribute.py).

The rewrite's own before/after examples and refusals (applied twice equals once), the
distributed goldens (fixtures/tf2_golden/distribute/, current and stable), clip-once proven by
`tf1clip parity LEGACY DISTRIBUTED --replicas 2` for element-wise (R1), global-norm (R2, R4, R8)
and per-tensor (R3) clipping, no Keras clip arguments under a strategy, and the CLI plumbing.
"""
from __future__ import annotations

import ast
import json
import re
import shutil
import sys

import libcst as cst
import pytest

from conftest import FIXTURES, ROOT, run_tf1clip, sampled

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from codemods.tf2 import distribute as dist  # noqa: E402
from codemods.tf2.distribute_examples import EXAMPLES, REFUSED  # noqa: E402
from codemods.tf2._base import Refuse  # noqa: E402
from tf1clip.migrate.engine import migrate  # noqa: E402

GOLDEN = FIXTURES / "tf2_golden" / "distribute"
LEGACY = FIXTURES / "legacy"
NAMES = ("r01_clip_by_value", "r02_clip_by_global_norm", "r03_clip_by_norm",
         "r04_contrib_clip_gradients_by_norm", "r08_tf_gradients_global_norm_decay")
KERAS_CLIP = re.compile(r"\b(clipnorm|clipvalue|global_clipnorm)\s*=")


def _imports(text: str) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out.add((node.module or "").split(".")[0])
    return out


def _check_distributed(text: str) -> None:
    """What every distributed output must be: TensorFlow only, no Keras clip argument, one
    all-reduce of the gradients, apply_gradients outside the replica function."""
    assert _imports(text) <= {"tensorflow", "numpy", "__future__"} | set(sys.stdlib_module_names), _imports(text)
    assert "tf1clip" not in text and "compat.v1" not in text
    assert not KERAS_CLIP.search(text), "Keras 3 clips per replica under a strategy: never emitted"
    assert "strategy.scope()" in text and "strategy.run(" in text
    assert text.count("strategy.reduce(tf.distribute.ReduceOp.SUM") == 2  # the loss and the gradients, once
    replica = re.search(r"\n    def replica_step\(.*?\n(?=\n    \S)", text, re.S)
    assert replica and "apply_gradients" not in replica.group(0)


# -- the rewrite's own examples ------------------------------------------------------------------
@pytest.mark.parametrize("strategy, before, after", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_example_rewritten_and_twice_equals_once(strategy, before, after):
    once, notes = dist.transform(cst.parse_module(before), strategy)
    assert once.code == after
    assert [n.kind for n in notes] == ["change"] and notes[0].line > 0
    twice, again = dist.transform(cst.parse_module(once.code), strategy)
    assert twice.code == once.code and again == []
    compile(after, "example.py", "exec", dont_inherit=True)
    _check_distributed(after)
    expected = {"mirrored": "tf.distribute.MirroredStrategy()",
                "multi_worker": "tf.distribute.MultiWorkerMirroredStrategy()"}[strategy]
    assert expected in after


@pytest.mark.parametrize("alias", ["tf1", "tensorflow"])
@pytest.mark.parametrize("strategy, before, after", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_added_code_spells_tensorflow_with_the_module_alias(alias, strategy, before, after):
    """The examples under `import tensorflow as tf1` / `import tensorflow`: what the rewrite adds says
    `tf1.distribute...` (emit.tf_ref, no respelling of text), and a user name `tf` (the loss of the
    second example) stays itself: `tf.dtype`, not `tf1.dtype`."""
    import_line = "import tensorflow\n" if alias == "tensorflow" else f"import tensorflow as {alias}\n"

    def respell(text: str) -> str:
        return text.replace("import tensorflow as tf\n", import_line).replace("tf.", f"{alias}.").replace("cost", "tf")

    once, _ = dist.transform(cst.parse_module(respell(before)), strategy)
    assert once.code == respell(after)
    assert f"{alias}.distribute.ReduceOp.SUM" in once.code


@pytest.mark.parametrize("before, why", REFUSED, ids=[f"refused-{i}" for i in range(len(REFUSED))])
def test_refused_with_line_and_reason(before, why):
    with pytest.raises(Refuse) as info:
        dist.transform(cst.parse_module(before), "mirrored")
    assert why in info.value.reason
    assert info.value.line > 0 or "no train step" in why
    result = dist.distribute(before, "x.py", "mirrored")
    assert result.text is None and result.notes[0].kind == "human"
    assert result.notes[0].message.startswith("not distributed (--strategy mirrored): ")


# -- goldens ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_golden_is_current_and_stable(name):
    tf2 = (FIXTURES / "tf2_golden" / f"{name}.py").read_text()
    legacy = (LEGACY / f"{name}.py").read_text()
    result = dist.distribute(tf2, f"{name}.py", "mirrored", source=legacy)
    golden = (GOLDEN / f"{name}.py").read_text()
    assert result.text == golden, "regenerate: python fixtures/tf2_golden/distribute/make_golden.py"
    change = [n for n in result.notes if n.kind == "change"]
    assert len(change) == 1 and change[0].line > 0  # the loss line of the legacy file
    assert "tf.reduce_mean" in legacy.splitlines()[change[0].line - 1]
    assert dist.distribute(golden, f"{name}.py", "mirrored").text == golden  # twice == once
    _check_distributed(golden)
    # the step's clip is the single-device one, unchanged
    clip = re.findall(r"tf\.clip_by_\w+\([^\n]*", tf2)
    assert clip and clip == re.findall(r"tf\.clip_by_\w+\([^\n]*", golden)


# CI's sample (every golden under TF1CLIP_FULL_PROOF=1): the global-norm clip, whose norm must be taken
# over the replicas' summed gradients once; each golden is held to the codemod's
# output by test_golden_is_current_and_stable.
@pytest.mark.parametrize("name", sampled(NAMES, ["r02_clip_by_global_norm"]))
def test_distributed_golden_matches_single_device_tf1_under_2_replicas(name, tmp_path):
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", LEGACY / f"{name}.py", GOLDEN / f"{name}.py", "--replicas", "2",
                       "--json", report, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(report.read_text())
    rows = result["optimizers"][0]["rows"]
    assert len(rows) == 10 and all(row["ok"] for row in rows)
    if name == "r02_clip_by_global_norm":  # the global clip bites: applied once, at 5.0
        assert all(row["grad_norm_pre_old"] > 5.0 for row in rows)
        assert all(abs(row["grad_norm_post_new"] - 5.0) < 1e-4 for row in rows)


# -- engine and CLI --------------------------------------------------------------------------------
def test_multi_worker_is_the_same_step_with_another_strategy():
    text = (LEGACY / "r02_clip_by_global_norm.py").read_text()
    mirrored = migrate(text, "r02.py", "tf2", "mirrored")
    multi = migrate(text, "r02.py", "tf2", "multi_worker")
    assert mirrored.tier == multi.tier == "tf2"
    assert multi.text == mirrored.text.replace("tf.distribute.MirroredStrategy()",
                                               "tf.distribute.MultiWorkerMirroredStrategy()")
    assert multi.text.count("MultiWorkerMirroredStrategy()") == 1
    assert migrate(text, "r02.py", "tf2").text == (FIXTURES / "tf2_golden" / "r02_clip_by_global_norm.py").read_text()


def test_refused_program_keeps_the_single_device_tf2_output_with_the_reason():
    text = (LEGACY / "r02_clip_by_global_norm.py").read_text()
    # a loss that is not a plain mean/sum over the batch: not provably shardable
    text = text.replace("loss = tf.reduce_mean(tf.square(pred - y))",
                        "loss = tf.reduce_mean(tf.square(pred - y)) + tf.nn.l2_loss(pred)")
    assert "tf.nn.l2_loss(pred)" in text
    single = migrate(text, "r02.py", "tf2")
    out = migrate(text, "r02.py", "tf2", "mirrored")
    assert out.tier == "tf2" and out.text == single.text and "tf.distribute" not in out.text
    human = [n for n in out.notes if n.kind == "human" and n.rule == "distribute"]
    assert len(human) == 1 and "not a tf.reduce_mean or tf.reduce_sum" in human[0].message
    assert "tf.nn.l2_loss(pred)" in text.splitlines()[human[0].line - 1]  # file:line of the source


def test_cli_strategy_over_the_legacy_tree(tmp_path):
    shutil.copytree(LEGACY, tmp_path / "legacy")
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    proc = run_tf1clip("migrate", "legacy", "--to", "tf2", "--strategy", "mirrored", "--outtree", out,
                       "--report", report, "-j", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(report.read_text())
    assert doc["options"]["strategy"] == "mirrored"
    distributed = set()
    for entry in doc["files"]:
        if entry["kind"] != "python":
            continue
        name = entry["path"].split("/")[-1]
        text = (out / name).read_text()
        reasons = [h for h in entry["left_for_human"] if "not distributed (--strategy mirrored)" in h["message"]]
        if "tf.distribute" in text:
            distributed.add(name)
            assert entry["tier"] == "tf2" and not reasons
            _check_distributed(text)
        elif entry.get("tier") == "tf2":  # refused: single-device TF2, with file:line and why
            assert len(reasons) == 1 and reasons[0]["line"] > 0, entry
        else:  # compat fallback: not distributed, and said so
            assert len(reasons) == 1, entry
    assert {f"{n}.py" for n in NAMES} <= distributed
    for name in NAMES:
        assert (out / f"{name}.py").read_text() == (GOLDEN / f"{name}.py").read_text()
    # r05 keeps Keras' clipvalue= in its optimizer: refused under a strategy, not distributed
    r05 = (out / "r05_keras_clipvalue.py").read_text()
    assert "tf.distribute" not in r05
    again = run_tf1clip("migrate", "out", "--to", "tf2", "--strategy", "mirrored", "--check", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_strategy_without_tf2_is_a_usage_error(tmp_path):
    shutil.copy(LEGACY / "r02_clip_by_global_norm.py", tmp_path)
    proc = run_tf1clip("migrate", "r02_clip_by_global_norm.py", "--strategy", "mirrored", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--strategy mirrored needs --to tf2" in proc.stderr
    bad = run_tf1clip("migrate", "r02_clip_by_global_norm.py", "--to", "tf2", "--strategy", "tpu", cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr

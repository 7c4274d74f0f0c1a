"""fixtures/tf2: each legacy TF 1.x fixture has a hand-written TF2 version that trains exactly
like it, proved by `tf1clip parity fixtures/legacy/X.py fixtures/tf2/X.py` with the default
tolerances. Real TensorFlow in real subprocesses, no mocks.

Per pair: exit 0 and PASS; from `--json`, one optimizer whose step count is the legacy
script's number of updates; for the clipping recipes the clip bites at step 1 (the raw global
norm is above the threshold and the clipped one below the raw one) and the post-clip norms
of OLD and NEW agree at every step. These checks run on the fixed sample `SAMPLE` below (on every pair
under TF1CLIP_FULL_PROOF=1); every pair also passes parity in benchmarks/tf2_parity.py's "hand" cases.
"""
import ast
import json
import math
import sys

import pytest

from conftest import FIXTURES, make_mnist, run_tf1clip, sampled, tail

LEGACY = FIXTURES / "legacy"
TF2 = FIXTURES / "tf2"
NAMES = sorted(p.name for p in LEGACY.glob("*.py"))

# Updates each legacy script makes (its training loop): 10, R7 2 epochs x int(500 / 100) batches.
UPDATES = {name: 10 for name in NAMES}
# The recipe's clip threshold (element-wise value, per-tensor or global norm); None: no clip.
CLIP = {
    "r01_clip_by_value.py": 1.0,
    "r02_clip_by_global_norm.py": 5.0,
    "r03_clip_by_norm.py": 5.0,
    "r04_contrib_clip_gradients_by_norm.py": 5.0,
    "r05_keras_clipvalue.py": 1.0,
    "r06_lstm_text_classifier.py": 5.0,
    "r07_mnist_mlp.py": 5.0,
    "r08_tf_gradients_global_norm_decay.py": 1.0,
    "r09_optimize_loss.py": 2.5,
    "r09b_optimize_loss_callable.py": 1.0,
    "r10_slim_create_train_op.py": 4.0,
    "r11_minimize_no_clip.py": None,
}
GLOBAL_NORM = {"r02_clip_by_global_norm.py", "r04_contrib_clip_gradients_by_norm.py",
               "r08_tf_gradients_global_norm_decay.py", "r09_optimize_loss.py"}
RTOL = 1e-4  # the harness' default, used by the runs below

# R11's first layer is trainable but left out of var_list: it still shapes the loss, so its
# start value must be transferred too (the harness moves every trainable variable of OLD).


# CI's sample: global norm, a Keras optimizer argument, and the unclipped one with a variable left out of
# var_list (the other ways of clipping, element-wise, per tensor and tf-slim's train op, are in the whole
# proof: each pair is two TensorFlow processes, and CI's time is short). Every pair
# runs in benchmarks/tf2_parity.py (its "hand" cases), and every recipe's TF2-tier golden in
# tests/test_tf2_parity.py's sample.
SAMPLE = ("r02_clip_by_global_norm.py", "r05_keras_clipvalue.py", "r11_minimize_no_clip.py")


def _params():
    return sampled(NAMES, SAMPLE)


def run_parity(old, new, cwd, *extra):
    report = cwd / "parity.json"
    proc = run_tf1clip("parity", old, new, "--json", report, *extra, cwd=cwd, timeout=300)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def test_every_legacy_fixture_has_a_tf2_version_listed_in_the_readme():
    assert NAMES, "no legacy fixtures found"
    readme = (TF2 / "README.md").read_text()
    for name in NAMES:
        assert (TF2 / name).is_file(), f"fixtures/tf2/{name} missing: every legacy fixture needs a TF2 version"
        assert f"`{name}`" in readme, f"{name} is not described in fixtures/tf2/README.md"
        assert name in CLIP and name in UPDATES
    extra = sorted({p.name for p in TF2.glob("*.py")} - set(NAMES))
    assert not extra, f"fixtures/tf2 files without a legacy counterpart: {extra}"


@pytest.mark.parametrize("name", NAMES)
def test_tf2_version_imports_only_tensorflow_numpy_and_stdlib(name):
    source = (TF2 / name).read_text()
    allowed = {"tensorflow", "numpy"} | set(sys.stdlib_module_names)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
        else:
            continue
        for module in modules:
            assert module.split(".")[0] in allowed, f"{name} imports {module}"
    assert "tf1clip" not in source and "tf.compat.v1.disable" not in source
    assert "tf.GradientTape()" in source and "@tf.function" in source  # eager TF2, traced step


@pytest.mark.parametrize("name", _params())
def test_tf2_version_trains_like_the_legacy_fixture(name, tmp_path):
    if name.startswith("r07"):
        make_mnist().write_mnist(tmp_path / "MNIST_data")
    proc, result = run_parity(LEGACY / name, TF2 / name, tmp_path)
    assert proc.returncode == 0, f"{name}: parity exited {proc.returncode}\n{proc.stdout}\n{tail(proc.stderr)}"
    assert proc.stdout.strip().endswith("PASS"), proc.stdout
    assert result["passed"] and not result["problems"], result["problems"]
    assert len(result["optimizers"]) == 1
    rows = result["optimizers"][0]["rows"]
    assert len(rows) == UPDATES[name], f"{name}: {len(rows)} updates compared, the script makes {UPDATES[name]}"
    assert [row["step"] for row in rows] == list(range(1, UPDATES[name] + 1))
    assert all(row["ok"] for row in rows)
    assert all(w["ok"] for w in result["optimizers"][0]["weights"])
    clip = CLIP[name]
    if clip is None:
        return
    first = rows[0]
    assert first["grad_norm_pre_old"] > clip, first  # the clip bites at step 1 ...
    assert first["grad_norm_post_old"] < first["grad_norm_pre_old"] * (1 - 1e-3), first  # ... and changes it
    if name in GLOBAL_NORM:
        assert math.isclose(first["grad_norm_post_old"], clip, rel_tol=1e-5), first
    for row in rows:  # what reaches the optimizer agrees, step by step
        assert row["grad_norm_post_new"] is not None, row
        assert math.isclose(row["grad_norm_post_old"], row["grad_norm_post_new"], rel_tol=RTOL, abs_tol=1e-12), row

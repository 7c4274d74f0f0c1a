"""Initializers compared exactly (tf1clip/parity/initializers.py).

Every random op and initializer tags what it returns with the distribution it drew from; a
variable's start value has the draw of its initial value. Under `--no-transfer` a NEW variable
drawn from the same distribution as OLD's gets OLD's draw (so training matches exactly), one
from another fails naming both; by default the same comparison replaces the statistical check.
Fixtures: fixtures/parity/initializers/mlp_tf1.py and its hand migration mlp_tf2.py; the broken
migrations are made here by one edit each, checked to have happened. Real TensorFlow, real
subprocesses."""
import json
import math

import numpy as np

from conftest import FIXTURES, run_python, run_tf1clip, tail
from tf1clip.parity.initializers import plausible, same_draw
from tf1clip.parity.start_values import same_distribution

HERE = FIXTURES / "parity" / "initializers"
OLD, NEW = HERE / "mlp_tf1.py", HERE / "mlp_tf2.py"
GLOROT = f"uniform(minval=-{math.sqrt(6 / 52):.6g}, maxval={math.sqrt(6 / 52):.6g}) [20, 32] float32"
TRUNCATED = "truncated_normal(mean=0, stddev=0.1) [32, 10] float32"


def _parity(old, new, tmp_path, *flags):
    report = tmp_path / f"report-{new.stem}.json"
    proc = run_tf1clip("parity", old, new, "--json", report, *flags, cwd=tmp_path, timeout=600)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def _edited(path, edits, out):
    text = path.read_text()
    for old, new in edits:
        assert text.count(old) == 1, (old, text.count(old))
        text = text.replace(old, new)
    out.write_text(text)
    return out


RESOLVE = r"""
import json, math
import tensorflow as tf
import keras
from tf1clip.parity import initializers as I

draws = I.Draws()
I.install(draws)
out = {}
out["keras_glorot"] = draws.of_value(keras.initializers.GlorotUniform()([3, 4]))
out["uniform"] = draws.of_value(tf.random.uniform([3, 4], -math.sqrt(6 / 7), math.sqrt(6 / 7)))
out["keras_fan_in"] = draws.of_value(keras.initializers.VarianceScaling(1.0, "fan_in", "uniform")([3, 4]))
out["keras_he_normal"] = draws.of_value(keras.initializers.HeNormal()([3, 4]))
out["scaled"] = draws.of_value(tf.random.normal([3, 4]) * 0.1)
out["keras_orthogonal"] = draws.of_value(keras.initializers.Orthogonal(gain=2.0)([3, 4]))
with tf.Graph().as_default():
    v1 = tf.compat.v1
    out["v1_default"] = draws.of_variable(v1.get_variable("g", [3, 4]))
    out["v1_normal"] = draws.of_variable(v1.get_variable(
        "n", [3, 4], initializer=v1.variance_scaling_initializer(2.0, "fan_in", "normal")))
    out["v1_orthogonal"] = draws.of_variable(v1.get_variable("o", [3, 4], initializer=v1.orthogonal_initializer(2.0)))
    out["v1_zeros"] = draws.of_variable(v1.get_variable("z", [3, 4], initializer=v1.zeros_initializer()))
print(json.dumps(out))
"""


def test_initializers_resolve_to_the_distribution_they_draw(tmp_path):
    script = tmp_path / "resolve.py"
    script.write_text(RESOLVE)
    proc = run_python(script, cwd=tmp_path)
    assert proc.returncode == 0, tail(proc.stderr)
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    limit = math.sqrt(6 / 7)
    # tf.get_variable's default (TF 1.x glorot_uniform), Keras 3's GlorotUniform, and the uniform op
    for name in ("v1_default", "keras_glorot", "uniform"):
        assert d[name]["kind"] == "uniform" and d[name]["shape"] == [3, 4], d[name]
        assert abs(d[name]["maxval"] - limit) < 1e-6 and abs(d[name]["minval"] + limit) < 1e-6, d[name]
    assert same_draw(d["v1_default"], d["keras_glorot"]) and same_draw(d["v1_default"], d["uniform"])
    assert "mode=fan_avg" in d["v1_default"]["from"] and "mode=fan_in" in d["keras_fan_in"]["from"]
    assert not same_draw(d["v1_default"], d["keras_fan_in"])  # fan_in 3 against fan_avg 3.5
    # TF 1.x's distribution="normal" is a truncated normal, corrected for the truncation, as Keras' HeNormal
    assert d["v1_normal"]["kind"] == "truncated_normal", d["v1_normal"]
    assert abs(d["v1_normal"]["stddev"] - math.sqrt(2 / 3) / 0.87962566103423978) < 1e-9
    assert same_draw(d["v1_normal"], d["keras_he_normal"])
    assert d["v1_orthogonal"]["kind"] == "orthogonal" and same_draw(d["v1_orthogonal"], d["keras_orthogonal"])
    assert d["scaled"] is None and d["v1_zeros"] is None  # computed from a draw; a constant


def test_a_start_value_is_judged_a_sample_of_its_draw():
    rng = np.random.RandomState(0)
    glorot = {"kind": "uniform", "shape": [640], "dtype": "float32", "minval": -0.34, "maxval": 0.34}
    truncated = {"kind": "truncated_normal", "shape": [320], "dtype": "float32", "mean": 0.0, "stddev": 0.1}
    assert all(plausible(rng.uniform(-0.34, 0.34, 640), glorot) for _ in range(50))
    draws = rng.normal(0, 0.1, 2000)
    assert plausible(draws[np.abs(draws) <= 0.2][:320], truncated)
    assert not plausible(rng.randn(640) * 0.05, glorot)  # pretrained weights assigned after the initializer
    assert not plausible(rng.uniform(-0.34, 0.34, 640) * 0.8, glorot)
    assert not plausible(rng.randn(320) * 0.1, truncated)  # outside +-2 stddev
    assert not plausible(rng.uniform(-0.34, 0.34, 64), glorot)  # another shape


def test_the_hand_migration_trains_exactly_like_tf1_from_its_own_initializers(tmp_path):
    proc, report = _parity(OLD, NEW, tmp_path, "--no-transfer")
    assert proc.returncode == 0, tail(proc.stdout + proc.stderr, 40)
    initial = {entry["name"]: entry for entry in report["initial"]}
    assert initial["W1:0"]["ok"] and initial["W1:0"]["max_abs_diff"] == 0.0
    assert f"same initializer: {GLOROT}" in initial["W1:0"]["initializer"], initial["W1:0"]
    assert "OLD's draw loaded" in initial["W1:0"]["initializer"]
    assert initial["W2:0"]["initializer"] == f"same initializer: {TRUNCATED}; OLD's draw loaded"
    assert "no known random draw on OLD and NEW" in initial["b1:0"]["initializer"]  # zeros: compared as values
    assert all(row["loss_abs"] <= 1e-6 * abs(row["loss_old"]) for row in report["optimizers"][0]["rows"])
    # OLD's W1 assigned from NumPy after its initializer is no sample of glorot_uniform: no draw is
    # loaded for it, and NEW's own glorot draw differs from those values
    pretrained = "np.random.RandomState(5).randn(20, 32).astype(np.float32) * 0.05"
    assigned = _edited(OLD, [("    sess.run(tf.global_variables_initializer())\n",
                              "    sess.run(tf.global_variables_initializer())\n"
                              f"    sess.run(W1.assign({pretrained}))\n")], tmp_path / "mlp_assigned_tf1.py")
    proc, report = _parity(assigned, NEW, tmp_path, "--no-transfer")
    assert proc.returncode == 1, tail(proc.stdout + proc.stderr, 40)
    initial = {entry["name"]: entry for entry in report["initial"]}
    assert not initial["W1:0"]["ok"] and "no known random draw on OLD" in initial["W1:0"]["initializer"]
    assert "problem: start value of W1:0 differs (initializers)" in proc.stdout
    assert initial["W2:0"]["ok"] and "OLD's draw loaded" in initial["W2:0"]["initializer"]


def test_a_wrong_stddev_fan_mode_or_distribution_fails_naming_the_variable(tmp_path):
    # --no-transfer: stddev 0.01 for W2's 0.1, fan_in for glorot's fan_avg; both named, neither loaded
    wrong = _edited(NEW, [("stddev=0.1), name=\"W2\")", "stddev=0.01), name=\"W2\")"),
                          ("tf.keras.initializers.GlorotUniform()",
                           "tf.keras.initializers.VarianceScaling(1.0, \"fan_in\", \"uniform\")")],
                    tmp_path / "mlp_wrong_tf2.py")
    proc, report = _parity(OLD, wrong, tmp_path, "--no-transfer")
    assert proc.returncode == 1, tail(proc.stdout + proc.stderr, 40)
    fan_in = f"uniform(minval=-{math.sqrt(3 / 20):.6g}, maxval={math.sqrt(3 / 20):.6g}) [20, 32] float32"
    assert (f"problem: start value of W1:0: OLD draws {GLOROT} (GlorotUniform(scale=1, mode=fan_avg, "
            f"distribution=uniform)), NEW draws {fan_in} (VarianceScaling(scale=1, mode=fan_in, "
            "distribution=uniform))") in proc.stdout, proc.stdout
    assert (f"problem: start value of W2:0: OLD draws {TRUNCATED}, NEW draws "
            "truncated_normal(mean=0, stddev=0.01) [32, 10] float32") in proc.stdout, proc.stdout
    keys = {entry["name"]: entry["key"] for entry in report["initial"]}
    loaded = {entry["key"]: entry["loaded"] for entry in report["draws"]}
    assert loaded[keys["W1:0"]] is False and loaded[keys["W2:0"]] is False and len(loaded) == 4, loaded
    # default (OLD's values loaded): a normal for the truncated normal, which the statistics pass
    normal = _edited(NEW, [("tf.random.truncated_normal([32, 10]", "tf.random.normal([32, 10]")],
                     tmp_path / "mlp_normal_tf2.py")
    proc, report = _parity(OLD, normal, tmp_path)
    assert proc.returncode == 1, tail(proc.stdout + proc.stderr, 40)
    assert report["optimizers"][0]["first_divergent_step"] is None  # the steps start from OLD's values
    entry = next(e for e in report["start_distribution"] if e["name"] == "W2:0")
    assert same_distribution(entry["old"], entry["new"])  # 0.088 against 0.1: inside the statistics' bounds
    assert (f"start values of W2:0: NEW's own initializer draws from another distribution than OLD's: OLD draws "
            f"{TRUNCATED}, NEW draws normal(mean=0, stddev=0.1) [32, 10] float32") in proc.stdout, proc.stdout
    assert "start values of dense" not in proc.stdout

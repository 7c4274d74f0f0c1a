"""fixtures/legacy: every TF 1.x recipe script (R1-R11) runs unmodified under `tf1clip run`.

Real TensorFlow in real subprocesses, no mocks. Two kinds of tests:

* each fixture script is run: it exits 0, and the numbers it prints obey its recipe (clipped
  norms <= the threshold, clipped == min(raw, threshold), the clip acts on the first step, ...);
* for each recipe, a test-only TF1 script makes one plain-SGD step with the recipe's own
  clipping code on a tiny model, and the variables afterwards must equal the clipped update
  computed by hand in numpy (atol 1e-6). The model has an embedding whose gradient is an
  IndexedSlices with two rows [3, 0] at the same index: TF1 clips on `.values` (norm
  sqrt(18)), not on the dense gradient (norm 6), and the data are chosen so that every
  wrong reading (dense vs sparse, per tensor vs global) gives a visibly different answer.
"""
import json
import math
import re
import textwrap

import numpy as np
import pytest

from conftest import FIXTURES, make_mnist, run_tf1clip, tail

LEGACY = FIXTURES / "legacy"
SCRIPTS = sorted(p.name for p in LEGACY.glob("*.py"))
RECIPE_FILES = {
    "R1": "r01_clip_by_value.py", "R2": "r02_clip_by_global_norm.py", "R3": "r03_clip_by_norm.py",
    "R4": "r04_contrib_clip_gradients_by_norm.py", "R5": "r05_keras_clipvalue.py",
    "R6": "r06_lstm_text_classifier.py", "R7": "r07_mnist_mlp.py",
    "R8": "r08_tf_gradients_global_norm_decay.py", "R9": "r09_optimize_loss.py",
    "R10": "r10_slim_create_train_op.py", "R11": "r11_minimize_no_clip.py",
}
TOL = 1e-5  # printed with 6 decimals


# ---------------------------------------------------------------------------------------
# helpers


def parse(stdout):
    """`key=value ...` lines -> (step records, other keys); a comma list becomes a list."""
    steps, other = [], {}
    for line in stdout.splitlines():
        pairs = [tok.split("=", 1) for tok in line.split() if "=" in tok]
        if not pairs or len(pairs) != len(line.split()):
            continue  # not one of the script's key=value lines (e.g. "Extracting ...")
        record = {k: [float(x) for x in v.split(",")] if "," in v else float(v) for k, v in pairs}
        if "step" in record or "epoch" in record:
            steps.append(record)
        else:
            other.update(record)
    return steps, other


def close(a, b, tol=TOL):
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


# ---------------------------------------------------------------------------------------
# per-fixture checks on the printed numbers


def check_r01(steps, other):
    for s in steps:
        assert s["clipped_max"] <= 1.0 + TOL, s
        assert close(s["clipped_max"], min(s["raw_max"], 1.0)), s
    assert steps[0]["raw_max"] > 1.0  # the clip acts on the first step


def check_r02(steps, other):
    for s in steps:
        assert s["clipped_norm"] <= 5.0 + TOL, s
        assert close(s["clipped_norm"], min(s["global_norm"], 5.0)), s
    assert steps[0]["global_norm"] > 5.0


def check_per_tensor(steps, clip, raw_key="raw_norms", out_key="clipped_norms", rtol=TOL):
    for s in steps:
        assert len(s[raw_key]) == len(s[out_key]) >= 2, s
        for raw, out in zip(s[raw_key], s[out_key]):
            assert out <= clip * (1 + rtol) + rtol, s
            assert math.isclose(out, min(raw, clip), rel_tol=rtol, abs_tol=rtol), s
    assert max(steps[0][raw_key]) > clip  # (a global clip would give out = raw * c / global)


def check_r03(steps, other):
    check_per_tensor(steps, 5.0)


def check_r04(steps, other):
    # Adam's m after step 1 is (1 - beta1) * g_clipped; afterwards |m_t| <= 5 * (1 - 0.9^t).
    assert steps[0]["global_norm"] > 5.0
    assert close(steps[0]["m_norm"], 0.1 * min(steps[0]["global_norm"], 5.0)), steps[0]
    for t, s in enumerate(steps, start=1):
        assert s["m_norm"] <= 5.0 * (1 - 0.9 ** t) + TOL, s


def check_r05(steps, other):
    assert steps[0]["raw_max"] > 1.0
    assert close(steps[0]["m_max"], 0.1 * min(steps[0]["raw_max"], 1.0)), steps[0]
    for t, s in enumerate(steps, start=1):
        assert s["m_max"] <= 1.0 - 0.9 ** t + TOL, s


def check_r06(steps, other):
    flags = other["sparse"]
    assert flags[0] == 1 and sum(flags) == 1, "the embedding gradient must be an IndexedSlices"
    check_per_tensor(steps, 5.0)
    assert all(math.isfinite(s["loss"]) for s in steps)


def check_r07(steps, other):
    assert [(s["epoch"], s["batch"]) for s in steps] == [(e, b) for e in (0, 1) for b in range(5)]
    for s in steps:
        assert s["clipped_max"] <= 5.0 + TOL, s
        assert close(s["clipped_max"], min(s["raw_max"], 5.0)), s
    assert steps[0]["raw_max"] > 5.0
    assert steps[-1]["loss"] < steps[0]["loss"]
    assert 0.0 <= other["test_accuracy"] <= 1.0


def check_r08(steps, other):
    for i, s in enumerate(steps):
        assert s["global_step"] == i + 1
        assert close(s["lr"], 0.1 * 0.5 ** (i // 3)), s  # staircase decay every 3 steps
        assert s["clipped_norm"] <= 1.0 + TOL, s
        assert close(s["clipped_norm"], min(s["global_norm"], 1.0)), s
    assert steps[0]["global_norm"] > 1.0


def check_r09(steps, other):
    for i, s in enumerate(steps):
        assert s["global_step"] == i + 1
        assert math.isclose(s["update_norm"], min(s["global_norm"], 2.5), rel_tol=1e-4), s
    assert steps[0]["global_norm"] > 2.5


def check_r09b(steps, other):
    for i, s in enumerate(steps):
        assert s["global_step"] == i + 1
    check_per_tensor(steps, 1.0, out_key="update_norms", rtol=1e-4)


def check_r10(steps, other):
    flags = other["sparse"]
    assert flags[0] == 1 and sum(flags) == 1, "the embedding gradient must be an IndexedSlices"
    for s in steps:
        raw, dense, update = s["raw_norms"], s["dense_norms"], s["update_norms"]
        for r, u in zip(raw[1:], update[1:]):  # dense gradients: clipped to norm 4
            assert math.isclose(u, min(r, 4.0), rel_tol=1e-4, abs_tol=1e-4), s
        # embedding: scaled by min(1, 4 / norm(.values)), then rows summed per index
        assert math.isclose(update[0], dense[0] * min(1.0, 4.0 / raw[0]), rel_tol=1e-4), s
    assert max(steps[0]["raw_norms"]) > 4.0
    # the data tell the two readings apart: clipping the dense gradient would give min(dense, 4)
    assert any(abs(s["update_norms"][0] - min(s["dense_norms"][0], 4.0)) > 0.1 for s in steps)


def check_r11(steps, other):
    assert [s["global_step"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[-1]["loss"] < steps[0]["loss"]


CHECKS = {
    "r01_clip_by_value.py": check_r01,
    "r02_clip_by_global_norm.py": check_r02,
    "r03_clip_by_norm.py": check_r03,
    "r04_contrib_clip_gradients_by_norm.py": check_r04,
    "r05_keras_clipvalue.py": check_r05,
    "r06_lstm_text_classifier.py": check_r06,
    "r07_mnist_mlp.py": check_r07,
    "r08_tf_gradients_global_norm_decay.py": check_r08,
    "r09_optimize_loss.py": check_r09,
    "r09b_optimize_loss_callable.py": check_r09b,
    "r10_slim_create_train_op.py": check_r10,
    "r11_minimize_no_clip.py": check_r11,
}


def test_every_recipe_has_a_fixture_listed_in_the_readme():
    readme = (LEGACY / "README.md").read_text()
    for recipe, name in RECIPE_FILES.items():
        assert (LEGACY / name).is_file(), f"{recipe}: {name} missing"
    for name in SCRIPTS:
        assert f"`{name}`" in readme, f"{name} is not listed in fixtures/legacy/README.md"
        assert name in CHECKS, f"{name}: add its number checks to CHECKS"


@pytest.mark.parametrize("name", SCRIPTS)
def test_fixture_runs_and_clips(name, tmp_path):
    """(That it prints the same numbers run after run is held by tests/test_migrate_legacy.py, which
    compares this run's output with its compat migration's, line for line.)"""
    script = LEGACY / name
    source = script.read_text()
    assert "import tensorflow as tf" in source and "tf1clip" not in source  # plain TF1 code
    if name.startswith("r07"):
        make_mnist().write_mnist(tmp_path / "MNIST_data")
    runs = [run_tf1clip("run", script, cwd=tmp_path, timeout=120)]
    assert runs[0].returncode == 0, f"{name} exited {runs[0].returncode}:\n{tail(runs[0].stderr)}"
    steps, other = parse(runs[0].stdout)
    assert len(steps) >= 5 and "checksum" in other, runs[0].stdout
    assert all(math.isfinite(s["loss"]) for s in steps) and math.isfinite(other["checksum"])
    CHECKS[name](steps, other)
    if name.startswith("r11"):  # frozen_checksum is printed before and after training
        frozen = re.findall(r"^frozen_checksum=(\S+)$", runs[0].stdout, re.M)
        assert len(frozen) == 2 and frozen[0] == frozen[1], frozen


def test_r07_takes_the_epoch_count_from_argv(tmp_path):
    make_mnist().write_mnist(tmp_path / "MNIST_data")
    proc = run_tf1clip("run", LEGACY / "r07_mnist_mlp.py", "1", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, tail(proc.stderr)
    steps, other = parse(proc.stdout)
    assert [s["epoch"] for s in steps] == [0.0] * 5 and "checksum" in other


# ---------------------------------------------------------------------------------------
# one SGD step with each recipe's clipping code == the clipped update computed by hand

LR = 0.1
HAND_SCRIPT = textwrap.dedent('''
    """Test-only: one plain-SGD step with each recipe's clipping code; prints the variables."""
    import json
    import sys
    import traceback

    import numpy as np
    import tensorflow as tf
    import tensorflow.contrib.slim as slim

    D = np.load(sys.argv[1])
    LR = 0.1


    def model(unused=False, use_resource=False):
        x, y = tf.constant(D["x"]), tf.constant(D["y"])
        w = tf.get_variable("w", initializer=tf.constant(D["w"]), use_resource=use_resource)
        b = tf.get_variable("b", initializer=tf.constant(D["b"]), use_resource=use_resource)
        emb = tf.get_variable("emb", initializer=tf.constant(D["emb"]), use_resource=use_resource)
        if unused:  # its gradient is None
            tf.get_variable("unused", initializer=tf.constant(D["unused"]))
        rows = tf.nn.embedding_lookup(emb, D["ids"])  # gradient: IndexedSlices, repeated index
        return 0.5 * tf.reduce_sum(tf.square(tf.matmul(x, w) + b - y)) + tf.reduce_sum(rows * D["a"])


    def r01(loss):
        optimizer = tf.train.GradientDescentOptimizer(LR)
        gvs = optimizer.compute_gradients(loss)
        capped_gvs = [(tf.clip_by_value(grad, -1., 1.), var) for grad, var in gvs]
        return optimizer.apply_gradients(capped_gvs)


    def r02(loss):
        optimizer = tf.train.GradientDescentOptimizer(LR)
        gradients, variables = zip(*optimizer.compute_gradients(loss))
        gradients, _ = tf.clip_by_global_norm(gradients, 5.0)
        return optimizer.apply_gradients(zip(gradients, variables))


    def r03(loss):
        optimizer = tf.train.GradientDescentOptimizer(LR)
        gradients, variables = zip(*optimizer.compute_gradients(loss))
        gradients = [
            None if gradient is None else tf.clip_by_norm(gradient, 5.0)
            for gradient in gradients]
        return optimizer.apply_gradients(zip(gradients, variables))


    def r04(loss):
        original_optimizer = tf.train.GradientDescentOptimizer(learning_rate=LR)
        optimizer = tf.contrib.estimator.clip_gradients_by_norm(original_optimizer, clip_norm=5.0)
        return optimizer.minimize(loss)


    def r05(loss):
        optimizer = tf.keras.optimizers.SGD(learning_rate=LR, clipvalue=1.0)
        return optimizer.get_updates(loss, tf.trainable_variables())


    def r06(loss):
        optimizer = tf.train.GradientDescentOptimizer(LR)
        grads_and_vars = optimizer.compute_gradients(loss)
        clipped_grads_and_vars = [(tf.clip_by_norm(grad, 5.0), var) for grad, var in grads_and_vars]
        return optimizer.apply_gradients(clipped_grads_and_vars)


    def r07(loss):
        clip_value = 5.0
        optimizer = tf.train.GradientDescentOptimizer(LR)
        grads_and_vars = optimizer.compute_gradients(loss)
        clipped_grads_and_vars = [(tf.clip_by_value(grad, -clip_value, clip_value), var)
                                  for grad, var in grads_and_vars]
        return optimizer.apply_gradients(clipped_grads_and_vars)


    def r08(loss):
        gs = tf.train.get_or_create_global_step()
        lr = tf.train.exponential_decay(LR, gs, decay_steps=1, decay_rate=0.5, staircase=True)
        tvars = tf.trainable_variables()
        grads = tf.gradients(loss, tvars)
        grads, _ = tf.clip_by_global_norm(grads, 1.0)
        return tf.train.GradientDescentOptimizer(lr).apply_gradients(zip(grads, tvars), global_step=gs)


    def r09(loss):
        return tf.contrib.layers.optimize_loss(
            loss, tf.train.get_or_create_global_step(), LR, "SGD", clip_gradients=2.5)


    def r09b(loss):
        def clip_each(grads_and_vars):
            return [(tf.clip_by_norm(g, 1.0), v) for g, v in grads_and_vars]
        return tf.contrib.layers.optimize_loss(
            loss, tf.train.get_or_create_global_step(), LR, tf.train.GradientDescentOptimizer,
            clip_gradients=clip_each)


    def r10(loss):
        optimizer = tf.train.GradientDescentOptimizer(learning_rate=LR)
        return slim.learning.create_train_op(loss, optimizer, clip_gradient_norm=4.0)


    def r11(loss):
        gs = tf.train.get_or_create_global_step()
        var_list = [v for v in tf.trainable_variables() if v.op.name != "emb"]
        return tf.train.GradientDescentOptimizer(LR).minimize(loss, var_list=var_list, global_step=gs)


    OPTIONS = {"r02": {"unused": True}, "r03": {"unused": True}, "r04": {"unused": True},
               "r05": {"use_resource": True}}

    for name in sys.argv[2:]:
        try:
            with tf.Graph().as_default():
                train_op = globals()[name](model(**OPTIONS.get(name, {})))
                gs = tf.train.get_global_step()
                with tf.Session() as sess:
                    sess.run(tf.global_variables_initializer())
                    sess.run(train_op)
                    after = {v.op.name: sess.run(v).tolist() for v in tf.trainable_variables()}
                    step = None if gs is None else int(sess.run(gs))
            print(json.dumps({"recipe": name, "after": after, "global_step": step}))
        except Exception:
            print(json.dumps({"recipe": name, "error": traceback.format_exc()}))
''')


def hand_data():
    rng = np.random.RandomState(0)
    f32 = np.float32
    return {
        "x": rng.randn(4, 3).astype(f32),
        "y": (2.0 * rng.randn(4, 2)).astype(f32),
        "w": (0.1 * rng.randn(3, 2)).astype(f32),
        "b": np.array([0.5, -0.5], f32),
        "emb": (0.1 * rng.randn(4, 2)).astype(f32),
        "unused": np.ones(2, f32),
        "ids": np.array([0, 0], np.int32),          # two rows at the same index ...
        "a": np.array([[3.0, 0.0], [3.0, 0.0]], f32),  # ... each with gradient [3, 0]
    }


def test_hand_data_put_each_threshold_between_the_tensors():
    """|g_w| = 8.4 > 5 > |g_b| = 4.96 > 4 and |emb .values| = 4.24 < 5 < dense 6: per-tensor
    clips of 5 and 4 cut some tensors and not others, on either side of the sparse/dense gap."""
    g = hand_gradients(hand_data())
    norm_w, norm_b = np.linalg.norm(g["w"]), np.linalg.norm(g["b"])
    assert 8.0 < norm_w and 4.5 < norm_b < 5.0, (norm_w, norm_b)
    assert np.abs(g["w"]).min() < 1.0 < np.abs(g["w"]).max() and np.abs(g["w"]).max() > 5.0


def hand_gradients(d):
    """float64 gradients of the model: dense for w and b, (indices, values) for emb."""
    x, y, w, b = (d[k].astype(np.float64) for k in ("x", "y", "w", "b"))
    r = x @ w + b - y
    return {"w": x.T @ r, "b": r.sum(axis=0), "emb": (d["ids"], d["a"].astype(np.float64))}


def densify(grad, shape):
    if isinstance(grad, tuple):
        out = np.zeros(shape)
        np.add.at(out, grad[0], grad[1])
        return out
    return grad


def values(grad):
    return grad[1] if isinstance(grad, tuple) else grad


def with_values(grad, new):
    return (grad[0], new) if isinstance(grad, tuple) else new


def clip(grads, mode, c, shapes, dense_reading=False):
    """The recipe's clip in numpy. dense_reading: the wrong reading, on the dense gradient."""
    if dense_reading:
        grads = {k: densify(g, shapes[k]) for k, g in grads.items()}
    if mode == "none":
        return grads
    if mode == "value":
        return {k: with_values(g, np.clip(values(g), -c, c)) for k, g in grads.items()}
    if mode == "norm":
        return {k: with_values(g, values(g) * c / max(np.linalg.norm(values(g)), c)) for k, g in grads.items()}
    if mode == "global":
        norm = math.sqrt(sum(np.sum(values(g) ** 2) for g in grads.values()))
        return {k: with_values(g, values(g) * c / max(norm, c)) for k, g in grads.items()}
    raise ValueError(mode)


def expected_after(d, mode, c, var_list=("w", "b", "emb"), dense_reading=False):
    shapes = {k: d[k].shape for k in ("w", "b", "emb")}
    grads = {k: g for k, g in hand_gradients(d).items() if k in var_list}
    clipped = clip(grads, mode, c, shapes, dense_reading)
    after = {k: d[k].astype(np.float64) for k in shapes}
    for k, g in clipped.items():
        after[k] = after[k] - LR * densify(g, shapes[k])
    return after


# recipe -> (mode, threshold, wrong readings that the data must tell apart)
HAND = {
    "r01": ("value", 1.0, [("value", 1.0, True)]),
    "r02": ("global", 5.0, [("global", 5.0, True), ("norm", 5.0, False)]),
    "r03": ("norm", 5.0, [("norm", 5.0, True), ("global", 5.0, False)]),
    "r04": ("global", 5.0, [("global", 5.0, True), ("norm", 5.0, False)]),
    "r05": ("value", 1.0, [("value", 1.0, True)]),
    "r06": ("norm", 5.0, [("norm", 5.0, True), ("global", 5.0, False)]),
    "r07": ("value", 5.0, [("value", 5.0, True), ("none", 0.0, False)]),
    "r08": ("global", 1.0, [("global", 1.0, True), ("norm", 1.0, False)]),
    "r09": ("global", 2.5, [("global", 2.5, True), ("norm", 2.5, False)]),
    "r09b": ("norm", 1.0, [("norm", 1.0, True), ("global", 1.0, False)]),
    "r10": ("norm", 4.0, [("norm", 4.0, True), ("global", 4.0, False)]),
    "r11": ("none", 0.0, []),
}


@pytest.fixture(scope="module")
def hand_results(tmp_path_factory):
    """Runs the test-only script once (all recipes, one graph each) under `tf1clip run`."""
    folder = tmp_path_factory.mktemp("hand")
    np.savez(folder / "data.npz", **hand_data())
    (folder / "one_step.py").write_text(HAND_SCRIPT)
    proc = run_tf1clip("run", folder / "one_step.py", folder / "data.npz", *HAND, cwd=folder, timeout=120)
    assert proc.returncode == 0, tail(proc.stderr)
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            results[record["recipe"]] = record
    return results


@pytest.mark.parametrize("recipe", sorted(HAND))
def test_first_sgd_step_equals_hand_computed_clipped_update(recipe, hand_results):
    d = hand_data()
    mode, c, wrong_readings = HAND[recipe]
    result = hand_results[recipe]
    assert "error" not in result, result.get("error")
    var_list = ("w", "b") if recipe == "r11" else ("w", "b", "emb")
    want = expected_after(d, mode, c, var_list)
    got = {k: np.array(v) for k, v in result["after"].items()}
    for k in ("w", "b", "emb"):
        np.testing.assert_allclose(got[k], want[k], rtol=0, atol=1e-6, err_msg=f"{recipe}: {k}")
    if "unused" in got:  # a variable without gradient: kept, not clipped, not moved
        np.testing.assert_array_equal(got["unused"], d["unused"])
    if recipe in ("r08", "r09", "r09b", "r11"):
        assert result["global_step"] == 1
    if recipe == "r11":
        np.testing.assert_array_equal(got["emb"], d["emb"])  # not in var_list
    # the test can fail: every wrong reading moves some variable by more than 1e-4
    for wrong in wrong_readings:
        other = expected_after(d, *wrong[:2], var_list, dense_reading=wrong[2])
        assert max(np.abs(other[k] - want[k]).max() for k in want) > 1e-4, (recipe, wrong)


def test_hand_data_discriminates_sparse_from_dense_norm():
    """The repeated index makes the two norms differ as DESIGN.md says: sqrt(18) vs 6."""
    g = hand_gradients(hand_data())["emb"]
    assert math.isclose(np.linalg.norm(values(g)), math.sqrt(18))
    assert math.isclose(np.linalg.norm(densify(g, (4, 2))), 6.0)

"""How `tf1clip parity` judges a variable's final value: against the largest |value| it had on
either side, before any step or at the end (compare.py, docs/parity.md "Parity tolerances").
float32 rounds each update to the magnitude it passed through: a bias whose Adam steps of 0.05
cancel to 1.5e-4 carries the rounding of 0.05, which a relative error against 1.5e-4 would
call a difference. The recorder reads that magnitude in each of its three paths (a TF 1.x
session, an eager loop, a tf.function step); a real difference is still caught. What each side
printed is reported beside it (`printed.py`), not judged."""
import json

import numpy as np
import pytest

from conftest import run_tf1clip
from tf1clip.parity import compare

OLD = """
import numpy as np
import tensorflow as tf
c = tf.placeholder(tf.float32, [2])
b = tf.Variable(tf.zeros([2]))
loss = tf.reduce_sum(b * c)
train_op = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
C = np.array([[0.5, -0.25], [-0.4999, 0.25]], np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for row in C:
        sess.run(train_op, {c: row})
    print(sess.run(b))
"""

NEW = """
import numpy as np
import tensorflow as tf
b = tf.Variable(tf.zeros([2]))
optimizer = tf.keras.optimizers.SGD(1.0)
C = np.array([[0.5, -0.25], [{second}, 0.25]], np.float32)

{decorator}
def step(c):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(b * c)
    optimizer.apply_gradients(zip(tape.gradient(loss, [b]), [b]))
    return loss

for row in C:
    step(row)
print(b.numpy())
"""


@pytest.mark.parametrize("decorator", ["", "@tf.function"])
def test_each_side_records_the_largest_magnitude_before_a_step(decorator, tmp_path):
    # b: [0, 0] -> [-0.5, 0.25] -> [-1e-4, 0]: before the second step its largest |value| is 0.5
    (tmp_path / "old.py").write_text(OLD)
    (tmp_path / "new.py").write_text(NEW.format(second=-0.4999, decorator=decorator))
    proc = run_tf1clip("parity", "old.py", "new.py", "--keep", "--json", "out.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    result = json.loads((tmp_path / "out.json").read_text())
    for side in ("old", "new"):
        record = json.loads((tmp_path / result["kept"][side]).parent.joinpath("record", "record.json").read_text())
        (variable,) = record["optimizers"][0]["variables"]
        assert variable["scale"] == 0.5
    (weight,) = result["optimizers"][0]["weights"]
    assert weight["ok"] and weight["seen"] == 0.5
    # what each side printed (reported, not judged): the same final b
    assert result["printed"]["equal"] and result["printed"]["lines"] == [1, 1]
    assert "printed (reported, not judged): 1 lines, the same on both sides" in proc.stdout


def test_a_real_difference_on_a_variable_near_zero_is_still_caught(tmp_path):
    # the second step moved by 2e-4: b ends at 1e-4 instead of -1e-4, beyond 1e-4 * 0.5
    (tmp_path / "old.py").write_text(OLD)
    (tmp_path / "new.py").write_text(NEW.format(second=-0.5001, decorator="@tf.function"))
    proc = run_tf1clip("parity", "old.py", "new.py", "--json", "out.json", cwd=tmp_path)
    assert proc.returncode == 1
    (weight,) = json.loads((tmp_path / "out.json").read_text())["optimizers"][0]["weights"]
    assert not weight["ok"] and weight["max_abs_diff"] == pytest.approx(2e-4, rel=1e-3)
    printed = json.loads((tmp_path / "out.json").read_text())["printed"]
    assert not printed["equal"] and printed["first_difference"]["line"] == 1
    assert "printed (reported, not judged): OLD 1 lines, NEW 1; first difference at line 1: OLD '[" in proc.stdout


def _record(final, scale):
    variables = [{"key": "opt0/var0", "name": "b:0", "shape": [3]}]
    if scale is not None:
        variables[0]["scale"] = scale
    return {"optimizers": [{"index": 0, "name": "Adam", "variables": variables,
                            "steps": [{"step": 1, "loss": 1.0, "grad_norm_pre": None, "grad_norm_post": 1.0}]}],
            "final": {"opt0/var0": np.array(final, np.float32)}, "initial": None, "steps": None, "fetched": None}


@pytest.mark.parametrize("scale, passes", [(0.05, True), (None, False), (1.5e-4, False)])
def test_the_scale_is_the_largest_magnitude_seen(scale, passes):
    # a 1.6e-8 difference on a bias of 1.5e-4: 4 roundings of 0.05, or a relative 1e-4 of 1.5e-4
    old = _record([1.4851e-4, 1.4851e-4, -2e-6], scale)
    new = _record([1.4851e-4 + 1.6e-8, 1.4851e-4, -2e-6], scale)
    (weight,) = compare.compare(old, new)["optimizers"][0]["weights"]
    assert weight["ok"] is passes


def test_a_difference_beyond_the_scale_fails():
    old, new = _record([0.01, 0.0, 0.0], 0.05), _record([0.01 + 1e-5, 0.0, 0.0], 0.05)
    (weight,) = compare.compare(old, new)["optimizers"][0]["weights"]
    assert not weight["ok"] and weight["max_abs_diff"] == pytest.approx(1e-5, rel=1e-2)

"""NumPy 2 semantics that change a TF 1.x script's meaning, not only its names.

- A ragged nested sequence given to a function that makes an array of its argument
  (`np.nan_to_num` of a tuple, `np.stack` of ragged items): NumPy < 1.24 made an object array,
  NumPy 2 raises. `fixtures/runtime/ragged_nan_to_num.py`.
- NEP 50: `np.max(uint8_labels) + 1` was int64 under NumPy 1.x, is uint8 under NumPy 2, and
  TensorFlow refuses it as a shape. `fixtures/runtime/uint8_label_shapes.py`.

Each fixture runs under `tf1clip run` with the numbers NumPy 1.x semantics give, recomputed here
by hand; its `--to compat` migration prints the same lines under plain Python, and `tf1clip
parity` passes between the two. Real subprocesses, real NumPy 2 and TensorFlow.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import FIXTURES, run_python, run_tf1clip, tail
from tf1clip.legacy_numpy import numpy_view
from tf1clip.migrate.engine import migrate_text
from tf1clip.numpy_removed import PROMOTION_HELPER, RAGGED_HELPER, RAGGED_MAKERS
from tf1clip.numpy_shapes import narrow_integer

RAGGED = FIXTURES / "runtime" / "ragged_nan_to_num.py"
UINT8 = FIXTURES / "runtime" / "uint8_label_shapes.py"


def _notes(stderr):
    return [line for line in stderr.splitlines() if line.startswith("tf1clip: ")]


def _run_migrate_and_parity(fixture, tmp_path):
    """(tf1clip run's stdout and stderr, the migrated text): the migration printed the same lines
    under plain Python and passed parity against the original."""
    ran = run_tf1clip("run", fixture, cwd=tmp_path)
    assert ran.returncode == 0, tail(ran.stderr)
    assert run_tf1clip("migrate", fixture, "--to", "compat", "--outtree", tmp_path / "out").returncode == 0
    migrated = tmp_path / "out" / fixture.name
    plain = run_python(migrated, cwd=tmp_path)
    assert plain.returncode == 0, tail(plain.stderr)
    assert plain.stdout == ran.stdout
    parity = run_tf1clip("parity", fixture, migrated, "--steps", "2", cwd=tmp_path)
    assert parity.returncode == 0 and "PASS" in parity.stdout, tail(parity.stdout + parity.stderr)
    return ran, migrated.read_text()


def _ragged_by_hand():
    """NumPy 1.x's run of ragged_nan_to_num.py: columns scaled by hand, the constant column's
    0/0 made 0, logistic regression from zeros by full-batch gradient descent (lr 0.5)."""
    col0 = [(v - 1.0) / 5.0 for v in (1, 2, 3, 4, 5, 6)]
    col1 = [(v - 10.0) / 50.0 for v in (10, 30, 20, 50, 40, 60)]
    rows = list(zip(col0, col1))
    labels = [0, 0, 0, 1, 1, 1]
    w0 = w1 = b = 0.0
    losses = []
    for _ in range(4):
        z = [w0 * a + w1 * c + b for a, c in rows]
        p = [1 / (1 + np.exp(-v)) for v in z]
        losses.append(sum(np.log1p(np.exp(v)) - t * v for v, t in zip(z, labels)) / 6)
        g = [(q - t) / 6 for q, t in zip(p, labels)]
        w0 -= 0.5 * sum(e * a for e, (a, _) in zip(g, rows))
        w1 -= 0.5 * sum(e * c for e, (_, c) in zip(g, rows))
        b -= 0.5 * sum(g)
    return losses, (w0, w1)


def test_ragged_tuple_into_nan_to_num_runs_as_under_numpy1(tmp_path):
    ran, migrated = _run_migrate_and_parity(RAGGED, tmp_path)
    lines = ran.stdout.splitlines()
    # nan_to_num of the (matrix, minima, maxima) tuple: an object array, returned as it was
    assert lines[0] == "nan left by nan_to_num of the tuple 6"
    assert lines[1] == "scaled new row [[0.5, 0.5, 0.0]]"  # (3.5 - 1) / 5, (35 - 10) / 50, 0/0 -> 0
    assert lines[2] == "stacked (2, 2) object [3, 1, 1, 2]"  # each ragged item an object array
    losses, (w0, w1) = _ragged_by_hand()
    assert losses[0] == pytest.approx(np.log(2))
    for k, loss in enumerate(losses):
        words = lines[3 + k].split()
        assert words[:2] == ["step", str(k)] and float(words[3]) == pytest.approx(loss, abs=2e-5)
    assert lines[7] == f"weights {[round(float(w0), 4), round(float(w1), 4), 0.0]}"
    # the runtime names each line where NumPy 2 would have raised; the migration wraps them
    assert [n.split(":")[2] for n in _notes(ran.stderr)] == ["27", "30", "33"]
    assert f"x_train, train_min, train_max = {RAGGED_HELPER}(np.nan_to_num, normalize_cols(x_vals))" in migrated
    assert f"batches = {RAGGED_HELPER}(np.stack, [[[1, 2, 3], [4]], [[5], [6, 7]]])" in migrated
    undone = tmp_path / "undone.py"
    undone.write_text(migrated.replace(f"{RAGGED_HELPER}(np.nan_to_num, normalize_cols(x_vals))",
                                       "np.nan_to_num(normalize_cols(x_vals))"))
    failed = run_python(undone, cwd=tmp_path)
    assert failed.returncode != 0 and "inhomogeneous" in failed.stderr  # what NumPy 2 does without it


def _softmax_by_hand(bias, steps=3):
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.5], [0.5, 2.0], [1.5, 1.5]])
    onehot = np.eye(3)[[0, 1, 2, 0, 1, 2]]
    w, b = np.zeros((2, 3)), np.array(bias)
    losses = []
    for _ in range(steps):
        z = x @ w + b
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        losses.append(float(-(onehot * np.log(p)).sum(1).mean()))
        g = (p - onehot) / len(x)
        w, b = w - 0.5 * x.T @ g, b - 0.5 * g.sum(0)
    return losses, x[:2] @ w + b


def test_uint8_label_count_into_shapes_runs_as_under_numpy1(tmp_path):
    ran, migrated = _run_migrate_and_parity(UINT8, tmp_path)
    lines = ran.stdout.splitlines()
    assert lines[0] == "classes 3 last label index 2"  # max 2 + 1; 3 - 1
    bias = [float(v) for v in lines[1].removeprefix("bias [").rstrip("]").split(", ")]
    losses, logits = _softmax_by_hand(bias)
    for k, loss in enumerate(losses):
        words = lines[2 + k].split()
        assert words[:2] == ["step", str(k)] and float(words[3]) == pytest.approx(loss, abs=2e-5)
    assert lines[5] == f"ranked {np.argsort(-logits, axis=1).tolist()}"
    assert [n.split(":")[2] for n in _notes(ran.stderr)] == ["21", "23", "25"]
    assert all("NumPy uint8 value given to TensorFlow" in n for n in _notes(ran.stderr))
    assert f"n_classes = {PROMOTION_HELPER}(np.max(y_train)) + 1\n" in migrated
    undone = tmp_path / "undone.py"
    undone.write_text(migrated.replace(f"{PROMOTION_HELPER}(np.max(y_train)) + 1", "np.max(y_train) + 1"))
    failed = run_python(undone, cwd=tmp_path)
    assert failed.returncode != 0 and "DataType uint8 not in list of allowed values" in failed.stderr


def _migrated_helpers():
    text = ("import numpy as np\n\nx = np.nan_to_num(f(m))\ny = np.stack(g(m))\nn = np.max(labels) + 1\n")
    out = migrate_text(text, "helpers.py").text
    scope: dict = {}
    exec(out.split("\nx = ")[0], scope)  # noqa: S102 - the two functions the migration writes
    return scope[RAGGED_HELPER], scope[PROMOTION_HELPER]


def test_runtime_and_migration_make_the_same_arrays():
    """For every function of the family, the runtime's NumPy view and the migrated file's helper
    give the same array (object arrays of the same pieces) on ragged and on regular data."""
    ragged_helper, promote = _migrated_helpers()
    legacy = numpy_view()
    m = np.arange(6.0).reshape(3, 2)
    values = [(m, np.ones(2), np.ones(2)), [[1, 2], [3]], [[[1, 2], [3]], [[4, 5], [6]]], [[1.5, 2.5], [3.5, 4.5]]]
    checked = 0
    for name in RAGGED_MAKERS:
        for value in values:
            try:
                old = getattr(legacy, name)(value)
            except (ValueError, TypeError) as exc:
                with pytest.raises(type(exc)):
                    ragged_helper(getattr(np, name), value)
                continue
            new = ragged_helper(getattr(np, name), value)
            assert type(new) is type(old) and np.shape(new) == np.shape(old), (name, value)
            if isinstance(old, np.ndarray):
                assert new.dtype == old.dtype and [repr(a) for a in np.ravel(new)] == [repr(a) for a in np.ravel(old)]
            else:
                assert new == old
            checked += 1
    assert checked > 2 * len(RAGGED_MAKERS)
    # NumPy 1.x's object array of the cookbook's tuple: the three arrays, NaN not replaced
    made = legacy.nan_to_num((np.array([[np.nan, 1.0]]), np.zeros(2), np.ones(2)))
    assert made.dtype == object and made.shape == (3,) and np.isnan(made[0][0, 0])
    # NEP 50: the helper makes narrow integer scalars int64, as NumPy 1.x's promotion did
    with np.errstate(over="ignore"):
        assert (np.uint8(255) + 1) == 0  # NumPy 2 (it warns of the overflow): what the helper prevents
    assert promote(np.uint8(255)) + 1 == 256 and (promote(np.uint8(2)) + 1).dtype == np.int64
    assert (promote(np.int32(2)) + 1).dtype == np.int64
    for kept in (np.float32(2.5), np.int64(3), 7, np.array([1, 2], dtype=np.uint8)):
        assert promote(kept) is kept
    assert narrow_integer(np.uint8(3)) == np.uint8 and narrow_integer([np.uint8(3), np.uint8(1)]) == np.uint8
    assert narrow_integer([3, np.uint8(1)]) is None and narrow_integer(np.array([1], np.uint8)) is None
    assert narrow_integer(np.array(1, np.int16)) == np.int16 and narrow_integer(np.int64(1)) is None

"""`np.array` of a ragged nested sequence: NumPy 1.x's object array, kept by the migration.

NumPy < 1.24 made an object array of a ragged sequence; NumPy 2 raises. `tf1clip run` keeps
the object array for the user's files (tf1clip.legacy_numpy) and the `numpy_ragged` codemod
writes a function that does the same into the migrated file. Checked here against NumPy 2
itself and against arrays written out by hand, on a file with no TensorFlow (a data helper
module), on the parity fixture (fixtures/parity/ragged_batches.py, whose parity against its
migration tests/test_parity_self.py proves) and through the TF2 tier. Real NumPy, real libcst,
real subprocesses.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import FIXTURES, line_of, run_python, run_tf1clip
from tf1clip.legacy_numpy import numpy_view
from tf1clip.migrate.engine import migrate, migrate_text
from tf1clip.numpy_removed import RAGGED_HELPER

FIXTURE = FIXTURES / "parity" / "ragged_batches.py"
CALL = f"{RAGGED_HELPER}(np.array, data)"

DATA_HELPERS = '''\
"""Batches of a dataset, as a text classifier's data helpers write them (no TensorFlow here)."""
import numpy as np

MEAN = np.array([123.68, 116.779, 103.939])
GRID = np.asarray([[1, 2], [3, 4]])


def batch_iter(data, batch_size):
    data = np.array(data)
    for start in range(0, len(data), batch_size):
        yield data[start:start + batch_size]


def rows(sentences):
    return np.asarray([s.split() for s in sentences]), np.array(np.ones(3)), np.array(sentences, dtype=object)
'''


def _helper():
    """The function the codemod writes, taken from a migrated file and run under NumPy 2."""
    out = migrate_text(DATA_HELPERS, "data_helpers.py").text
    scope: dict = {}
    exec(out, scope)  # noqa: S102 - the migrated module under test
    return scope[RAGGED_HELPER], scope


def test_helper_is_numpy1_on_ragged_and_numpy2_on_regular_data():
    helper, _ = _helper()
    ids, labels = np.arange(15).reshape(3, 5), np.eye(2)[[0, 1, 1]]
    pairs = helper(np.array, list(zip(ids, labels)))  # rows of 5 and of 2: ragged
    assert pairs.shape == (3, 2) and pairs.dtype == object
    assert pairs[2, 0].tolist() == [10, 11, 12, 13, 14] and pairs[2, 1].tolist() == [0.0, 1.0]
    rows = helper(np.asarray, [[1, 2], [3]])
    assert rows.shape == (2,) and rows.dtype == object and rows[0] == [1, 2] and rows[1] == [3]
    with pytest.raises(ValueError, match="inhomogeneous"):
        np.array(list(zip(ids, labels)))  # what NumPy 2 does without it
    # regular data: NumPy's own array, dtype and all (dtype=object would have changed it)
    square = helper(np.array, list(zip(ids[:, :2], labels)))
    assert square.shape == (3, 2, 2) and square.dtype == np.float64
    assert helper(np.array, [[1, 2], [3, 4]]).dtype == np.int64
    assert helper(np.array, [1, 2], ndmin=2).shape == (1, 2)  # other keywords pass through
    with pytest.raises(ValueError, match="order"):
        helper(np.array, [[1], []], order="X")  # a ValueError of another kind is NumPy's own
    # the same arrays as `tf1clip run` makes for the original
    legacy = numpy_view()
    for value in (list(zip(ids, labels)), [[1, 2], [3]], [[1.5], [2.5]], [np.arange(3), np.arange(2)]):
        made, old = helper(np.array, value), legacy.array(value)
        assert made.shape == old.shape and made.dtype == old.dtype
        assert [np.asarray(a).tolist() for a in made.ravel()] == [np.asarray(a).tolist() for a in old.ravel()]


def test_module_without_tensorflow_gets_the_helper_once():
    done = migrate_text(DATA_HELPERS, "data_helpers.py")
    out = done.text
    assert out.count(f"def {RAGGED_HELPER}(") == 1
    assert "    data = " + CALL + "\n" in out
    assert f"return {RAGGED_HELPER}(np.asarray, [s.split() for s in sentences])," in out
    # visibly regular, or a dtype given: left as written
    for kept in ("MEAN = np.array([123.68, 116.779, 103.939])", "GRID = np.asarray([[1, 2], [3, 4]])",
                 "np.array(np.ones(3))", "np.array(sentences, dtype=object)"):
        assert kept in out, kept
    assert [(n.rule, n.line) for n in done.notes] == [("numpy_ragged", 9), ("numpy_ragged", 15)]
    # the helper sits after the imports, before the first statement that may call it
    assert out.index(f"def {RAGGED_HELPER}(") < out.index("MEAN = ")
    compile(out, "data_helpers.py", "exec")
    assert migrate_text(out, "data_helpers.py").text == out  # twice is once
    _, module = _helper()
    batches = list(module["batch_iter"](list(zip([[1, 2, 3]] * 5, [[0, 1]] * 5)), 2))
    assert [b.shape for b in batches] == [(2, 2), (2, 2), (1, 2)] and batches[0].dtype == object


def test_a_file_that_binds_the_name_is_left_for_a_human():
    text = f"import numpy as np\n\n{RAGGED_HELPER} = None\n\n\ndef f(data):\n    return np.array(data)\n"
    done = migrate_text(text, "own.py")
    assert done.text == text
    assert [(n.kind, n.line) for n in done.notes] == [("human", 7)]
    assert RAGGED_HELPER in done.notes[0].message


def test_fixture_needs_it_and_its_compat_migration_runs_under_numpy2(tmp_path):
    """The fixture is ragged (its migration with the call put back raises under NumPy 2) and its
    migration trains: six updates printed (its parity is in tests/test_parity_self.py)."""
    proc = run_tf1clip("migrate", FIXTURE, "--to", "compat", "--outtree", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    migrated = (tmp_path / "out" / FIXTURE.name).read_text()
    assert "    data = " + CALL + "\n" in migrated
    ran = run_python(tmp_path / "out" / FIXTURE.name)
    assert ran.returncode == 0, ran.stderr
    assert [line.split()[:2] for line in ran.stdout.splitlines() if line.startswith("step")] == \
        [["step", str(k)] for k in range(1, 7)]
    undone = tmp_path / "undone.py"
    undone.write_text(migrated.replace(CALL, "np.array(data)"))
    failed = run_python(undone)
    assert failed.returncode != 0 and "inhomogeneous" in failed.stderr


def test_tf2_tier_keeps_it_and_reports_on_the_input_lines():
    text = FIXTURE.read_text()
    outcome = migrate(text, FIXTURE.name, to="tf2")
    assert outcome.tier == "tf2" and "    data = " + CALL + "\n" in outcome.text
    lines = text.splitlines()
    by_rule = {}
    for note in outcome.notes:
        by_rule.setdefault(note.rule, set()).add(note.line)
    assert by_rule["numpy_ragged"] == {line_of(text, "data = np.array(data)")}
    # the TF2 tier saw the file with the helper inserted: its notes are moved back to the input
    run_line = line_of(text, "_, value = sess.run(")
    assert run_line in by_rule["tf2"] and max(by_rule["tf2"]) <= len(lines)
    assert all("sess.run" in lines[n.line - 1] for n in outcome.notes if "sess.run of" in n.message)

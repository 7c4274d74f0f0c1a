"""NumPy 2 removals: the table, the runtime's NumPy 1.x names, and the `numpy2` codemod.

The table (`tf1clip/numpy_removed.py`) is checked row by row against NumPy 1.x values written
out by hand here; the runtime (`tf1clip run`) and the codemod (`migrate`) are checked against
each other on a fixture (same output lines, under tf1clip and under plain Python + NumPy 2)
and against hand-computed numbers. Real subprocesses, real NumPy 2, real libcst.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from conftest import FIXTURES, run_python, run_tf1clip
from tf1clip.legacy_numpy import numpy_view
from tf1clip.numpy_removed import ALIASES, BY_HAND, CALLS

FIXTURE = FIXTURES / "runtime" / "numpy1_names.py"

# What each removed name was in NumPy 1.x, written out by hand (not derived from the table).
NUMPY1 = {
    "float": float, "int": int, "bool": bool, "object": object, "str": str, "complex": complex,
    "long": int, "unicode": str,
    "float_": np.float64, "complex_": np.complex128, "cfloat": np.complex128, "singlecomplex": np.complex64,
    "longfloat": np.longdouble, "clongfloat": np.clongdouble, "longcomplex": np.clongdouble,
    "unicode_": np.str_, "string_": np.bytes_, "int0": np.intp, "uint0": np.uintp, "bool8": np.bool_,
    "object0": np.object_, "str0": np.str_, "bytes0": np.bytes_, "void0": np.void,
    "Inf": math.inf, "Infinity": math.inf, "infty": math.inf, "PINF": math.inf, "NINF": -math.inf,
    "PZERO": 0.0, "NZERO": -0.0,
    "rank": np.ndim, "product": np.prod, "cumproduct": np.cumprod, "sometrue": np.any, "alltrue": np.all,
    "round_": np.round, "mat": np.asmatrix, "trapz": np.trapezoid, "row_stack": np.vstack,
    "byte_bounds": np.lib.array_utils.byte_bounds, "format_parser": np.rec.format_parser,
    "DataSource": np.lib.npyio.DataSource, "compare_chararrays": np.char.compare_chararrays,
}


def test_every_alias_row_is_its_numpy1_value():
    assert set(ALIASES) == set(NUMPY1) | {"NaN"}
    for name, row in ALIASES.items():
        value = eval(row.spelling, {"np": np})  # noqa: S307 - the table under test
        if name == "NaN":
            assert math.isnan(value)
        elif name in ("PZERO", "NZERO"):
            assert value == 0.0 and math.copysign(1.0, value) == math.copysign(1.0, NUMPY1[name]), name
        else:
            assert value is NUMPY1[name] or value == NUMPY1[name], name
        with warnings.catch_warnings():  # np.object / np.str: "will be defined as the NumPy scalar"
            warnings.simplefilter("ignore", FutureWarning)
            assert not hasattr(np, name) or name in ("bool", "long", "row_stack"), f"np.{name} is back in NumPy"


def test_call_rows_behave_as_numpy1():
    legacy = numpy_view()
    assert legacy.asscalar(np.array([[2.5]])) == 2.5 and type(legacy.asscalar(np.array([[2.5]]))) is float
    assert legacy.msort(np.array([[3, 1], [1, 2]])).tolist() == [[1, 1], [3, 2]]
    assert legacy.in1d([[1, 5], [7, 2]], [2, 7]).tolist() == [False, False, True, True]
    assert legacy.in1d([1, 5], [5], invert=True).tolist() == [True, False]
    assert legacy.asfarray([1, 2]).dtype == np.float64 and legacy.asfarray([1], np.float32).dtype == np.float32
    assert legacy.asfarray([1], dtype=np.int8).dtype == np.float64  # an exact dtype was replaced by float64
    out = legacy.fromstring(b"\x01\x02\x03\x04", dtype=np.uint8, count=3)
    assert out.tolist() == [1, 2, 3] and out.flags.writeable
    assert legacy.fromstring("1 2", dtype=int, sep=" ").tolist() == [1, 2]  # text mode: NumPy's own
    assert legacy.reshape(np.arange(6), newshape=(2, 3)).shape == (2, 3)
    assert legacy.reshape(a=np.arange(4), newshape=[-1, 1], order="F").shape == (4, 1)
    assert set(CALLS) == {"asscalar", "msort", "in1d", "asfarray", "fromstring"}


def test_ragged_arrays_are_object_arrays_as_before_numpy_1_24(capsys):
    legacy = numpy_view()
    pairs = legacy.array(list(zip([np.arange(3), np.arange(3)], [np.arange(2), np.arange(2)])))
    assert pairs.shape == (2, 2) and pairs.dtype == object and pairs[1, 0].tolist() == [0, 1, 2]
    rows = legacy.asarray([[1, 2], [3]])
    assert rows.shape == (2,) and rows.dtype == object and rows[1] == [3]
    assert legacy.array([[1, 2], [3, 4]]).dtype == np.int64  # regular input: NumPy's own result
    with pytest.raises(ValueError):
        legacy.array([[1, 2], [3]], dtype=float)  # a dtype given: NumPy 1.x raised too
    with pytest.raises(ValueError):
        np.array([[1, 2], [3]])  # the real module is unchanged
    # each line that made a ragged array is named once on stderr, with what the migration does there
    notes = capsys.readouterr().err.splitlines()
    assert [n.split(": np.")[1].split(" of")[0] for n in notes] == ["array", "asarray"]
    assert all(n.startswith("tf1clip: ") and "test_numpy2.py:" in n and "tf1clip migrate keeps the object array (_object_if_ragged)" in n
               for n in notes)
    for _ in range(2):
        legacy.array([[1], []])
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_view_is_numpy_elsewhere():
    legacy = numpy_view()
    assert legacy.float is float and legacy.float64 is np.float64 and legacy.random is np.random
    assert legacy.zeros(2, dtype=legacy.float).dtype == np.float64
    assert not hasattr(np, "float") and not hasattr(np, "asscalar")  # the real module is untouched
    for name in BY_HAND:
        assert not hasattr(legacy, name), name  # no NumPy 1.x meaning given: NumPy's own error


def _tf1clip_lines(proc):
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line.split(" ")[0] in
            ("dtypes", "rank", "limits", "step", "b")]


def _expected_fixture_lines():
    """The fixture's numbers computed here with NumPy 2 spellings (float64 gradient descent)."""
    features = np.arange(12, dtype=np.float64).reshape(6, 2) / 10.0
    targets = (features.sum(axis=1) * 3.0 + 1.0).reshape(-1, 1)
    w, b, losses = np.zeros((2, 1)), 0.0, []
    for _ in range(3):
        err = features @ w + b - targets
        losses.append(float(np.mean(err ** 2)))
        w = w - 0.1 * 2 * features.T @ err / len(err)
        b = b - 0.1 * 2 * float(err.mean())
    return losses, b


def test_fixture_runs_unmodified_under_tf1clip_run():
    lines = _tf1clip_lines(run_tf1clip("run", FIXTURE))
    assert lines[:3] == ["dtypes float64 int64 bool object float64", "rank 2 in1d [0, 0, 1, 1]",
                         "limits -inf True 3.0 7"]
    losses, b = _expected_fixture_lines()
    assert losses[0] == pytest.approx(22.69)  # mean of the squared targets 1.3, 2.5, ..., 7.3
    for k, loss in enumerate(losses):
        step, value = lines[3 + k].split(" loss ")
        assert step == f"step {k}" and float(value) == pytest.approx(loss, rel=1e-5)
    assert float(lines[6].split()[1]) == pytest.approx(b, rel=1e-5)


def test_fixture_migrated_prints_the_same_under_plain_numpy2(tmp_path):
    out = tmp_path / "out"
    proc = run_tf1clip("migrate", FIXTURE, "--outtree", out, "--report", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    migrated = (out / FIXTURE.name).read_text().split('"""', 2)[2]  # the code, not the docstring
    for old in ("np.float", "np.int(", "np.bool", "np.asscalar", "newshape", "np.rank", "np.in1d", "np.NaN"):
        assert old not in migrated.replace("np.float64", ""), old
    assert _tf1clip_lines(run_python(out / FIXTURE.name)) == _tf1clip_lines(run_tf1clip("run", FIXTURE))


def test_libraries_see_the_real_numpy(tmp_path):
    """A package in a site-packages folder gets NumPy 2 as it is; the user's files get the view."""
    site = tmp_path / "site-packages"
    (site / "npcheck").mkdir(parents=True)
    (site / "npcheck" / "__init__.py").write_text(
        "import numpy\n\ndef view():\n    return hasattr(numpy, 'float'), numpy.__name__\n")
    script = tmp_path / "uses.py"
    script.write_text(textwrap.dedent("""
        import sys
        import numpy as np
        from numpy import float_, asscalar
        import npcheck
        import tensorflow as tf
        print("user", np.float is float, float_ is np.float64, asscalar(np.ones(1)))
        print("library", npcheck.view())
        print("modules", hasattr(sys.modules["numpy"], "float"), np.random is sys.modules["numpy.random"])
    """))
    proc = run_tf1clip("run", script, env={"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stderr
    assert "user True True 1.0" in proc.stdout
    assert "library (False, 'numpy')" in proc.stdout
    assert "modules False True" in proc.stdout


def test_tf2_tier_output_gets_numpy2_spellings(tmp_path):
    from tf1clip.migrate.engine import migrate

    source = (FIXTURES / "legacy" / "r02_clip_by_global_norm.py").read_text()
    marker = "import numpy as np\n"
    assert marker in source
    line = source[:source.index(marker)].count("\n") + 2
    text = source.replace(marker, marker + "SCALE = np.asscalar(np.ones(1, dtype=np.float))\n", 1)
    outcome = migrate(text, "r02.py", to="tf2")
    assert outcome.tier == "tf2"
    assert "SCALE = np.ones(1, dtype=float).item()\n" in outcome.text
    notes = [n for n in outcome.notes if n.rule == "numpy2"]
    assert {n.line for n in notes} == {line} and len(notes) == 2
    compile(outcome.text, "r02.py", "exec")


def test_numpy_only_file_and_unparsable_file(tmp_path):
    from tf1clip.migrate.engine import migrate_text

    done = migrate_text("import numpy as np\nx = np.zeros(2, np.float)\n", "u.py")
    assert done.text == "import numpy as np\nx = np.zeros(2, float)\n" and done.notes[0].line == 2
    broken = "import numpy as np\nprint 'x', np.float\n"
    assert migrate_text(broken, "p2.py").text == broken  # not TensorFlow, not parseable: left alone
    left = migrate_text("import numpy as np\n\ndef f(float):\n    return np.float(float)\n", "h.py")
    assert left.text.endswith("np.float(float)\n") and [n.kind for n in left.notes] == ["human"]


def test_codemod_never_imports_numpy():
    probe = ("import sys; import codemods.numpy2, codemods.numpy_ragged, tf1clip.numpy_removed; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'tensorflow')))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_docs_carry_the_table():
    from conftest import ROOT
    from tf1clip.numpy_removed import render_markdown

    assert render_markdown() in (ROOT / "docs" / "runtime.md").read_text()

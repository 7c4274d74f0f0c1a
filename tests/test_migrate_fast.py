"""The compat tier's `ast` fast path (`codemods.fast_compat`) against the libcst rules.

Wherever the fast path takes a file, its output and report notes must equal what the six
libcst codemods make of it (`migrate_text(..., fast=False)`), byte for byte; a file outside
its shape must be declined (None), never guessed. Checked on every corpus the project has and
on variations written to hit each of its decisions.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import codemods
from codemods.fast_compat import fast_compat
from conftest import ROOT, run_python
from tf1clip._source import decode_source
from tf1clip.migrate.engine import MigrationError, migrate_text

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_codemod  # noqa: E402

LEGACY = ROOT / "fixtures" / "legacy"


def _same_as_libcst(text: str, name: str = "t.py") -> bool:
    """True when the fast path takes `text`; asserts it then equals the libcst rules."""
    fast = fast_compat(text, name)
    if fast is None:
        return False
    slow = migrate_text(text, name, fast=False)
    assert fast[0] == slow.text, name
    assert fast[1] == slow.notes, name
    assert migrate_text(text, name).text == slow.text  # the engine's default takes the fast path
    return True


def _corpus_files() -> list[Path]:
    return sorted((ROOT / "fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_fixture_files_equal_the_libcst_rules(path):
    try:
        text, _ = decode_source(path.read_bytes())  # as the CLI reads it (BOM, coding cookie)
    except (UnicodeDecodeError, SyntaxError, ValueError):
        return  # a file the CLI reports as undecodable never reaches either path
    try:
        _same_as_libcst(text, path.name)
    except MigrationError:
        assert fast_compat(text, path.name) is None


def test_every_legacy_fixture_is_taken():
    """The recipes are the shape the fast path exists for: all twelve take it (and equal libcst)."""
    taken = [p.stem for p in sorted(LEGACY.glob("r*.py")) if _same_as_libcst(p.read_text(), p.name)]
    assert len(taken) == 12, taken


def _examples():
    for cls in codemods.COMPAT_TIER:
        for i, example in enumerate([*cls.VALID, *cls.INVALID]):
            yield pytest.param(example.code, id=f"{cls.__name__}-{i}")
            if hasattr(example, "expected"):
                yield pytest.param(example.expected, id=f"{cls.__name__}-{i}-expected")


@pytest.mark.parametrize("code", list(_examples()))
def test_codemod_examples_equal_the_libcst_rules(code):
    _same_as_libcst(code)


def test_generated_tree_is_all_taken_and_equal(tmp_path):
    files, _ = bench_codemod.make_tree(tmp_path, 36, seed=3)
    paths = sorted(tmp_path.rglob("*.py"))
    assert len(paths) == files
    assert all(_same_as_libcst(p.read_text(), p.name) for p in paths)


_BASE = LEGACY / "r04_contrib_clip_gradients_by_norm.py"

# (name, edit of the R4 fixture text, taken?) -- taken ones must equal libcst, declined ones
# must come back None (and then the libcst rules run as before).
VARIANTS = [
    ("no docstring", lambda t: t.split('"""\n', 2)[-1] if t.startswith('"""') else t, True),
    ("comment after the imports", lambda t: t.replace("import tensorflow as tf\n", "import tensorflow as tf\n# setup\n"), True),
    ("no blank line after the imports",
     lambda t: t.replace("import tensorflow as tf\n\n", "import tensorflow as tf\n"), True),
    ("import os first", lambda t: t.replace("import numpy as np\n", "import os\nimport numpy as np\n"), True),
    ("non-ASCII before a rewritten chain",
     lambda t: t.replace("optimizer = tf.contrib", "optimizer = {'é': 1} and tf.contrib"), True),
    ("alias tf1", lambda t: t.replace("import tensorflow as tf\n", "import tensorflow as tf1\n").replace("tf.", "tf1."), True),
    ("a second alias", lambda t: t.replace("import numpy as np\n", "import numpy as np\nimport tensorflow as T\n")
     .replace("tf.set_random_seed", "T.set_random_seed"), True),
    ("trailing comment on the import", lambda t: t.replace("import tensorflow as tf\n", "import tensorflow as tf  # TF 1\n"), True),
    ("backslash continuation", lambda t: t.replace("train_op = optimizer.minimize(loss)",
                                                   "train_op = \\\n    optimizer.minimize(loss)"), True),
    ("no final newline", lambda t: t.rstrip("\n"), True),
    ("alias rebound in a function", lambda t: t + "\n\ndef f(tf):\n    return tf\n", False),
    ("alias assigned", lambda t: t + "\ntf = None\n", False),
    ("from tensorflow import", lambda t: t.replace("import numpy as np\n", "import numpy as np\nfrom tensorflow import train\n"), False),
    ("import inside a function", lambda t: t + "\n\ndef g():\n    import tensorflow as tf\n    return tf\n", False),
    ("two statements on a line", lambda t: t.replace("import numpy as np\n", "import numpy as np; import sys\n"), False),
    ("f-string", lambda t: t + '\nprint(f"{tf.__version__}")\n', False),
    ("contrib name without a row", lambda t: t + "\nhelper = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper\n", False),
    ("chain over two lines", lambda t: t + "\nx = (tf.\n     zeros)\n", False),
    ("tf.compat use", lambda t: t + "\nx = tf.compat.v1.placeholder(tf.float32)\n", False),
    ("TF 2 API", lambda t: t + "\ntape = tf.GradientTape()\n", False),
    ("already disabled", lambda t: t + "\ntf.disable_v2_behavior()\n", False),
    ("CRLF", lambda t: t.replace("\n", "\r\n"), False),
    ("star import", lambda t: t.replace("import numpy as np\n", "from numpy import *\n"), False),
    ("a device pin", lambda t: t + "\nwith tf.device('/gpu:0'):\n    z = tf.zeros([1])\n", False),
    ("a name NumPy 2 removed", lambda t: t.replace("import numpy as np\n", "import numpy as np\nF = np.float\n"), False),
]


@pytest.mark.parametrize("name, edit, taken", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_variants_are_equal_or_declined(name, edit, taken):
    text = edit(_BASE.read_text())
    assert text != _BASE.read_text() or name == "no docstring"
    assert _same_as_libcst(text) is taken
    if not taken:
        assert fast_compat(text) is None


def test_cli_output_is_the_libcst_rules_output(tmp_path):
    """End to end: `tf1clip migrate --outtree` with the fast path equals it with TF1CLIP_MIGRATE_FAST=0."""
    bench_codemod.make_tree(tmp_path / "src", 8, seed=5)
    outs = []
    for fast in ("1", "0"):
        out = tmp_path / f"out{fast}"
        result = run_python("-m", "tf1clip", "migrate", tmp_path / "src", "--outtree", out,
                            "--report", tmp_path / f"report{fast}.json", env={"TF1CLIP_MIGRATE_FAST": fast})
        assert result.returncode == 0, result.stderr
        outs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*.py")})
    assert outs[0] == outs[1] and len(outs[0]) == 8
    reports = [(tmp_path / f"report{fast}.json").read_text().replace(f"out{fast}", "out") for fast in ("1", "0")]
    assert reports[0] == reports[1]


def _contrib_row_cases():
    from codemods.contrib_table import CONTRIB_ROWS

    for qname in sorted(CONTRIB_ROWS):
        yield pytest.param(qname[len("tensorflow."):], id=qname)


@pytest.mark.parametrize("rel", list(_contrib_row_cases()))
def test_every_contrib_row_equals_the_libcst_rules(rel):
    """Each row of the contrib table, used as `tf.<rel>` (and with a layer, so the legacy-Keras
    switch is placed too), is taken and rewritten exactly as the libcst rules rewrite it."""
    text = ('"""A script."""\nimport numpy as np\nimport tensorflow as tf\n\n'
            "x = tf.placeholder(tf.float32, [None, 3])\nh = tf.layers.dense(x, 4)\n"
            f"thing = tf.{rel}\nother = [tf.{rel}, np.zeros(2)]\n")
    assert _same_as_libcst(text)

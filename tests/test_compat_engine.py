"""The compat tier's one-pass engine: its model of the file agrees with libcst, and its output
keeps the file's own text wherever nothing changes.

The engine reads the file with Python's `ast` and re-parses with libcst only the statements it
changes, so where libcst puts blank and comment lines (a statement's leading lines, a block's
footer) is computed, not read: checked here against libcst itself on every statement of the
fixtures, the benchmark's generated tree and shapes written to hit each rule of libcst's.
"""
from __future__ import annotations

import sys
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from codemods.model import FileModel
from conftest import ROOT
from tf1clip._source import decode_source
from tf1clip.migrate.engine import migrate_text

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_codemod  # noqa: E402

SHAPES = {
    "comments between statements": "import os\n# a\n\n# b\nimport sys\n",
    "footer of a block": "def f():\n    x = 1\n    # deep\n\n# top\nimport y\n",
    "comment below the block indent": "def f():\n    x = 1\n  # mid\n# top\nimport y\n",
    "deep comment after a shallow one": "if a:\n    x = 1\n  # mid\n    # deep\nimport y\n",
    "nested blocks": "class A:\n    def f(self):\n        # one\n        x = 1\n\n        # two\n        if x:\n            y = 2\n        # three\n    # four\n\n# five\nz = 3\n",
    "decorators": "import os\n\n# deco\n@property\n@staticmethod\ndef f():\n    pass\n",
    "same-line bodies": "if x: y = 1\nelse: z = 2\ntry: import a\nexcept ImportError: a = None\n",
    "semicolons": "a = 1; b = 2\n# c\nc = 3\n",
    "header comment": "def f():  # note\n    # first\n    return 1\n",
    "elif and else": "if a:\n    x = 1\n# before elif\nelif b:\n    # in elif\n    x = 2\nelse:\n    # in else\n    x = 3\n",
    "try blocks": "try:\n    x = 1\n    # after x\nexcept E:\n    # handler\n    y = 2\nfinally:\n    z = 3\n",
    "tabs": "def f():\n\tx = 1\n\t# c\n\ty = 2\n",
    "whitespace-only lines": "def f():\n    x = 1\n\n    \n\n# top\ny = 2\n",
    "comment after a same-line body": "def f():\n    if x: return\n\n    # c\n    y = 2\n",
}


def _sources():
    for name, text in SHAPES.items():
        yield pytest.param(text, id=name)
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        try:
            text, _ = decode_source(path.read_bytes())
            compile(text, str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        yield pytest.param(text, id=str(path.relative_to(ROOT)))


def _libcst_leading(text: str) -> dict:
    """{first line of a statement: how many leading lines libcst gives it}, every level."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    positions = wrapper.resolve(PositionProvider)
    found = {}

    class Visit(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                first = positions[node].start.line
                decorators = getattr(node, "decorators", ())
                if decorators:
                    first = positions[decorators[0]].start.line
                found[first] = len(node.leading_lines)
            return True

    wrapper.module.visit(Visit())
    return found


@pytest.mark.parametrize("text", list(_sources()))
def test_leading_lines_are_libcst_s(text):
    model = FileModel(text)
    expected = _libcst_leading(text)
    checked = 0
    for stmt in model.stmts.values():
        if stmt.first not in expected or model.shares_line(stmt):
            continue  # a statement after `;` or in a same-line suite is not a libcst line of its own
        start, end = model.leading_lines(stmt)
        assert end - start == expected[stmt.first], (stmt.first, text)
        checked += 1
    assert checked >= 1 or not model.body


def test_generated_tree_twice_equals_once_and_compiles(tmp_path):
    bench_codemod.make_tree(tmp_path, 24, seed=11)
    for path in sorted(tmp_path.rglob("*.py")):
        text = path.read_text()
        once = migrate_text(text, path.name)
        assert once.text != text and once.notes
        compile(once.text, path.name, "exec", dont_inherit=True)
        assert migrate_text(once.text, path.name).text == once.text


@pytest.mark.parametrize("source, expected", [
    # CRLF kept on every line, the added ones too
    ("import tensorflow as tf\r\n\r\nx = tf.placeholder(tf.float32)\r\ncell = tf.contrib.rnn.GRUCell(4)\r\n",
     "import os\r\nos.environ[\"TF_USE_LEGACY_KERAS\"] = \"1\"\r\nimport tensorflow.compat.v1 as tf\r\n"
     "tf.disable_v2_behavior()\r\n\r\nx = tf.placeholder(tf.float32)\r\ncell = tf.nn.rnn_cell.GRUCell(4)\r\n"),
    # tabs, and only the changed line re-printed (odd spacing elsewhere kept)
    ("import tensorflow as tf\n\ndef f():\n\tx  =  tf.placeholder( tf.float32 )\n\treturn tf.contrib.framework.get_global_step( )\n",
     "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\ndef f():\n\tx  =  tf.placeholder( tf.float32 )\n"
     "\treturn tf.train.get_global_step( )\n"),
    # a removed import goes with its comment; the one in the function too
    ("import tensorflow as tf\n# rnn\nfrom tensorflow.contrib import rnn\n\ndef f():\n    # again\n    from tensorflow.contrib import rnn\n"
     "    return rnn.GRUCell(1)\nx = tf.placeholder(tf.float32)\ny = rnn.GRUCell(2)\n",
     "import os\nos.environ[\"TF_USE_LEGACY_KERAS\"] = \"1\"\nimport tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\n"
     "def f():\n    return tf.nn.rnn_cell.GRUCell(1)\nx = tf.placeholder(tf.float32)\ny = tf.nn.rnn_cell.GRUCell(2)\n"),
    # a name rebound as a parameter is not TensorFlow there
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32)\ndef f(tf):\n    return tf.contrib.rnn.GRUCell(3)\n",
     "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\nx = tf.placeholder(tf.float32)\ndef f(tf):\n"
     "    return tf.contrib.rnn.GRUCell(3)\n"),
])
def test_output_keeps_the_file_s_text(source, expected):
    out = migrate_text(source).text
    assert out == expected
    assert migrate_text(out).text == out


def test_insertions_are_judged_on_the_output():
    """`disable_v2_behavior`, `legacy_keras` and `soft_placement` judge the file as the other
    rules leave it (as when each rule was its own pass): a file whose only TF 1 name becomes a
    name TF 2 also has gets the compat import but not graph mode; one that keeps a graph-only
    name gets both."""
    out = migrate_text("import tensorflow as tf\nx = tf.contrib.framework.sort(y)\n").text
    assert out == "import tensorflow.compat.v1 as tf\nx = tf.sort(y)\n"
    flags = migrate_text("import tensorflow as tf\nFLAGS = tf.app.flags.FLAGS\n").text
    assert flags == "import tensorflow.compat.v1 as tf\nFLAGS = tf.app.flags.FLAGS\n"
    graph = migrate_text("import tensorflow as tf\nFLAGS = tf.app.flags.FLAGS\nx = tf.placeholder(tf.float32)\n").text
    assert graph == ("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\nFLAGS = tf.app.flags.FLAGS\n"
                     "x = tf.placeholder(tf.float32)\n")


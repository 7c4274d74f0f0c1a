"""The migrate engine in-process: never making a file worse, reporting on the original lines.

Real rules on the real engine (including deliberately wrong ones), no mocks, no TensorFlow.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemods.rule import Rule
from conftest import run_tf1clip
from tf1clip.migrate.engine import MigrationError, migrate_text
from tf1clip.migrate.notebook import migrate_notebook

ROOT = Path(__file__).resolve().parents[1]
TF1 = "import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\nsess = tf.Session()\n"


class ReturnAtModuleLevel(Rule):
    """A broken rule: it inserts a statement that libcst accepts and Python does not."""

    RULE = "broken_rule"

    def leave_module(self, layout):
        layout.insert_after(layout.body, layout.body[-1], "return 1", self.RULE)


class Crashing(Rule):
    RULE = "crashing_rule"

    def visit_reference(self, ref):
        raise RuntimeError("boom")


class _Rename(Rule):
    """Renames tf.placeholder to tf.<TARGET>: two of them disagree."""

    TARGET = ""

    def visit_reference(self, ref):
        if ref.text == "tf.placeholder":
            self.run.replace(self, ref, 1, f"tf.{self.TARGET}")


class RenameA(_Rename):
    RULE, TARGET = "rename_a", "a"


class RenameB(_Rename):
    RULE, TARGET = "rename_b", "b"


class RenameInner(Rule):
    RULE = "rename_inner"

    def visit_reference(self, ref):
        if ref.text == "tf.placeholder":
            self.run.replace(self, ref, 0, "tf1")


def test_output_that_does_not_parse_is_never_returned():
    with pytest.raises(MigrationError, match="does not parse"):
        migrate_text(TF1, rules=(ReturnAtModuleLevel,))


def test_a_crashing_rule_is_an_error_for_that_file_only():
    with pytest.raises(MigrationError, match="crashing_rule failed: RuntimeError: boom"):
        migrate_text(TF1, rules=(Crashing,))


@pytest.mark.parametrize("rules, message", [
    ((RenameA, RenameB), r"rules rename_a and rename_b rewrite the same name in tf.placeholder differently"),
    ((RenameA, RenameInner), r"rules rename_a and rename_inner rewrite nested names in tf.placeholder"),
])
def test_conflicting_edits_are_an_error_not_an_order(rules, message):
    """Two rules editing one node (or one inside the other) differently: the file is an error
    at that line, in either order, never one rule's result."""
    for order in (rules, rules[::-1]):
        with pytest.raises(MigrationError) as info:
            migrate_text(TF1, rules=order)
        assert info.value.line == 3
    with pytest.raises(MigrationError, match=message):
        migrate_text(TF1, rules=rules)
    same = migrate_text(TF1, rules=(RenameA, RenameA))  # the same edit twice is one edit
    assert same.text == TF1.replace("tf.placeholder", "tf.a")


def test_notes_point_at_original_lines_after_insertions():
    source = ("import numpy as np\nimport tensorflow as tf\n\nh = tf.layers.dense(tf.placeholder(tf.float32, [None, 2]), 3)\n"
              "cell = tf.contrib.rnn.LSTMCell(4)\nopt = tf.contrib.estimator.clip_gradients_by_norm(o, 1.0)\n")
    outcome = migrate_text(source)
    lines = {(n.rule, n.line) for n in outcome.notes}
    assert ("contrib_symbols", 5) in lines and ("contrib_symbols", 6) in lines
    assert ("compat_v1_imports", 2) in lines and ("legacy_keras", 2) in lines and ("disable_v2_behavior", 2) in lines
    assert outcome.runtime == ["tf1clip.clip_gradients_by_norm"]
    new = outcome.text.splitlines()
    assert new[:6] == ["import numpy as np", "import os", 'os.environ["TF_USE_LEGACY_KERAS"] = "1"',
                       "import tensorflow.compat.v1 as tf", "import tf1clip", "tf.disable_v2_behavior()"]


@pytest.mark.parametrize("source, reason", [
    ("x = 1\n", "does not use TensorFlow"),
    ("import tensorflow as tf\nmodel = tf.keras.Sequential()\n", "uses no TF 1.x-only API"),
    ("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\nx = tf.placeholder(tf.float32)\n", "already migrated"),
])
def test_unchanged_files_say_why(source, reason):
    outcome = migrate_text(source)
    assert outcome.text == source and outcome.reason == reason


def test_tf_upgrade_v2_output_is_finished_off():
    """tf_upgrade_v2 renames to tf.compat.v1 but crashes without disable_v2_behavior()."""
    source = "import tensorflow as tf\n\nx = tf.compat.v1.placeholder(tf.float32)\nsess = tf.compat.v1.Session()\n"
    assert migrate_text(source).text == ("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\n"
                                         "x = tf.placeholder(tf.float32)\nsess = tf.Session()\n")


def _notebook(cells, **dump):
    nb = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, **dump).encode("utf-8") + b"\n"


def _code(src):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": src.splitlines(keepends=True)}


def test_notebook_in_another_json_layout_is_left_alone(tmp_path):
    data = _notebook([_code("import tensorflow as tf\nsess = tf.Session()")], separators=(",", ":"))
    with pytest.raises(MigrationError, match="cannot be reproduced byte for byte"):
        migrate_notebook(data, "nb.ipynb")
    path = tmp_path / "nb.ipynb"
    path.write_bytes(data)
    proc = run_tf1clip("migrate", path, "--inplace")
    assert proc.returncode == 2 and path.read_bytes() == data


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_notebook_keeps_its_json_layout(indent):
    data = _notebook([_code("import tensorflow as tf\nsess = tf.Session()"), _code("%time 1\n!ls")],
                     indent=indent, sort_keys=False)
    result = migrate_notebook(data, "nb.ipynb")
    new = json.loads(result.data)
    assert result.data == _notebook(new["cells"], indent=indent, sort_keys=False)
    assert "".join(new["cells"][0]["source"]) == "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\nsess = tf.Session()"
    assert new["cells"][1]["source"] == ["%time 1\n", "!ls"]


def test_notebook_errors_name_the_cell():
    data = _notebook([_code("import tensorflow as tf"), _code("x = (\n")], indent=1)
    with pytest.raises(MigrationError, match="cell 2") as info:
        migrate_notebook(data, "nb.ipynb")
    assert info.value.line >= 1


def test_non_python_notebook_is_left_alone():
    nb = {"cells": [_code("library(tensorflow)")], "metadata": {"kernelspec": {"language": "R"}},
          "nbformat": 4, "nbformat_minor": 5}
    data = json.dumps(nb, indent=1).encode()
    result = migrate_notebook(data, "r.ipynb")
    assert result.data == data and "R notebook" in result.outcome.reason

"""Every TF2-tier step's own before/after examples (one generic test), applied twice = once.

The structural step (`train_step`) takes whole scripts: its examples are the golden pairs
fixtures/legacy/X.py → fixtures/tf2_golden/X.py (tests/test_tf2_golden.py). Real libcst.
"""
from __future__ import annotations

import sys
from pathlib import Path

import libcst as cst
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import STEPS, convert, train_step  # noqa: E402
from codemods.tf2.optimizer_table import OPTIMIZERS, render_markdown  # noqa: E402

EXPRESSION_STEPS = [s for s in STEPS if s is not train_step]


def _apply(step, text):
    new, notes = step.transform(cst.parse_module(text))
    return new.code, notes


def _cases():
    for step in EXPRESSION_STEPS:
        for i, (before, after) in enumerate(step.EXAMPLES):
            yield pytest.param(step, before, after, id=f"{step.RULE}-{i}")


@pytest.mark.parametrize("step, before, after", list(_cases()))
def test_example_and_twice_equals_once(step, before, after):
    once, notes = _apply(step, before)
    assert once == after
    assert _apply(step, once)[0] == once
    if before != after:
        assert notes and all(n.kind == "change" and n.rule == step.RULE for n in notes)


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.RULE)
def test_every_step_documents_itself(step):
    assert step.__doc__ and step.DESCRIPTION and step.RULE == step.__name__.rsplit(".", 1)[1]
    assert step is train_step or step.EXAMPLES


def test_steps_never_import_tensorflow():
    import subprocess
    code = ("import sys; sys.path.insert(0, %r); import codemods.tf2; "
            "assert 'tensorflow' not in sys.modules, 'imported TensorFlow'" % str(ROOT))
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_refusal_is_a_human_note_with_file_line():
    text = ("import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 4])\n"
            "cell = tf.nn.rnn_cell.GRUCell(8)\n\nwith tf.Session() as sess:\n    pass\n")
    result = convert(text, "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    assert note.line == 4 and note.rule == "train_step" and "GRUCell" in note.message


def test_tf2_code_is_left_alone():
    text = "import tensorflow as tf\n\nv = tf.Variable(1.0)\n"
    assert convert(text).text == text


def test_wgan_weight_clip_is_not_a_gradient_clip():
    """A clip_by_value on weights (WGAN) is never rewritten, and the assign it feeds is refused
    rather than guessed: the file stays for a human."""
    text = ("import tensorflow as tf\n\nw = tf.Variable(tf.zeros([2]))\n"
            "clip_op = w.assign(tf.clip_by_value(w, -0.01, 0.01))\n"
            "with tf.Session() as sess:\n    sess.run(clip_op)\n")
    result = convert(text)
    assert result.text is None or "tf.clip_by_value(w, -0.01, 0.01)" in result.text


def test_optimizer_table_renders_into_the_readme():
    readme = (ROOT / "fixtures" / "tf2_golden" / "README.md").read_text()
    assert render_markdown() in readme


@pytest.mark.parametrize("row", OPTIMIZERS.values(), ids=lambda r: r.tf1.rsplit(".", 1)[1])
def test_every_optimizer_row_has_its_proof(row):
    assert (ROOT / "fixtures" / row.proof).resolve().is_file()
    assert row.keras.startswith("tf.keras.optimizers.")

"""step_reads.check_step: a name the step reads and the script binds again before the step is traced.
The step reads the literal TF 1.x built with when one definition, a literal, reached the graph; else the
file is refused at the later binding (fixtures/tf2_safety/probes/host_rebound_*.py prove the conversion by
parity)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402

HEAD = ("import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 2])\nw = tf.Variable(tf.ones([2, 1]))\n"
        "loss = tf.reduce_mean(tf.matmul(x, w))\nopt = tf.train.GradientDescentOptimizer(0.1)\n")
TAIL = ("with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
        "    sess.run(train_op, feed_dict={x: [[1.0, 2.0]]})\n")


def test_the_step_reads_the_literal_tf1_built_with():
    text = convert(HEAD + "scale = 0.5\ntrain_op = opt.minimize(loss * scale)\nscale = 2.0\nprint(scale)\n" + TAIL,
                   "s.py").text
    assert text is not None
    step = text[text.index("def train_step"):text.index("train_step = train_step.get_concrete_function()")]
    assert "loss * 0.5" in step and "scale" not in step
    assert "scale = 2.0\nprint(scale)\n" in text  # the host code keeps its own binding


# the scaled loss is built before the later binding, the update op after it: the step is traced after both
@pytest.mark.parametrize("build, later, line", [
    # not a literal where TF 1.x built the graph
    ("scale = float(2) / 4\nscaled = loss * scale\n", "scale = 2.0\n", 9),
    # two definitions reach the graph (a condition): which one TF 1.x used is not known here
    ("scale = 0.5\nif len(__name__) > 3:\n    scale = 0.25\nscaled = loss * scale\n", "scale = 2.0\n", 11),
    # read through a function of the module, which other callers share
    ("scale = 0.5\n\n\ndef scaled_by(v):\n    return v * scale\n\n\nscaled = scaled_by(loss)\n", "scale = 2.0\n", 15),
], ids=["computed", "two-definitions", "through-a-function"])
def test_refused_at_the_later_binding_unless_one_literal_was_built_with(build, later, line):
    result = convert(HEAD + build + later + "train_op = opt.minimize(scaled)\n" + TAIL, "s.py")
    assert result.text is None
    note = result.notes[-1]
    assert note.line == line and "is bound again at line" in note.message, note

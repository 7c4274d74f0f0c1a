"""A step reads, when it is traced, every module global that the functions it calls read; TF 1.x
read them when it built the graph. Found by the program generator (benchmarks/progen, seed 105):
`keep_value` read by `inference()` and rebound after the graph was built trained with the later
value. And the module itself bound to another name (`T = tf`, seed 149) stays the module."""
import sys
from pathlib import Path

import pytest

from conftest import run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tf1clip.migrate.engine import migrate  # noqa: E402

PROGRAM = '''
import numpy as np
import tensorflow as tf

keep_value = 0.9
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(tf.random_normal([4, 1], stddev=0.1))


def scale(h):
    return h * keep_value


def inference(x):
    return {body}


loss = tf.reduce_mean(tf.square(inference(x) - y))
{rebind}
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
{after}
rng = np.random.RandomState(0)
data, target = rng.randn(8, 4).astype(np.float32), rng.randn(8, 1).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(3):
        _, l = sess.run([train_op, loss], feed_dict={{x: data, y: target}})
        print(step, l)
'''
BODIES = {"direct": "tf.matmul(x, w) * keep_value", "through_a_helper": "scale(tf.matmul(x, w))"}


@pytest.mark.parametrize("body", sorted(BODIES))
def test_a_global_rebound_while_the_graph_is_built_is_refused_at_its_line(body):
    # bound again after the loss read it, before the update op: the step is traced after both
    source = PROGRAM.format(body=BODIES[body], rebind="keep_value = 0.5", after="")
    outcome = migrate(source, "train.py", to="tf2")
    assert outcome.tier == "compat"
    rebind_line = source.splitlines().index("keep_value = 0.5") + 1
    refusals = [n for n in outcome.notes if "not converted to the TF2 tier" in n.message]
    assert refusals and refusals[0].line == rebind_line, outcome.notes
    assert "`keep_value` is bound again at line" in refusals[0].message


@pytest.mark.parametrize("body", sorted(BODIES))
def test_a_global_rebound_after_the_whole_graph_converts_traced_before_it(body):
    outcome = migrate(PROGRAM.format(body=BODIES[body], rebind="", after="keep_value = 0.5"), "train.py", to="tf2")
    assert outcome.tier == "tf2", outcome.notes
    assert outcome.text.index("get_concrete_function()") < outcome.text.index("keep_value = 0.5")


@pytest.mark.parametrize("body", sorted(BODIES))
def test_the_same_program_without_the_rebinding_converts(body):
    outcome = migrate(PROGRAM.format(body=BODIES[body], rebind="", after=""), "train.py", to="tf2")
    assert outcome.tier == "tf2", outcome.notes


def test_the_module_under_another_name_stays_the_module(tmp_path):
    source = PROGRAM.format(body="tf.matmul(x, w)", rebind="", after="").replace(
        "import tensorflow as tf\n", "import tensorflow as tf\nT = tf\n").replace(
        "loss = tf.reduce_mean(tf.square(", "loss = T.reduce_mean(T.square(")
    outcome = migrate(source, "train.py", to="tf2")
    assert outcome.tier == "tf2", outcome.notes
    assert "tf.tensorflow" not in outcome.text
    # `T = tf` is an alias: the output spells the module `tf` and drops the binding once nothing reads it
    assert "T." not in outcome.text.replace("\nT = tf\n", "\n") or "\nT = tf\n" in outcome.text
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(source)
    new.write_text(outcome.text)
    proc = run_tf1clip("parity", old, new, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("PASS")

"""`tf.train.global_step(sess, gs)` in the TF2 tier: TF 1.x ran the variable, int(sess.run(gs)); the
TF 2 form reads its value where the call was, int(gs.numpy()). The original (`tf1clip run`) and the
migration (plain Python) print the same steps, in three spellings; another Session or a value that
is not the global step variable is refused with that reason."""
import sys
from pathlib import Path

import pytest

from conftest import refusal, run_python, run_tf1clip, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
pred = tf.layers.dense(x, 1)
loss = tf.reduce_mean(tf.square(pred - y))
{make}
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
xs, ys = np.ones([8, 4], np.float32), np.ones([8, 1], np.float32)
{run}
'''
LOOP = '''    sess.run(tf.global_variables_initializer())
    for i in range(3):
        sess.run(train_op, {x: xs, y: ys})
        print("step", tf.train.global_step(sess, gs))'''
VARIANTS = {
    "with_block": ("gs = tf.train.get_or_create_global_step()", "with tf.Session() as sess:\n" + LOOP),
    "keywords": ("gs = tf.Variable(0, trainable=False, name='global_step')",
                 "with tf.Session() as sess:\n" + LOOP.replace("tf.train.global_step(sess, gs)",
                                                               "tf.train.global_step(sess=sess, global_step_tensor=gs)")),
    "plain_session_alias": ("gs = tf.train.create_global_step()",
                            "step_of = tf.train.global_step\nsess = tf.Session()\nif True:\n"
                            + LOOP.replace("tf.train.global_step", "step_of")),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_global_step_read_converts(variant):
    make, run = VARIANTS[variant]
    result = translate(SCRIPT.format(make=make, run=run), "t.py")
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    assert "int(gs.numpy())" in result.text and "sess" not in result.text


# run on CI in a `with` block; every variant in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(VARIANTS), ("with_block",)))
def test_the_global_step_read_prints_what_tf1_printed(variant, tmp_path):
    make, run = VARIANTS[variant]
    text = SCRIPT.format(make=make, run=run)
    result = translate(text, "t.py")
    (tmp_path / "old.py").write_text(text)
    (tmp_path / "new.py").write_text(result.text)
    old = run_tf1clip("run", tmp_path / "old.py", cwd=tmp_path)
    new = run_python(tmp_path / "new.py", cwd=tmp_path)
    assert old.returncode == 0 and new.returncode == 0, old.stderr[-2000:] + new.stderr[-2000:]
    steps = [line for line in old.stdout.splitlines() if line.startswith("step")]
    assert steps == ["step 1", "step 2", "step 3"]
    assert [line for line in new.stdout.splitlines() if line.startswith("step")] == steps


@pytest.mark.parametrize("call, reason", [
    ("tf.train.global_step(tf.Session(), gs)", "other than the Session tf1clip follows"),
    ("tf.train.global_step(sess, loss)", "which is not a variable tf1clip follows"),
])
def test_refused_with_a_true_reason(call, reason):
    text = SCRIPT.format(make="gs = tf.train.get_or_create_global_step()",
                         run="with tf.Session() as sess:\n" + LOOP.replace("tf.train.global_step(sess, gs)", call))
    _, message = refusal(translate(text, "t.py"))
    assert reason in message, message

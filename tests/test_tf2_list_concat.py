"""Lists of graph values joined with `+` in the TF2 tier: Python's concatenation, which is what TF 1.x
code always meant by it (`d_vars + g_vars`: TF 1.x never added two lists as tensors). The joined list
is followed item by item, so it can be fetched, given as a var_list or bound to a name; each variant
prints what the original printed (`tf1clip run`) and trains like it (`tf1clip parity`)."""
import sys
from pathlib import Path

import pytest

from conftest import assert_parity, run_python, run_tf1clip, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.ones([4, 1]), name="W")
b = tf.Variable(tf.zeros([1]), name="b")
pred = tf.matmul(x, W) + b
loss = tf.reduce_mean(tf.square(pred - y))
d_vars = [W]
g_vars = [b]
{train}
xs, ys = np.arange(32, dtype=np.float32).reshape(8, 4) / 32, np.ones([8, 1], np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        sess.run(train_op, {{x: xs, y: ys}})
        {fetch}
'''
MINIMIZE = "train_op = tf.train.AdamOptimizer(0.1).minimize(loss)"
VARIANTS = {
    "fetch_joined_variables": (MINIMIZE, "print([v.round(4).tolist() for v in sess.run(d_vars + g_vars)])"),
    "fetch_joined_values": (MINIMIZE, "print([round(float(np.sum(v)), 4) for v in sess.run([loss] + [pred], "
                                      "{x: xs, y: ys})])"),
    "var_list_joined": ("train_op = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=d_vars + g_vars)",
                        "print(sess.run(b).round(4).tolist())"),
    "named_then_clipped": ("all_vars = d_vars + g_vars\nopt = tf.train.AdamOptimizer(0.1)\n"
                           "grads, _ = tf.clip_by_global_norm(tf.gradients(loss, all_vars), 0.5)\n"
                           "train_op = opt.apply_gradients(zip(grads, all_vars))",
                           "print([v.round(4).tolist() for v in sess.run(all_vars)])"),
    "tuples": ("both = (W,) + (b,)\ntrain_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=list(both))",
               "print([v.round(4).tolist() for v in sess.run(both)])"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_joined_lists_convert(variant):
    train, fetch = VARIANTS[variant]
    assert translate(SCRIPT.format(train=train, fetch=fetch), "t.py").text is not None


# run on CI: joined as a var_list; every variant in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(VARIANTS), ("var_list_joined",)))
def test_joined_lists_convert_and_run_like_tf1(variant, tmp_path):
    train, fetch = VARIANTS[variant]
    text = SCRIPT.format(train=train, fetch=fetch)
    result = translate(text, "t.py")
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    (tmp_path / "old.py").write_text(text)
    (tmp_path / "new.py").write_text(result.text)
    old = run_tf1clip("run", tmp_path / "old.py", cwd=tmp_path)
    new = run_python(tmp_path / "new.py", cwd=tmp_path)
    assert old.returncode == 0 and new.returncode == 0, old.stderr[-2000:] + new.stderr[-2000:]
    printed = [line for line in old.stdout.splitlines() if line.startswith("[")]
    assert len(printed) == 3 and [line for line in new.stdout.splitlines() if line.startswith("[")] == printed
    assert_parity(tmp_path, text, result.text)

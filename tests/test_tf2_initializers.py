"""Initializers in the TF2 tier: every TF 1.x initializer TF 2 has a class for, and a
`variable_scope(initializer=...)` (the PTB pattern), which TF 1.x gave to each `get_variable` made
in it without an initializer of its own.

The distributions are proven in tests/test_api_changes.py (moments and fans, TF 1 graph vs TF 2
eager, for every row of `api_decisions.OVERRIDES`). Here: which initializer each variable gets.
With constant initializers, `tf1clip parity --no-transfer` compares each side's own start values,
so a variable given the wrong initializer fails; random ones are proven by parity (the same
training from the same start) and by the initializer each variable is written with.

TF 2's initializer classes also changed their defaults (a normal or truncated normal of stddev 0.05,
a uniform in [-0.05, 0.05]; TF 1.x: stddev 1.0, [0, 1)), which parity cannot see either: the
converted initializer's draws are compared with TF 1.x's own (tf.compat.v1), on 100 000 values.
"""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import assert_parity, refusal, run_tf1clip, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402
from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 6])
y = tf.placeholder(tf.float32, [None, 1])
{model}
out = tf.matmul(h, w2)
loss = tf.reduce_mean(tf.square(out - y))
opt = tf.train.AdamOptimizer(0.01)
grads, tvars = zip(*opt.compute_gradients(loss))
grads, _ = tf.clip_by_global_norm(grads, 1.0)
train_op = opt.apply_gradients(zip(grads, tvars))
rng = np.random.RandomState(0)
xs, ys = rng.randn(32, 6).astype(np.float32), rng.randn(32, 1).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(4):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print(step, l)
'''
# Every variant: w1 from the scope's initializer (0.1), b1 its own (0.2), w2 after the scope (0.3).
SCOPED = {
    "module": '''with tf.variable_scope("net", initializer=tf.constant_initializer(0.1)):
    w1 = tf.get_variable("w1", [6, 8])
    b1 = tf.get_variable("b1", [8], initializer=tf.constant_initializer(0.2))
h = tf.nn.tanh(tf.matmul(x, w1) + b1)
w2 = tf.get_variable("w2", [8, 1], initializer=tf.constant_initializer(0.3))''',
    "named_first": '''init = tf.constant_initializer(0.1)
with tf.variable_scope("net", initializer=init):
    w1 = tf.get_variable("w1", [6, 8])
    b1 = tf.get_variable("b1", [8], initializer=tf.constant_initializer(0.2))
h = tf.nn.tanh(tf.matmul(x, w1) + b1)
w2 = tf.get_variable("w2", [8, 1], initializer=tf.constant_initializer(0.3))''',
    "nested_inherits": '''with tf.variable_scope("net", initializer=tf.constant_initializer(0.1)):
    with tf.variable_scope("inner"):
        w1 = tf.get_variable("w1", [6, 8])
    b1 = tf.get_variable("b1", [8], initializer=tf.constant_initializer(0.2))
h = tf.nn.tanh(tf.matmul(x, w1) + b1)
w2 = tf.get_variable("w2", [8, 1], initializer=tf.constant_initializer(0.3))''',
    "inner_scope_overrides": '''with tf.variable_scope("net", initializer=tf.constant_initializer(0.7)):
    with tf.variable_scope("inner", initializer=tf.constant_initializer(0.1)):
        w1 = tf.get_variable("w1", [6, 8])
    b1 = tf.get_variable("b1", [8], initializer=tf.constant_initializer(0.2))
h = tf.nn.tanh(tf.matmul(x, w1) + b1)
w2 = tf.get_variable("w2", [8, 1], initializer=tf.constant_initializer(0.3))''',
    "tf_layers": '''with tf.variable_scope("net", initializer=tf.constant_initializer(0.1)):
    h = tf.layers.dense(x, 8, activation=tf.nn.tanh)
    h = tf.layers.dense(h, 8, bias_initializer=None, kernel_initializer=tf.constant_initializer(0.05))
w2 = tf.get_variable("w2", [8, 1], initializer=tf.constant_initializer(0.3))''',
    "slim_layers": '''import tensorflow.contrib.slim as slim
with tf.variable_scope("net", initializer=tf.constant_initializer(0.1)):
    h = slim.fully_connected(x, 8, activation_fn=tf.nn.tanh, weights_initializer=None)
    h = slim.fully_connected(h, 8, weights_initializer=tf.constant_initializer(0.05), biases_initializer=None)
w2 = tf.get_variable("w2", [8, 1], initializer=tf.constant_initializer(0.3))''',
    "rnn_cells": '''with tf.variable_scope("net", initializer=tf.constant_initializer(0.1)):
    cells = [tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True),
             tf.nn.rnn_cell.GRUCell(4, kernel_initializer=tf.constant_initializer(0.05))]
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), tf.reshape(x, [-1, 2, 3]), dtype=tf.float32)
h = outputs[:, -1]
w2 = tf.get_variable("w2", [4, 1], initializer=tf.constant_initializer(0.3))''',
    "rnn_cell_made_outside_run_inside": '''cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), output_keep_prob=1.0)
with tf.variable_scope("net", initializer=tf.constant_initializer(0.1)):
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.reshape(x, [-1, 2, 3]), dtype=tf.float32)
h = outputs[:, -1]
w2 = tf.get_variable("w2", [4, 1], initializer=tf.constant_initializer(0.3))''',
    "rnn_cell_made_inside_run_outside": '''with tf.variable_scope("cells", initializer=tf.constant_initializer(0.1)):
    cell = tf.nn.rnn_cell.BasicRNNCell(4)
outputs, _ = tf.nn.dynamic_rnn(cell, tf.reshape(x, [-1, 2, 3]), dtype=tf.float32)
h = outputs[:, -1]
w2 = tf.get_variable("w2", [4, 1], initializer=tf.constant_initializer(0.3))''',
    "in_a_function": '''def model(x):
    with tf.variable_scope("net", initializer=tf.constant_initializer(0.1)):
        w1 = tf.get_variable("w1", [6, 8])
        b1 = tf.get_variable("b1", [8], initializer=tf.constant_initializer(0.2))
    return tf.nn.tanh(tf.matmul(x, w1) + b1)


h = model(x)
w2 = tf.get_variable("w2", [8, 1], initializer=tf.constant_initializer(0.3))''',
}


@pytest.mark.parametrize("variant", sorted(SCOPED))
def test_a_scope_initializer_converts_wherever_it_is_read(variant):
    assert translate(SCRIPT.format(model=SCOPED[variant]), "t.py").text is not None


# parity --no-transfer on CI for one of them (rnn cells); every variant in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(SCOPED), ("rnn_cells",)))
def test_a_scope_initializer_reaches_each_variable_made_without_one(variant, tmp_path):
    text = SCRIPT.format(model=SCOPED[variant])
    result = translate(text, "t.py")
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(text)
    new.write_text(result.text)
    proc = run_tf1clip("parity", old, new, "--no-transfer", "--steps", "4", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0 and "PASS" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "start values: --no-transfer: each side's own, compared" in proc.stdout


def test_a_wrong_initializer_would_fail_the_check(tmp_path):
    """The check above sees the initializer: the scope's value given to w2 too is a failure."""
    text = SCRIPT.format(model=SCOPED["module"])
    wrong = translate(text, "t.py").text.replace("tf.constant_initializer(value=0.3)", "tf.constant_initializer(value=0.1)")
    assert "value=0.1)([8, 1]" in wrong
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(text)
    new.write_text(wrong)
    proc = run_tf1clip("parity", old, new, "--no-transfer", "--steps", "4", cwd=tmp_path, timeout=600)
    assert proc.returncode == 1 and "FAIL" in proc.stdout, proc.stdout + proc.stderr[-3000:]


RANDOM = '''with tf.variable_scope("net", initializer=tf.orthogonal_initializer(gain=0.5)):
    w1 = tf.get_variable("w1", [6, 8])
    b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer(), dtype=tf.float32)
h = tf.nn.tanh(tf.matmul(x, w1) + b1)
w2 = tf.get_variable("w2", [8, 1], initializer={init})'''


RANDOM_CLASSES = [
    ("tf.glorot_normal_initializer(seed=1)", "tf.keras.initializers.GlorotNormal(seed=1)"),
    ("tf.variance_scaling_initializer(2.0, mode='fan_avg', dtype=tf.float32)",
     "tf.keras.initializers.VarianceScaling(2.0, mode='fan_avg')"),
    ("tf.initializers.he_uniform()", "tf.keras.initializers.HeUniform()"),
    ("tf.initializers.lecun_normal()", "tf.keras.initializers.LecunNormal()"),
]


@pytest.mark.parametrize("init, tf2", RANDOM_CLASSES)
def test_random_initializers_are_written_as_their_tf2_classes(init, tf2):
    result = translate(SCRIPT.format(model=RANDOM.format(init=init)), "t.py")
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    assert 'w1 = tf.Variable(tf.keras.initializers.Orthogonal(gain=0.5)([6, 8], dtype=tf.float32), name="net/w1")' \
        in result.text
    assert f'w2 = tf.Variable({tf2}([8, 1], dtype=tf.float32), name="w2")' in result.text
    assert translate(result.text, "t.py").text == result.text


# the draws themselves are proven by their moments below; parity (from OLD's start values) on CI for one
@pytest.mark.parametrize("init, tf2", sampled(RANDOM_CLASSES, ("tf.variance_scaling_initializer(2.0, mode='fan_avg', "
                                                              "dtype=tf.float32)",), key=lambda case: case[0]))
def test_random_initializers_written_as_their_tf2_classes_train_alike(init, tf2, tmp_path):
    text = SCRIPT.format(model=RANDOM.format(init=init))
    assert_parity(tmp_path, text, translate(text, "t.py").text)


@pytest.mark.parametrize("model, line, reason", [
    ('''with tf.variable_scope("net", initializer=tf.random_normal(0.1)):
    h = tf.get_variable("h", [6, 8])
w2 = tf.get_variable("w2", [8, 1])''', 6, "not an initializer tf1clip knows"),
    ('''with tf.variable_scope("net", initializer=tf.orthogonal_initializer(dtype=tf.float64)):
    h = tf.get_variable("h", [6, 8])
w2 = tf.get_variable("w2", [8, 1])''', 6, "with dtype tf.float64"),
    ('''kw = {"seed": 1}
w = tf.get_variable("w", [6, 8], initializer=tf.orthogonal_initializer(**kw))
h = tf.matmul(x, w)
w2 = tf.get_variable("w2", [8, 1])''', 7, "called with *args/**kwargs"),
])
def test_refused_with_a_true_reason(model, line, reason):
    at, message = refusal(translate(SCRIPT.format(model=model), "t.py"))
    assert reason in message and at == line, (at, message)


CASES = [
    "tf.truncated_normal_initializer()",
    "tf.truncated_normal_initializer(stddev=0.1)",
    "tf.random_normal_initializer()",
    "tf.random_normal_initializer(0.5)",
    "tf.random_uniform_initializer()",
    "tf.random_uniform_initializer(-1.0)",
    "tf.initializers.truncated_normal()",
    "tf.orthogonal_initializer()",
    "tf.initializers.orthogonal(gain=2.0)",
    "tf.glorot_normal_initializer()",
    "tf.variance_scaling_initializer(2.0, 'fan_avg', 'uniform')",
    "tf.initializers.variance_scaling(distribution='untruncated_normal')",
    "tf.initializers.he_normal(seed=4)",
    "tf.initializers.lecun_uniform()",
]


def _script(init: str) -> str:
    return f"""import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 400])
w = tf.get_variable("w", [400, 250], initializer={init})
loss = tf.reduce_mean(tf.matmul(x, w))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train_op, {{x: np.ones([2, 400], np.float32)}})
"""


@pytest.mark.parametrize("init", CASES)
def test_the_converted_initializer_draws_from_tf1s_distribution(init):
    import tensorflow as tf
    result = convert(_script(init), "init.py")
    assert result.text is not None, result.notes
    found = re.search(r"w = tf\.Variable\((.*)\(\[400, 250\], dtype=tf\.float32\), name=\"w\"\)", result.text)
    assert found, result.text
    tf2_draws = eval(found.group(1), {"tf": tf})([400, 250], dtype=tf.float32).numpy()
    tf1 = eval(init.replace("tf.", "tf.compat.v1.", 1), {"tf": tf})
    tf1_draws = tf1([400, 250], dtype=tf.float32).numpy()
    stats = {"mean": np.mean, "std": np.std, "1%": lambda a: np.percentile(a, 1), "99%": lambda a: np.percentile(a, 99)}
    for what, stat in stats.items():
        assert abs(stat(tf2_draws) - stat(tf1_draws)) < 0.03 * max(1.0, abs(stat(tf1_draws))), (what, init)

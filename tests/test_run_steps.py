"""`tf1clip run --steps N`: an unmodified script stops before its update N + 1, exit 0, one line.

What a step is (tf1clip/steps.py): an optimizer update (per optimizer), or with no optimizer a
Session.run that writes a model variable; not initializers, `Variable.load`, a Saver's
restore, integer counters or local (metric) variables. Real scripts in real subprocesses.
"""
import textwrap

import pytest

from conftest import run_tf1clip
from test_runner import stderr_lines

GAN = """
import numpy as np
import tensorflow as tf
tf.set_random_seed(3)
z = tf.placeholder(tf.float32, [None, 2])
with tf.variable_scope("g"):
    fake = tf.layers.dense(z, 2)
with tf.variable_scope("d"):
    w = tf.get_variable("w", [2, 1])
score = tf.reduce_mean(tf.matmul(fake, w))
d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "d")
g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "g")
d_train = tf.train.AdamOptimizer(0.01).minimize(score, var_list=d_vars)
g_train = tf.train.GradientDescentOptimizer(0.01).minimize(-score, var_list=g_vars)
batch = np.ones((4, 2), np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("start", sess.run(w).ravel().tolist())
    g_step = sess.make_callable(g_train, [z])
    for i in range(50):
        sess.run(d_train, {z: batch})
        print("d", i + 1)
        g_step(batch)
        print("g", i + 1)
print("loop finished")
"""

HAND_WRITTEN = """
import os
import numpy as np
import tensorflow as tf
x = tf.placeholder(tf.float32, [None, 2])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(tf.zeros([2, 1]), name="w")
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
grad, = tf.gradients(loss, [w])
with tf.control_dependencies([tf.assign(w, w - 0.1 * grad)]):
    train = tf.no_op()  # the write is reached through a control dependency only
epoch = tf.Variable(0, name="epoch")
next_epoch = tf.assign_add(epoch, 1)  # an integer counter: not a step
total, count_update = tf.metrics.mean(loss)  # local variables: not a step
saver = tf.train.Saver([w])
X, Y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    w.load(np.full((2, 1), 0.25, np.float32), sess)
    path = saver.save(sess, os.path.join(os.getcwd(), "ckpt", "model"))
    saver.restore(sess, path)
    for i in range(50):
        sess.run([next_epoch, count_update], {x: X, y: Y})
        l, _ = sess.run([loss, train], {x: X, y: Y})
        print("step", i + 1, round(float(l), 6))
print("loop finished")
"""

MONITORED = """
import numpy as np
import tensorflow as tf
x = tf.constant(np.ones((4, 2), np.float32))
w = tf.Variable(tf.zeros([2, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
step = tf.train.get_or_create_global_step()
train = tf.group(tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step))
i = 0
with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=50)]) as sess:
    while not sess.should_stop():
        i += 1
        sess.run(train)
        print("step", i)
print("loop finished")
"""


def _run(tmp_path, source, *options):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    return run_tf1clip("run", *options, script, cwd=tmp_path), script


def _stop_line(script, n):
    return f"tf1clip run: {script}: stopped after {n} updates (--steps {n})"


def test_two_optimizers_are_counted_each_by_its_updates(tmp_path):
    proc, script = _run(tmp_path, GAN, "--steps", "3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # d and g alternate; the stop comes before d's 4th update (g's go through make_callable)
    assert lines[1:] == ["d 1", "g 1", "d 2", "g 2", "d 3", "g 3"]
    assert stderr_lines(proc)[-1] == _stop_line(script, 3)
    # the hooks add no graph ops: the seeded start values are those of a run without --steps
    plain, _ = _run(tmp_path, GAN.replace("range(50)", "range(1)"))
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines()[0] == lines[0]


def test_without_an_optimizer_a_step_is_a_run_that_writes_a_model_variable(tmp_path):
    proc, script = _run(tmp_path, HAND_WRITTEN, "--steps=4")
    assert proc.returncode == 0, proc.stderr
    # both weights start at 0.25 (load, then save + restore); loss (2w - 1)^2, dloss/dw_i = 2(2w - 1)
    w, expected = 0.25, []
    for _ in range(4):
        expected.append(round((2 * w - 1) ** 2, 6))
        w -= 0.1 * 2 * (2 * w - 1)
    assert [float(line.split()[2]) for line in proc.stdout.splitlines()] == pytest.approx(expected, rel=1e-5)
    assert proc.stdout.splitlines()[-1].startswith("step 4 ")
    assert stderr_lines(proc)[-1] == _stop_line(script, 4)


def test_monitored_training_session_is_stopped_too(tmp_path):
    proc, script = _run(tmp_path, MONITORED, "--steps", "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["step 1", "step 2"]
    assert stderr_lines(proc)[-1] == _stop_line(script, 2)


def test_a_script_that_ends_first_exits_as_it_would(tmp_path):
    proc, _ = _run(tmp_path, MONITORED.replace("last_step=50", "last_step=2"), "--steps", "5")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["step 1", "step 2", "loop finished"]
    assert not any("stopped after" in line for line in stderr_lines(proc))


@pytest.mark.parametrize("options, message", [
    (["--steps", "0"], "run: --steps must be >= 1"),
    (["--steps", "ten"], "run: --steps must be a whole number, not 'ten'"),
    (["--steps"], "run: --steps needs a number"),
])
def test_bad_steps_is_one_line_exit_2(tmp_path, options, message):
    proc = run_tf1clip("run", *options, cwd=tmp_path)
    assert proc.returncode == 2
    assert stderr_lines(proc) == [f"tf1clip: error: {message}"]

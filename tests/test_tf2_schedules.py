"""A decaying learning rate given to an optimizer is the schedule's value at the step, wherever
the schedule was made: at module level (`lr`, read as `lr(global_step)`) or in a model class
(`self.lr`). The class variant was written `lambda: self.lr`, the schedule object itself, and
crashed in ResourceApplyAdam (found by the program generator, seed 279)."""
import sys
from pathlib import Path

from conftest import run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tf1clip.migrate.engine import migrate  # noqa: E402

IN_A_CLASS = '''import numpy as np
import tensorflow as tf


class Model:
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 3])
        w = tf.Variable(tf.ones([3, 1]))
        self.loss = tf.reduce_mean(tf.square(tf.matmul(self.x, w) - 1.0))
        self.global_step = tf.Variable(0, trainable=False, name='global_step')
        self.lr = tf.train.exponential_decay(0.01, self.global_step, 2, 0.9)
        opt = tf.train.AdamOptimizer(self.lr)
        self.train_op = opt.minimize(self.loss, global_step=self.global_step)


model = Model()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(5):
        _, l = sess.run([model.train_op, model.loss], feed_dict={model.x: np.ones((4, 3), np.float32)})
        print(l)
'''
AT_MODULE_LEVEL = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.ones([3, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
global_step = tf.Variable(0, trainable=False, name='global_step')
lr = tf.train.exponential_decay(0.01, global_step, 2, 0.9)
opt = tf.train.AdamOptimizer(lr)
train_op = opt.minimize(loss, global_step=global_step)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(5):
        _, l = sess.run([train_op, loss], feed_dict={x: np.ones((4, 3), np.float32)})
        print(l)
'''


def test_a_schedule_made_at_module_level_is_read_at_the_step():
    outcome = migrate(AT_MODULE_LEVEL, "train.py", to="tf2")
    assert outcome.tier == "tf2", outcome.notes
    assert "AdamOptimizer(lambda: lr(global_step))" in outcome.text


def test_a_schedule_made_in_a_class_is_read_at_the_step_and_trains_like_tf1(tmp_path):
    outcome = migrate(IN_A_CLASS, "train.py", to="tf2")
    assert outcome.tier == "tf2", outcome.notes
    assert "AdamOptimizer(lambda: self.lr(self.global_step))" in outcome.text
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(IN_A_CLASS)
    new.write_text(outcome.text)
    proc = run_tf1clip("parity", old, new, cwd=tmp_path, timeout=600)  # decays at steps 2 and 4
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("PASS")


def test_tf1_decays_become_keras_schedules_and_assign_functions_methods():
    """inverse_time_decay, polynomial_decay, cosine_decay, piecewise_constant → the Keras 3 schedule of the same
    formula (fixtures/tf2_safety/probes/learning_rate_schedules.py proves them by parity); tf.assign_add(v, 1)
    → v.assign_add(1); a use_locking=True is refused, saying so."""
    text = (ROOT / "fixtures" / "tf2_safety" / "probes" / "learning_rate_schedules.py").read_text()
    out = migrate(text, "s.py", to="tf2")
    assert out.tier == "tf2", out.notes
    for line in ("lr1 = tf.keras.optimizers.schedules.InverseTimeDecay(0.2, decay_steps=2, decay_rate=0.5, "
                 "staircase=True)",
                 "lr2 = tf.keras.optimizers.schedules.PolynomialDecay(0.2, decay_steps=3, end_learning_rate=0.01, "
                 "power=2.0, cycle=True)",
                 "lr3 = tf.keras.optimizers.schedules.CosineDecay(0.2, decay_steps=5, alpha=0.1)",
                 "lr4 = tf.keras.optimizers.schedules.PiecewiseConstantDecay([2, 4], [0.2, 0.1, 0.05])",
                 "    global_step.assign_add(1)"):
        assert line + "\n" in out.text, line
    locked = migrate(text.replace("tf.assign_add(global_step, 1)", "tf.assign_add(global_step, 1, use_locking=True)"),
                     "s.py", to="tf2")
    assert locked.tier == "compat" and any("tf.assign_add(use_locking=True) is not converted" in n.message
                                           for n in locked.notes)

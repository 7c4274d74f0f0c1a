"""A float a function of the graph reads as a global, bound again after TF 1.x built the graph (`step_reads.literal_reaching`).

`clip_norm = 0.05`, a class whose method calls `optimize_loss(..., clip_gradients=clip_norm)` when `Model()`
runs, then `clip_norm = 100.0` before the session. TF 1.x clipped at 0.05. Inside the method the name is
the module's global, so the definition that reaches it is the one reaching the module statement being read
(`model = Model()`). It was looked up in the method's own scope, which binds nothing, and the file was
refused ("optimize_loss(clip_gradients=clip_norm): not known here to be a float"; progen seeds 41, 50 and 63).
Variants, each printing what TF 1.x printed: at module level, in a function, in a method (its global step
made inline, its ops unpacked as `loss, train_op = model.loss, model.train_op`), and a function binding the
name itself (its local is read in place under a fresh name: `tr.inlined_names` gives the input's name, whose
definition reaching the call is the function's `clip_norm = 0.05`). A function returning `loss,
optimize_loss(...)` in one tuple is refused, saying to bind the op to its own name.
"""
import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

SCRIPT = '''import numpy as np
import tensorflow as tf

clip_norm = 0.05
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.ones([4, 3]) * 0.3 - tf.reshape(tf.range(12, dtype=tf.float32), [4, 3]) * 0.05, name="W")
V = tf.Variable(tf.ones([3, 1]) * -0.2, name="V")
{build}
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
clip_norm = 100.0
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5))
    print([v.round(4).tolist() for v in sess.run([W, V])])
'''
LOSS = "loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, W)), V) - y))"
TRAIN = ('tf.contrib.layers.optimize_loss(loss, tf.train.get_or_create_global_step(), learning_rate=0.5, '
         'optimizer="SGD", clip_gradients=clip_norm)')


def _indented(lines: list, depth: int) -> str:
    return "".join(" " * depth + line + "\n" for line in lines)


BUILDS = {
    "module": f"{LOSS}\ntrain_op = {TRAIN}\n",
    "function": ("def build():\n" + _indented([LOSS, f"op = {TRAIN}", "return loss, op"], 4)
                 + "\n\nloss, train_op = build()\n"),
    "function's own": ("def build():\n" + _indented(["clip_norm = 0.05", LOSS, f"op = {TRAIN}", "return loss, op"], 4)
                       + "\n\nloss, train_op = build()\n"),
    "method": ("class Model:\n    def __init__(self):\n        self.build_training()\n\n"
               "    def build_training(self):\n" + _indented([LOSS.replace("loss =", "self.loss ="),
                                                             f"self.train_op = {TRAIN.replace('(loss', '(self.loss')}"], 8)
               + "\n\nmodel = Model()\nloss, train_op = model.loss, model.train_op\n"),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_the_step_clips_with_the_value_tf1_built_with(name):
    out = tier_output(SCRIPT.format(build=BUILDS[name]))
    step = out[out.index("def train_step"):out.index("get_concrete_function")]
    if name == "function's own":  # the helper's local, read in place under a fresh name bound once
        assert "clip_by_global_norm(gradients, clip_norm_2)" in step and "clip_norm_2 = 0.05" in out
        assert out.count("clip_norm_2 =") == 1
    else:
        assert "clip_by_global_norm(gradients, 0.05)" in step
    assert "clip_norm = 100.0" in out


@pytest.mark.parametrize("name", sampled(sorted(BUILDS), {"function's own"}))
def test_it_prints_and_trains_like_tf1(tmp_path, name):
    assert_prints_and_trains_alike(tmp_path, SCRIPT.format(build=BUILDS[name]), 4)


def test_an_update_op_returned_beside_the_loss_is_refused_saying_how_to_bind_it():
    build = "def build():\n" + _indented([LOSS, f"return loss, {TRAIN}"], 4) + "\n\nloss, train_op = build()\n"
    from codemods.tf2.translator import translate

    result = translate(SCRIPT.format(build=build), "t.py")
    assert result.text is None
    note = next(n for n in result.notes if n.kind == "human")
    assert "its update op was built in one assignment with other values" in note.message
    assert "bind the op to a name of its own first" in note.message

"""A placeholder's shape reads names where TF 1.x made it; the TF 2 program reads the same shape later.

`x = tf.placeholder(tf.float32, [None, X.shape[1]])` took X's width at that line. The TF2 output
evaluates the same expression again where it builds the layer on `x` (`layer.build((None,
X.shape[1]))`, where TF 1.x made its variables) and where it traces the step that takes `x`
(`tf.TensorSpec([None, X.shape[1]], ...)`). When the script binds `X` again in between
(`X = X[:, :3]`), the output built a layer of another width, or a step whose signature refused
the feed: a crash where TF 1.x trained (found while testing this session's array shapes). Which
definition of each name reaches those points is now checked against the one that reached the
placeholder (`step_reads.check_placeholder_shape`); a binding after the step is traced (a
shuffle in the training loop) changes nothing and converts. The same holds for a width another op
took from the script (`flat = tf.reshape(x, [-1, n])`, then `n = 3`, then a layer on `flat`): each
name of a static dimension is checked against where TF 1.x read it (`Program.mark_dims`).
"""
import pytest

from conftest import assert_prints_and_trains_alike, refusal, sampled, tier_output

HEAD = '''import numpy as np
import tensorflow as tf
X = np.linspace(0, 1, 120, dtype=np.float32).reshape(20, 6)
Y = np.linspace(-1, 1, 20, dtype=np.float32).reshape(20, 1)
'''
MODULE_INPUTS = "x = tf.placeholder(tf.float32, [None, X.shape[1]])\ny = tf.placeholder(tf.float32, [None, 1])\n"
MODEL = '''h = tf.layers.dense(x, 4, kernel_initializer=tf.constant_initializer(0.1))
out = tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(0.1))
loss = tf.reduce_mean(tf.square(out - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
'''
LOOP = '''sess = tf.Session()
sess.run(tf.global_variables_initializer())
data = X
for i in range(3):
{shuffle}    _, l = sess.run([train_op, loss], {{x: data, y: Y}})
    print(i, round(float(l), 5))
'''
FUNCTION_INPUTS = ("def inputs():\n    x = tf.placeholder(tf.float32, [None, X.shape[1]])\n"
                   "    y = tf.placeholder(tf.float32, [None, 1])\n    return x, y\nx, y = inputs()\n")
CLASS = '''class Model:
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, X.shape[1]])
        self.y = tf.placeholder(tf.float32, [None, 1])
        h = tf.layers.dense(self.x, 4)
        self.loss = tf.reduce_mean(tf.square(tf.layers.dense(h, 1) - self.y))
        self.train_op = tf.train.GradientDescentOptimizer(0.1).minimize(self.loss)
m = Model()
x, y, loss, train_op = m.x, m.y, m.loss, m.train_op
'''
REBIND = "X = X[:, :3]\n"
REFUSED = {  # variant: (script, what reads the shape again)
    "module_rebound_before_the_layer": (HEAD + MODULE_INPUTS + REBIND + MODEL + LOOP.format(shuffle=""),
                                        "the build of `tf.layers.dense`'s Keras layer"),
    "module_rebound_before_the_step": (HEAD + MODULE_INPUTS + MODEL + REBIND + LOOP.format(shuffle=""),
                                       "the input signature of `train_step`"),
    "function_made_rebound_before_the_layer": (HEAD + FUNCTION_INPUTS + REBIND + MODEL + LOOP.format(shuffle=""),
                                               "the build of `tf.layers.dense`'s Keras layer"),
    "class_made_rebound_before_the_step": (HEAD + CLASS + REBIND + LOOP.format(shuffle=""),
                                           "the input signature of `train_step`"),
}


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_a_shape_name_bound_again_before_the_output_reads_it_is_refused(variant):
    script, where = REFUSED[variant]
    from codemods.tf2.translator import translate
    line, message = refusal(translate(script, "t.py"))
    assert script.splitlines()[line - 1] == REBIND.strip(), (line, message)
    assert f"`X` is bound again at line {line} after TF 1.x made placeholder" in message and where in message, message


# the same for a width another op took from the script: `tf.reshape(x, [-1, n])`, then `n` bound again
RESHAPED = (HEAD + "n = 6\nx = tf.placeholder(tf.float32, [None, 2, 3])\ny = tf.placeholder(tf.float32, [None, 1])\n"
            "flat = tf.reshape(x, [-1, n])\n{between}" + MODEL.replace("dense(x,", "dense(flat,")
            + LOOP.format(shuffle="").replace("{x: data", "{x: data.reshape(20, 2, 3)").replace("{", "{{")
            .replace("}", "}}"))


def test_a_reshape_width_bound_again_before_the_layer_is_refused():
    from codemods.tf2.translator import translate
    script = RESHAPED.format(between="n = 3\n")
    line, message = refusal(translate(script, "t.py"))
    assert script.splitlines()[line - 1] == "n = 3"
    assert f"`n` is bound again at line {line} after TF 1.x read it at line {line - 1} for the width `n`" in message
    assert "the build of `tf.layers.dense`'s Keras layer" in message, message


CONVERTS = {
    "a_reshape_width_bound_once": RESHAPED.format(between=""),
    "shuffled_in_the_training_loop": HEAD + MODULE_INPUTS + MODEL + LOOP.format(
        shuffle="    data = data[np.arange(20)[::-1]]\n    X = data\n"),
    "a_helper_parameter": (HEAD + "def inputs(n_in):\n    x = tf.placeholder(tf.float32, [None, n_in])\n"
                           "    y = tf.placeholder(tf.float32, [None, 1])\n    return x, y\nx, y = inputs(6)\n"
                           "n_in = 3\n" + MODEL + LOOP.format(shuffle="")),
}


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_a_binding_the_output_does_not_read_there_converts(variant, tmp_path):
    script = CONVERTS[variant]
    out = tier_output(script)
    assert any(f".build((None, {w}))" in out for w in ("6", "X.shape[1]", "n")), out
    if variant in sampled(CONVERTS, ("shuffled_in_the_training_loop",)):  # the others under TF1CLIP_FULL_PROOF
        assert_prints_and_trains_alike(tmp_path, script, 3)

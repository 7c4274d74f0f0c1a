"""A learning-rate decay evaluated at an expression of the global step, not the step itself.

TensorFlow's own MNIST tutorial (`models/image/mnist/convolutional.py`, and the scripts copied from it)
decays at `batch * BATCH_SIZE`, the number of examples seen, with a float `batch` variable that is
trainable (its gradient is None, and TF 1.x's `minimize` skips it):

    batch = tf.Variable(0, dtype=tf.float32)
    learning_rate = tf.train.exponential_decay(0.01, batch * BATCH_SIZE, train_size, 0.95, staircase=True)
    optimizer = tf.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss, global_step=batch)

TF 1.x computed the rate from the variable's value when the update read it. The Keras schedule is
evaluated at the same expression at each read (`lambda: learning_rate(batch * 64)`), with a name bound
once to a number written as that number (the value TF 1.x built with). Anything else at that point (a
placeholder, a second variable, a name bound again) is refused, saying what the decay is evaluated at.
Each converted variant prints and trains like TF 1.x (the tutorial's on CI, every one under full proofs).
"""
import pytest

from conftest import assert_prints_and_trains_alike, refusal, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf
{head}
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.ones([3, 1]) * 0.2 - tf.reshape(tf.range(3, dtype=tf.float32), [3, 1]) * 0.1)
loss = tf.reduce_mean(tf.square(tf.matmul(x, W) - y))
{decay}
xs = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0 - 0.2
ys = np.linspace(-1, 1, 4, dtype=np.float32).reshape(4, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(6):
        _, l, r = sess.run([train_op, loss, lr], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5), round(float(r), 6))
'''
TUTORIAL = '''gs = tf.Variable(0, dtype=tf.float32)
lr = tf.train.exponential_decay(0.1, gs * BATCH_SIZE, 32, 0.5, staircase=True)
train_op = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, global_step=gs)'''
VARIANTS = {  # variant: (head, the decay binding `lr` and `train_op`, the rate the output reads)
    "the_tutorials_float_trainable_step": ("BATCH_SIZE = 16\n", TUTORIAL, "lr(gs * 16)"),
    "a_number_first": ("BATCH_SIZE = 16\n", TUTORIAL.replace("gs * BATCH_SIZE", "BATCH_SIZE * gs"), "lr(16 * gs)"),
    "literals_only": ("", '''gs = tf.Variable(0, trainable=False)
lr = tf.train.exponential_decay(0.1, gs * 2 + 1, 4, 0.5)
train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)''', "lr(gs * 2 + 1)"),
    "an_alias_of_the_decay": ("STEPS = 3\n", '''decay = tf.train.polynomial_decay
gs = tf.Variable(0, trainable=False)
lr = decay(0.1, gs * STEPS, 12, 0.01)
train_op = tf.train.AdamOptimizer(lr).minimize(loss, global_step=gs)''', "lr(gs * 3)"),
    "an_int64_step_divided": ("", '''gs = tf.train.get_or_create_global_step()
lr = tf.train.inverse_time_decay(0.1, gs / 2, 1, 0.5)
train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)''', "lr(gs / 2)"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_decay_at_an_expression_of_the_step_trains_like_tf1(variant, tmp_path):
    head, decay, read = VARIANTS[variant]
    text = TEXT.format(head=head, decay=decay)
    out = tier_output(text)
    assert f"lambda: {read}" in out, out
    if variant in sampled(VARIANTS, ("the_tutorials_float_trainable_step",)):
        assert_prints_and_trains_alike(tmp_path, text, 6)


REFUSED = {  # variant: (head, the point it is evaluated at)
    "a_name_bound_again": ("BATCH_SIZE = 16\nBATCH_SIZE = 8\n", "gs * BATCH_SIZE"),
    "a_placeholder": ("scale = tf.placeholder(tf.float32, [])\n", "gs * scale"),
    "the_step_twice": ("", "gs * gs"),
    "a_tensor": ("", "tf.cast(gs, tf.float32) * 2.0"),
}


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_a_decay_at_anything_else_is_refused_saying_where_it_is_evaluated(variant):
    from codemods.tf2.translator import translate
    head, point = REFUSED[variant]
    decay = f'''gs = tf.Variable(0, trainable=False)
lr = tf.train.exponential_decay(0.1, {point}, 4, 0.5)
train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=gs)'''
    text = TEXT.format(head=head, decay=decay)
    line, message = refusal(translate(text, "t.py"))
    assert text.splitlines()[line - 1].startswith("lr = "), (line, message)
    assert f"exponential_decay at `{point}`: tf1clip converts a decay at one step variable" in message

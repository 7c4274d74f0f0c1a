"""`tf.contrib.layers.optimize_loss(..., learning_rate_decay_fn=lambda lr, gs: ...)`.

TF 1.15's optimize_loss made a float learning rate a variable holding it, then called
`learning_rate_decay_fn(lr, global_step)` and used what it returned as the optimizer's rate. The lambda is
read there, with the rate and the global step for its parameters (a decay of the step becomes its Keras
schedule, read at the step: `tests/test_tf2_decay_points.py`). It was refused before the call was read
(the lambda's body, read alone, decayed at a parameter). A function of the script given instead is
refused, saying why. Each variant trains like TF 1.x (one on CI, all under full proofs).
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
gs = tf.train.get_or_create_global_step()
train_op = {train}
xs = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0 - 0.2
ys = np.linspace(-1, 1, 4, dtype=np.float32).reshape(4, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(6):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print("step", i, round(float(l), 6))
'''
VARIANTS = {  # variant: (head, the train op)
    "exponential_by_name": ("", 'tf.contrib.layers.optimize_loss(loss, gs, 0.1, "SGD", '
                                'learning_rate_decay_fn=lambda lr, s: tf.train.exponential_decay(lr, s, 2, 0.5))'),
    "adam_class_staircase": ("", "tf.contrib.layers.optimize_loss(loss, gs, 0.1, tf.train.AdamOptimizer, "
                                     "learning_rate_decay_fn=lambda lr, s: tf.train.exponential_decay("
                                     "lr, s, 2, 0.5, staircase=True))"),
    "keywords_clipped_polynomial": ("", "tf.contrib.layers.optimize_loss(loss=loss, global_step=gs, "
                                        "learning_rate=0.05, optimizer='Adam', clip_gradients=1.0, learning_rate_decay_fn=lambda lr, gs: "
                                        "tf.train.polynomial_decay(lr, gs, 10, 0.001))"),
    "a_scaled_rate": ("", 'tf.contrib.layers.optimize_loss(loss, gs, 0.1, "SGD", '
                          'learning_rate_decay_fn=lambda lr, s: lr * 0.5)'),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_decay_function_of_optimize_loss_trains_like_tf1(variant, tmp_path):
    head, train = VARIANTS[variant]
    text = TEXT.format(head=head, train=train)
    out = tier_output(text)
    assert "lambda" not in out.replace("lambda: ", ""), out  # the decay function's body, read where it was called
    if variant in sampled(VARIANTS, ("exponential_by_name",)):
        assert_prints_and_trains_alike(tmp_path, text, 6)


def test_a_decay_function_of_the_script_is_refused_saying_why():
    from codemods.tf2.translator import translate
    text = TEXT.format(head="\ndef decay(lr, step):\n    return tf.train.exponential_decay(lr, step, 2, 0.5)\n",
                       train='tf.contrib.layers.optimize_loss(loss, gs, 0.1, "SGD", learning_rate_decay_fn=decay)')
    line, message = refusal(translate(text, "t.py"))
    assert text.splitlines()[line - 1].startswith("train_op = "), (line, message)
    assert "optimize_loss(learning_rate_decay_fn=decay): a lambda written there is converted" in message

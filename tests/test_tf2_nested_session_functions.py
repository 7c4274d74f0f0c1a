"""A function defined inside the function that builds the graph, and given the session to run it.

TensorFlow's MNIST tutorial (`convolutional.py`, and the scripts copied from it) defines
`eval_in_batches(data, sess)` inside `main()`, after the graph, and calls it from the training loop, inside
an expression (`error_rate(eval_in_batches(validation_data, sess), labels)`). Its TF 2 body reads what
`main` binds (the `model` function, the variables), which a function defined inside `main` sees as
Python's closures do. It was refused with "a local of that function it cannot see in Python", which is
false for a function defined there; and once read, its TF 2 form was left out of `main`'s output.

Now such a function is read as a region where it is called (its step is defined in it), written into
`main`'s TF 2 body, and reads `main`'s names as closures do when `main` binds them once. A name `main`
binds again is refused, saying so (the binding the step would read when it runs is not followed). Each
converted variant prints and trains like TF 1.x (one on CI, all under full proofs).
"""
import pytest

from conftest import assert_prints_and_trains_alike, refusal, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf


def main():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    W = tf.Variable(tf.ones([4, 1]) * 0.1)
    k = 2.0

    def model(data):
        return tf.matmul(data, W) * k
    loss = tf.reduce_mean(tf.square(model(x) - y))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    ev = tf.placeholder(tf.float32, [None, 4])
    ev_pred = model(ev) + k
{after_graph}
    def evaluate(data, sess):
        out = np.zeros((data.shape[0], 1), np.float32)
        for begin in range(0, data.shape[0], 4):
            out[begin:begin + 4] = sess.run(ev_pred, feed_dict={{ev: data[begin:begin + 4]}})
        return out

    xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
    ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(3):
            _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
            print("step", step, round(float(l), 5))
{calls}


main()
'''
VARIANTS = {  # variant: the calls after training
    "called_as_a_statement": "        p = evaluate(xs, sess)\n        print(round(float(p.sum()), 4))",
    "called_inside_an_expression": "        print(round(float(evaluate(xs, sess).sum()), 4))",
    "called_twice": "        print(round(float(evaluate(xs, sess).sum()), 4))\n"
                    "        print(round(float(evaluate(xs[::-1] * 2, sess).max()), 4))",
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_function_main_defines_runs_its_step_where_it_is_called(variant, tmp_path):
    text = TEXT.format(after_graph="", calls=VARIANTS[variant])
    out = tier_output(text)
    evaluate = out[out.index("    def evaluate(data):"):out.index("    def train_step(")]
    assert "def compute_ev_pred(ev):" in evaluate and "sess" not in evaluate, out
    if variant in sampled(VARIANTS, ("called_inside_an_expression",)):
        assert_prints_and_trains_alike(tmp_path, text, 3 + VARIANTS[variant].count("print"))


@pytest.mark.parametrize("where", ["before_the_function", "in_the_session"])
def test_a_name_main_binds_again_is_refused_saying_so(where):
    from codemods.tf2.translator import translate
    calls = VARIANTS["called_inside_an_expression"]
    text = TEXT.format(after_graph="    k = 3.0\n" if where == "before_the_function" else "",
                       calls=("        k = 3.0\n" if where == "in_the_session" else "") + calls)
    line, message = refusal(translate(text, "t.py"))
    assert text.splitlines()[line - 1].strip() == "def evaluate(data, sess):", (line, message)
    assert "`evaluate(...)`, a function `main` defines, reads `k` in its TF 2 body, which `main` binds more than " \
           "once" in message

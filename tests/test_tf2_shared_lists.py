"""A list of variables another name, object or function of the script can hold, changed after TF 1.x built
the graph that reads it (`list_growth.shared`, `reaching.Definitions._may_change`).

    d = [W, V]
    g = tf.gradients(loss, d)      # TF 1.x differentiated W and V here
    e = d
    e.pop()                        # the same list: d is [W] from here on

Statements on the list's own name (`d.pop()`) were definitions of `d` already. Through another name,
a function changing it as a global, a lambda, a dict holding it, a default argument, the header of an
`if` or a `for` calling such a function, TF 1.x's graph
still held [W, V] while the step, traced after the change, read [W]: the TF 2 program printed one
gradient where TF 1.x printed two (wrong conversions, found by writing these variants). Now a statement
that may change such a list (changes an object in place, calls code of the script that may, hands the
list to anything but TensorFlow or a builtin that only reads it) is a definition of it too, so the step
is traced before it, or refused saying which line may change the list. A function that only reads the
list (`len(d)`) changes nothing; the 201 proving-ground entries, the fixtures and progen 0:200 translate
as before.
"""
import pytest

from conftest import FIXED_DATA, FIXED_START, assert_prints_and_trains_alike, refusal, sampled, tier_output

SCRIPT = "import numpy as np\nimport tensorflow as tf\n" + FIXED_START + '''loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, W)), V) - y))
train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
d = [W, V]
g = tf.gradients(loss, d)
{change}
''' + FIXED_DATA + '''with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(2):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print(round(float(l), 5), len(d), [np.round(v, 4).tolist() for v in sess.run(g, {{x: xs, y: ys}})])
'''

# name: the statements after the graph, the last of which changes the list
CHANGES = {
    "another name": "e = d\ne.pop()",
    "a function changing the global": "def drop():\n    d.pop()\n\n\ndrop()",
    "a lambda": "drop = lambda: d.pop()\ndrop()",
    "a dict holding it": "box = {'vs': d}\nbox['vs'].pop()",
    "a list holding it": "box = [d]\nbox[0].pop()",
    "a default argument": "def drop(l=d):\n    l.pop()\n\n\ndrop()",
    # a compound statement's header that runs such code
    "an if's test": "def drop():\n    d.pop()\n    return True\n\n\nif drop():\n    n = 1",
    "a for's iterable": "def drop():\n    d.pop()\n    return [1]\n\n\nfor _ in drop():\n    n = 1",
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_the_step_is_traced_before_the_change(name):
    change = CHANGES[name]
    out = tier_output(SCRIPT.format(change=change))
    changing = [line for line in change.splitlines() if not line.startswith((" ", "def "))][-1]
    assert out.index("get_concrete_function()") < out.index(changing), changing


# run and parity on CI: the function changing the global; every case under TF1CLIP_FULL_PROOF=1
@pytest.mark.parametrize("name", sampled(sorted(CHANGES), {"a function changing the global"}))
def test_it_prints_and_trains_like_tf1(tmp_path, name):
    assert_prints_and_trains_alike(tmp_path, SCRIPT.format(change=CHANGES[name]), 2)


def test_a_function_that_only_reads_the_list_changes_nothing():
    out = tier_output(SCRIPT.format(change="def size():\n    return len(d)\n\n\nprint(size())"))
    assert "tape.gradient(loss, d)" in out


def test_a_change_between_two_graphs_that_read_the_list_is_refused_with_its_line():
    from codemods.tf2.translator import translate

    text = SCRIPT.format(change="e = d\ne.pop()\ng2 = tf.gradients(loss, d)").replace(
        "sess.run(g, ", "sess.run([g, g2], ")
    line, message = refusal(translate(text, "t.py"))
    assert line == 12 and message.endswith(
        "line 12 may change `d` (another name, object or function of the script can hold it), and TF 1.x built "
        "the graph that reads it at line 10: TF 1.x kept what it held there, the TF 2 step (traced at line 18) "
        "would read it as it is then"), message

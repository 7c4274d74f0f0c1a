"""A comment above a `with` block: the block's first statement keeps its own input line.

chiphuyen's word2vec: `# Step 5: define optimizer` above `with tf.name_scope('optimizer'):` and
`optimizer = tf.train.GradientDescentOptimizer(...).minimize(loss)` inside it. The `with` is read through
and its comment moves onto the block's first statement; that new statement was given the `with`'s line, so
the reaching-definitions check saw the train op's name bound one line after the statement that built it,
and refused with a false reason ("`optimizer` is bound again at line 67 after TF 1.x built the graph that
reads it (line 66)"). Without the comment the same file converted. Each variant converts, and one trains
and prints like TF 1.x.
"""
import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

BODY = '''x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(tf.ones([4, 1]) * 0.1)
with tf.name_scope('loss'):
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))

# Step 5: define optimizer
with tf.{scope}('optimizer'):
    optimizer = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
xs = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
ys = np.linspace(0, 1, 4, dtype=np.float32).reshape(4, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        l, _ = sess.run([loss, optimizer], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5))
'''


def _text(where: str, scope: str) -> str:
    body = BODY.format(scope=scope)
    if where == "function":
        body = "def train():\n" + "".join("    " + line if line.strip() else line
                                          for line in body.splitlines(True)) + "\n\ntrain()\n"
    return "import numpy as np\nimport tensorflow as tf\n\n" + body


VARIANTS = [(where, scope) for where in ("module", "function") for scope in ("name_scope", "variable_scope")]


@pytest.mark.parametrize("where, scope", VARIANTS)
def test_a_commented_with_block_converts(where, scope, tmp_path):
    text = _text(where, scope)
    out = tier_output(text)
    assert "# Step 5: define optimizer" in out, out
    if (where, scope) in sampled(VARIANTS, (("function", "name_scope"),)):
        assert_prints_and_trains_alike(tmp_path, text, 3)

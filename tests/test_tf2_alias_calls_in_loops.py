"""A loop of the graph calling TensorFlow through an alias with a list method's name (`codemods/tf2/loop_fills.py`).

`T = tf`, then `for M in [W, W2]: h = T.add(T.matmul(h, M), 0.1)`: `add`, `sort` and `reverse` are also
methods that change a set or a list, and the loop was read as filling `T`, the alias, in place. It was
refused with a false reason ("this block changes `T`, made before it, while the graph is built"; progen
seeds 27, 389 and 407). A name bound to a TensorFlow module or function is no container: each variant
converts and prints what TF 1.x printed (alias of `tf`, of `tf.math`, `T.sort`, `T.reverse`).
"""
import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output

LOOP = '''W2 = tf.Variable(tf.ones([3, 3]) * 0.1 + tf.eye(3) * 0.2, name="W2")
h = x
for M in [W, W2]:
    h = tf.tanh({call})
loss = tf.reduce_mean(tf.square(tf.matmul(h, V) - y))
'''
VARIANTS = {
    "alias_add": ("T = tf", "T.add(T.matmul(h, M), 0.1)"),
    "math_alias_add": ("math = tf.math", "math.add(tf.matmul(h, M), 0.1)"),
    "alias_sort": ("T = tf", "T.sort(T.matmul(h, M), axis=1)"),
    "alias_reverse": ("T = tf", "T.reverse(T.matmul(h, M), [1])"),
}


def _script(name: str) -> str:
    head, call = VARIANTS[name]
    return SMALL_TRAINING.format(head=head, model=LOOP.format(call=call), after="")


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_loop_converts_into_the_step(name):
    out = tier_output(_script(name))
    step = out[out.index("def train_step"):out.index("get_concrete_function")]
    function = VARIANTS[name][1].split("(")[0].split(".")[-1]  # the alias is written `tf.` or kept
    assert "for M in [W, W2]:" in step and f".{function}(" in step


@pytest.mark.parametrize("name", sampled(sorted(VARIANTS), {"alias_add"}))
def test_it_prints_and_trains_like_tf1(tmp_path, name):
    assert_prints_and_trains_alike(tmp_path, _script(name), 4)

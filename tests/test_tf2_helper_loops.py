"""A helper whose loop makes state over values its call gives (`def mlp(h, sizes): for n in sizes:
h = tf.layers.dense(h, n)`, called as `mlp(x, [8, 6, 1])`): TF 1.x ran the loop once per pass while it
built the graph, so the TF2 tier reads the helper at its call (`inline`) and the loop as its passes
(`unroll.inlined`), exactly as for a loop of the module over values fixed in the file. Variants: the
list given, by default, as a tuple by keyword, a slice of it, `range` of a parameter or of a number of
the module, `enumerate` naming scopes, variables appended to a list, two calls with two lists, a helper
of the script inside the loop, TensorFlow through an alias. Each prints what the original printed
(`tf1clip run`) and trains like it (`tf1clip parity`). Refused, with a true reason: a list of the module
given by name (something else may hold it), a list the helper changes, a number of passes the file does
not fix, and (not yet followed in a helper) the variables of the passes appended to a list of the helper."""
import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled
from codemods.tf2.translator import translate

DENSE = "tf.layers.dense(h, n, activation=tf.nn.tanh, kernel_initializer=tf.constant_initializer(0.1))"
LOSS = "loss = tf.reduce_mean(tf.square(out + tf.matmul(tf.matmul(x, W), V) - y))\n"
STACK = f"def stack(h, sizes):\n    for n in sizes:\n        h = {DENSE}\n    return h\n"

CONVERTS = {
    "a_list_given": (STACK, "out = stack(tf.matmul(x, W), [5, 1])\n" + LOSS),
    "by_default": (STACK.replace("sizes)", "sizes=[5, 2, 1])"), "out = stack(tf.matmul(x, W))\n" + LOSS),
    "a_tuple_by_keyword": (STACK, "out = stack(sizes=(4, 1), h=tf.matmul(x, W))\n" + LOSS),
    "a_slice_of_it": (STACK.replace("in sizes", "in sizes[1:]"), "out = stack(tf.matmul(x, W), [3, 5, 1])\n" + LOSS),
    "range_of_a_parameter": (f'''def stack(h, depth):
    for i in range(depth):
        h = tf.layers.dense(h, 3, activation=tf.nn.tanh, kernel_initializer=tf.constant_initializer(0.1),
                            name="fc%d" % i)
    return tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(-0.1), name="last")
''', "out = stack(tf.matmul(x, W), 2)\n" + LOSS),
    "range_of_a_module_number": (f'''DEPTH = 3
def stack(h):
    for _ in range(DEPTH - 1):
        h = tf.layers.dense(h, 2, activation=tf.nn.tanh, kernel_initializer=tf.constant_initializer(0.1))
    return tf.layers.dense(h, 1, kernel_initializer=tf.constant_initializer(0.2))
''', "out = stack(tf.matmul(x, W))\n" + LOSS),
    "enumerate_naming_scopes": ('''def stack(h, sizes):
    for i, n in enumerate(sizes):
        with tf.variable_scope("layer%d" % i):
            w = tf.get_variable("w", [3 if i == 0 else sizes[i - 1], n], initializer=tf.constant_initializer(0.1))
            h = tf.nn.tanh(tf.matmul(h, w))
    return h
''', "out = stack(tf.matmul(x, W), [4, 1])\n" + LOSS),
    "two_calls_two_lists": (STACK, "a = stack(tf.matmul(x, W), [2, 1])\nb = stack(tf.matmul(x, W), [4, 3, 1])\n"
                            + LOSS.replace("out +", "a - b +")),
    "a_helper_inside": (f"def layer(h, n):\n    return {DENSE}\n" + STACK.replace(DENSE, "layer(h, n)"),
                        "out = stack(tf.matmul(x, W), [5, 1])\n" + LOSS),
    "through_an_alias": ("L = tf.layers\n" + STACK.replace("tf.layers.dense", "L.dense"),
                         "out = stack(tf.matmul(x, W), [5, 1])\n" + LOSS),
}


def _script(variant: str) -> str:
    head, model = CONVERTS[variant]
    return SMALL_TRAINING.format(head=head, model=model, after="")


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_the_loop_is_read_as_its_passes(variant):
    result = translate(_script(variant), "t.py")
    assert result.text is not None, [n.message for n in result.notes if n.kind == "human"]
    assert any("passes, in order" in n.message for n in result.notes)
    assert "for " not in result.text.split("def train_step")[0].split("class AdamOptimizer")[0]


# run and parity on CI: the scopes named by enumerate; every variant under TF1CLIP_FULL_PROOF
# (benchmarks/full_proofs.py)
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTS), ("enumerate_naming_scopes",)))
def test_it_prints_and_trains_like_tf1(variant, tmp_path):
    assert_prints_and_trains_alike(tmp_path, _script(variant), 4)


def test_the_passes_are_said_at_the_call_and_the_loop():
    notes = [(n.line, n.message) for n in translate(_script("a_list_given"), "t.py").notes if "passes" in n.message]
    assert notes == [(12, "the loop at line 4 makes state over values this call of `stack` fixes → its 2 passes, "
                          "in order (TF 1.x ran it once, while it built the graph)")]


def _refusal(head: str, model: str) -> str:
    result = translate(SMALL_TRAINING.format(head=head, model=model, after=""), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    return f"{note.line}: {note.message}"


STATE_IN_A_LOOP = ("4: not converted to the TF2 tier: state is created inside a loop or condition: not converted "
                   "(TF 1.x created it once per pass; a TF 2 step must not)")


def test_a_list_of_the_module_given_by_name_is_refused():
    # the module's list may be held and changed elsewhere: its passes are not fixed by the file
    assert _refusal("SIZES = [5, 1]\n" + STACK, "out = stack(tf.matmul(x, W), SIZES)\n" + LOSS) == \
        STATE_IN_A_LOOP.replace("4:", "5:")


def test_a_list_the_helper_changes_is_refused():
    changes = STACK.replace("    for n", "    sizes.append(1)\n    for n")
    assert _refusal(changes, "out = stack(tf.matmul(x, W), [5])\n" + LOSS) == STATE_IN_A_LOOP.replace("4:", "5:")


def test_passes_the_file_does_not_fix_are_refused():
    # a comprehension makes the list: its values are not read from the file
    assert _refusal(STACK, "out = stack(tf.matmul(x, W), [n for n in (5, 1)])\n" + LOSS) == STATE_IN_A_LOOP


def test_variables_appended_to_a_list_of_the_helper_are_refused():
    # a list the helper fills is not followed item by item (list_growth follows the module's own lists)
    model = ("out, ws = stack(tf.matmul(x, W), [3, 4, 1])\n"
             + LOSS.replace("\n", " + 0.01 * tf.add_n([tf.nn.l2_loss(w) for w in ws])\n"))
    refusal = _refusal(APPENDS, model)
    assert refusal.startswith("7: not converted to the TF2 tier: `weights.append(")
    assert refusal.endswith("is given variables: tf1clip cannot follow what it reads of them (TF 2's variables have "
                            "other names, and no identity hash)")


APPENDS = '''def stack(h, dims):
    weights = []
    for n_in, n_out in zip(dims, dims[1:]):
        w = tf.Variable(tf.ones([n_in, n_out]) * 0.1)
        weights.append(w)
        h = tf.nn.tanh(tf.matmul(h, w))
    return h, weights
'''

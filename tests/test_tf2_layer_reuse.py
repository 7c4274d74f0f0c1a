"""A `tf.layers` / slim layer's own `reuse=` (TF 1.x opened the layer's variable scope with it): `True`
reuses the layer of that name, `tf.AUTO_REUSE` reuses it or makes it the first time, `False` and `None`
inherit the enclosing scope's. The TF2 tier uses the same Keras layer again where TF 1.x reused its
variables. Variants: AUTO_REUSE in a helper called twice, a `reuse` parameter given True at the second
call, AUTO_REUSE through `tf.compat.v1`, `None` inside a reusing scope, a slim layer by its scope, and the
current scope set to reuse (`tf.get_variable_scope().reuse_variables()`, through name scopes, in the root
scope entered again: the multi-tower form; the reuse ends with its block, as TF 1.x's scope object's). Each
prints what the original printed and trains like it. Refused, with a true reason: a reuse value
tf1clip does not know, a reusing layer without a name (TF 1.x opens the base name itself), a second
layer of a name with reuse=False (TF 1.x raised ValueError)."""
import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled
from codemods.tf2.translator import translate

INIT = "kernel_initializer=tf.constant_initializer(0.1)"
LOSS = "loss = tf.reduce_mean(tf.square(a + b + tf.matmul(tf.matmul(x, W), V) - y))\n"
CONVERTS = {
    "auto_reuse_in_a_helper": f'''def tower(inp):
    return tf.layers.dense(inp, 1, name="t", reuse=tf.AUTO_REUSE, {INIT})
a = tower(tf.matmul(x, W))
b = tower(tf.matmul(x, W) * 2)
''',
    "a_reuse_parameter": f'''def disc(inp, reuse=False):
    return tf.layers.dense(inp, 1, name="d", reuse=reuse, {INIT})
a = disc(tf.matmul(x, W))
b = disc(tf.matmul(x, W) * 2, reuse=True)
''',
    "through_compat_v1": f'''a = tf.layers.dense(tf.matmul(x, W), 1, name="t", reuse=tf.compat.v1.AUTO_REUSE, {INIT})
b = tf.layers.dense(tf.matmul(x, W) * 2, 1, name="t", reuse=tf.compat.v1.AUTO_REUSE)
''',
    "none_inside_a_reusing_scope": f'''with tf.variable_scope("m"):
    a = tf.layers.dense(tf.matmul(x, W), 1, name="t", {INIT})
with tf.variable_scope("m", reuse=True):
    b = tf.layers.dense(tf.matmul(x, W) * 2, 1, name="t", reuse=None)
''',
    # the current variable scope, asked of TensorFlow (`tf.get_variable_scope()`) and set to reuse: a tower
    "the_current_scope_reused": f'''with tf.variable_scope("m"):
    a = tf.layers.dense(tf.matmul(x, W), 1, name="t", {INIT})
    tf.get_variable_scope().reuse_variables()
    b = tf.layers.dense(tf.matmul(x, W) * 2, 1, name="t")
''',
    "the_current_scope_through_a_name_scope": f'''with tf.variable_scope("m"):
    with tf.name_scope("tower_0"):
        a = tf.layers.dense(tf.matmul(x, W), 1, name="t", {INIT})
    tf.get_variable_scope().reuse_variables()
    with tf.name_scope("tower_1"):
        b = tf.layers.dense(tf.matmul(x, W) * 2, 1, name="t")
''',
    "towers_in_the_root_scope_entered_again": f'''def tower(inp):
    return tf.layers.dense(inp, 1, name="t", {INIT})
with tf.variable_scope(tf.get_variable_scope()):
    with tf.name_scope("tower_0"):
        a = tower(tf.matmul(x, W))
    tf.get_variable_scope().reuse_variables()
    with tf.name_scope("tower_1"):
        b = tower(tf.matmul(x, W) * 2)
''',
    "a_slim_layer_by_its_scope": '''import tensorflow.contrib.slim as slim
a = slim.fully_connected(tf.matmul(x, W), 1, scope="fc", reuse=tf.AUTO_REUSE,
                         weights_initializer=tf.constant_initializer(0.1))
b = slim.fully_connected(tf.matmul(x, W) * 2, 1, scope="fc", reuse=tf.AUTO_REUSE)
''',
}


def _script(model: str) -> str:
    return SMALL_TRAINING.format(head="", model=model + LOSS, after="")


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_the_layer_is_made_once_and_used_again(variant):
    result = translate(_script(CONVERTS[variant]), "t.py")
    assert result.text is not None, [n.message for n in result.notes if n.kind == "human"]
    assert sum("reuses layer" in n.message for n in result.notes) == 1
    assert result.text.count("tf.keras.layers.Dense(") == 1


# run and parity on CI: the reuse parameter; every variant under TF1CLIP_FULL_PROOF (benchmarks/full_proofs.py)
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTS), ("a_reuse_parameter",)))
def test_it_prints_and_trains_like_tf1(variant, tmp_path):
    assert_prints_and_trains_alike(tmp_path, _script(CONVERTS[variant]), 4)


def _refusal(model: str) -> str:
    result = translate(_script(model), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    return f"{note.line}: {note.message}"


def test_a_reuse_tf1clip_does_not_know_is_refused():
    model = CONVERTS["a_reuse_parameter"].replace("reuse=True)", "reuse=bool(np.random.rand() > 2))")
    assert _refusal(model) == (
        "9: not converted to the TF2 tier: `tf.layers.dense(reuse=reuse)`: a reuse that is not True, False, "
        "None or tf.AUTO_REUSE is not converted")


def test_a_reusing_layer_without_a_name_is_refused():
    model = CONVERTS["through_compat_v1"].replace(', name="t"', "")
    assert _refusal(model) == ("8: not converted to the TF2 tier: `tf.layers.dense(reuse=tf.compat.v1.AUTO_REUSE)` "
                               "without a name is not converted")


def test_reuse_set_on_a_scope_ends_with_its_block():
    """A second block of the same name is a new scope object in TF 1.x: its layer is not reused, and a second
    `t` there raised ValueError; refused as such."""
    model = CONVERTS["the_current_scope_reused"] + 'with tf.variable_scope("m"):\n' \
        '    c = tf.layers.dense(tf.matmul(x, W), 1, name="t")\n'
    assert _refusal(model) == ("13: not converted to the TF2 tier: layer `m/t` exists already and is not reused "
                               "here (TF 1.x raised ValueError)")


def test_a_second_layer_of_a_name_without_reuse_is_refused_as_tf1_raised():
    model = CONVERTS["a_reuse_parameter"].replace("reuse=True)", "reuse=False)")
    assert _refusal(model).endswith("layer `d` exists already and is not reused here (TF 1.x raised ValueError)")

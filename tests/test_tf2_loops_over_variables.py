"""A Python loop over the program's variables at build time (`compound_statements.over_variables`): TF 1.x
ran it once while it built the graph, over its variable objects; the TF2 tier keeps it where it was, over
the same variables (made in place there), as plain Python. What the body reads of each item is checked
(`item_uses`): `.name` only where TF 2 keeps TF 1.x's names, `.get_shape()` read as `.shape` (a Keras 3
variable has no `get_shape`: the TensorShape is the same), nothing handed on whole (`print(v)`)."""
import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output

MODEL = "loss = tf.reduce_mean(tf.square(tf.matmul(tf.matmul(x, W), V) - y))\n"
DENSE = ("h = tf.layers.dense(tf.matmul(x, W), 3, name='d', kernel_initializer=tf.constant_initializer(0.1))\n"
         "loss = tf.reduce_mean(tf.square(tf.matmul(h, V) - y))\n")
COUNT = "total = 0\nfor v in {vars}:\n    total += int(np.prod(v.{shape}.as_list()))\nprint('parameters', total)\n"
CONVERTS = {  # variant: (model, the loop, the lines the script prints)
    "names": (MODEL, "for v in tf.trainable_variables():\n    print(v.name)\n", 6),
    "names_and_shapes": (MODEL, "for v in tf.trainable_variables():\n    print(v.name, v.get_shape().as_list())\n", 6),
    "a_list_literal": (MODEL, "for v in [W, V]:\n    print(v.name)\n", 6),
    "a_name_bound_to_them": (MODEL, "tvars = tf.trainable_variables()\nfor v in tvars:\n    print(v.name)\n", 6),
    "through_an_alias": (MODEL, "T = tf\nfor v in T.trainable_variables():\n    print(v.name)\n", 6),
    "a_parameter_count": (DENSE, COUNT.format(vars="tf.trainable_variables()", shape="get_shape()"), 5),
    "a_parameter_count_by_shape": (DENSE, COUNT.format(vars="tf.trainable_variables()", shape="shape"), 5),
    "a_parameter_count_over_a_name": (DENSE, "tvars = tf.trainable_variables()\n"
                                             + COUNT.format(vars="tvars", shape="get_shape()"), 5),
}


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_a_loop_over_the_variables_runs_where_tf1_ran_it(variant, tmp_path):
    model, loop, lines = CONVERTS[variant]
    text = SMALL_TRAINING.format(head="", model=model + loop, after="")
    out = tier_output(text)
    assert "get_shape" not in out and "for v in" in out
    if variant in sampled(CONVERTS, ("a_parameter_count",)):  # run and parity on CI for one; all in full proofs
        assert_prints_and_trains_alike(tmp_path, text, lines)


REFUSED = {  # variant: (model, the loop, the line of the read refused, what the reason says)
    "the_object_printed": (MODEL, "for v in tf.trainable_variables():\n    print(v)\n", 10, "`print(v)` is given"),
    "keras_names": (DENSE, "for v in tf.trainable_variables():\n    print(v.name)\n", 11, "`v.name` of an item"),
    "dimension_objects": (MODEL, "total = 0\nfor v in tf.trainable_variables():\n    n = 1\n"
                                 "    for d in v.get_shape():\n"
                                 "        n *= d.value\n    total += n\n", 12, "`v.get_shape()` of an item"),
}


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_a_loop_reading_the_variables_as_tf2_does_not_give_them_is_refused(variant):
    from codemods.tf2 import convert
    model, loop, line, reason = REFUSED[variant]
    result = convert(SMALL_TRAINING.format(head="", model=model + loop, after=""), "t.py")
    assert result.text is None
    human = [n for n in result.notes if n.kind == "human"]
    assert len(human) == 1 and reason in human[0].message and human[0].line == line, human

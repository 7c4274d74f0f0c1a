"""`tf.group` of initializers and `tf.local_variables_initializer()` in the TF2 tier.

`init = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())`, then
`sess.run(init)`, is how many TF 1.x scripts start (a tutorial series nobody here had shown the team
used it; it was "`tf.group` has no TF 2 translation"). The group is the initializer of its parts, and
the local variables' initializer initializes nothing in a program the tier converts: every maker of
local variables (`tf.metrics.*`, input producers with `num_epochs`, `get_local_variable`,
`collections=`) is refused, so there are none. A group of other ops (an update with an assign: TF
1.x ran them in no order) stays refused, and so does a global initializer run again after training.
"""
import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, refusal, sampled, tier_output

INIT = "    sess.run(tf.global_variables_initializer())\n"
BASE = SMALL_TRAINING.format(head="", model="loss = tf.reduce_mean(tf.square(tf.matmul(tf.matmul(x, W), V) - y))\n",
                             after="")
CONVERTS = {  # variant: (what replaces the initializer's run, what runs after the training loop)
    "group_global_and_local": (
        "    init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())\n"
        "    sess.run(init_op)\n", ""),
    "group_of_a_list_local_first": (
        "    sess.run(tf.group([tf.local_variables_initializer(), tf.global_variables_initializer()]))\n", ""),
    "local_initializer_run_again_after_training": (
        INIT + "    sess.run(tf.local_variables_initializer())\n",
        "    sess.run(tf.local_variables_initializer())\n"),
    "group_through_an_alias_at_module_level": (
        "    sess.run(everything)\n", ""),
}


def _script(replacement: str, after: str, head: str = "") -> str:
    if "bump" in after:
        head = "bump = tf.assign_add(V, V * 0.0)\n"
    text = BASE.replace(INIT, replacement)
    if after:
        text = text.replace("    print(len(", after + "    print(len(")
    if head:
        text = text.replace("with tf.Session() as sess:", head + "with tf.Session() as sess:")
    return text


def _variant(variant: str) -> str:
    replacement, after = CONVERTS[variant]
    head = ("group = tf.group\neverything = group(tf.global_variables_initializer(), "
            "tf.local_variables_initializer(), name='init')\n") if "alias" in variant else ""
    return _script(replacement, after, head)


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_a_group_of_initializers_converts(variant, tmp_path):
    text = _variant(variant)
    out = tier_output(text)
    assert "variables_initializer" not in out and "group(" not in out, out
    if variant in sampled(CONVERTS, ("group_global_and_local",)):
        assert_prints_and_trains_alike(tmp_path, text, 4)


REFUSED = {  # variant: (replacement, after, what the reason says)
    "group_with_an_update": (
        INIT, "    sess.run(tf.group(train_op, bump))\n", "tf.group of `train_op`, not a variables' initializer, is not "
                                                         "converted (TF 1.x ran the grouped ops in no order)"),
    "group_run_again_after_training": (
        INIT, "    sess.run(tf.group(tf.global_variables_initializer(), tf.local_variables_initializer()))\n",
        "the initializer runs again after training started"),
    "group_of_starred_initializers": (
        "    sess.run(tf.group(*[tf.global_variables_initializer()]))\n", "", "with *args/**kwargs is not converted"),
}


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_other_groups_are_refused_with_their_reason(variant):
    replacement, after, reason = REFUSED[variant]
    text = _script(replacement, after)
    line, message = refusal(__import__("codemods.tf2.translator", fromlist=["translate"]).translate(text, "t.py"))
    assert reason in message, message
    assert "group" in text.splitlines()[line - 1]

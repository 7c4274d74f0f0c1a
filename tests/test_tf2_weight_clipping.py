"""WGAN's weight clipping: assign ops over a list of variables made in one comprehension and run by
`sess.run` after each update (`assign_ops`).

`clip_D = [p.assign(tf.clip_by_value(p, -c, c)) for p in d_vars]`, then `sess.run(clip_D)`: TF 1.x built one
assign op per variable, each reading and writing its own variable only. It was refused ("`p.assign(...)`
is given graph values while the graph is built"). The comprehension is now the statement of the step
that runs it. Variants: the list written out, `tf.trainable_variables()`, a dict's values, the function
form `tf.assign`, through an alias of `tf`, `assign_sub`, the bound read from a host float; the result dropped, bound to `_`, kept (the
variables after the clip, as a list) and printed; the list changed in place after the clip was built
(`d.pop()`, `d.append(V)`, `del d[0]`: TF 1.x clipped what the list held then; `reaching` counts such a
change as a definition, so the step is traced before it, as for a name bound again; before, it was traced
after it and clipped other variables, and so did `tf.gradients(loss, d)` followed by `d.pop()`). Refused, each with a true reason: the clip fetched
with the loss (TF 1.x does not order them), a list not known to hold variables, the comprehension
inside a larger expression, an assignment that reads the other variables (`p / tf.global_norm(d)`), a model class given the list or a dict of variables (refused before by the
output check, falsely: "`self` is still read but the TF2 program no longer binds it").
"""
import pytest

from conftest import FIXED_DATA, FIXED_START, assert_prints_and_trains_alike, sampled, step_source, tier_output

SCRIPT = "import numpy as np\nimport tensorflow as tf\n{head}\n" + FIXED_START + '''loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, W)), V) - y))
train_op = tf.train.RMSPropOptimizer(0.01).minimize(loss)
{clip}
''' + FIXED_DATA + '''with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5))
{run}
    print([v.round(4).tolist() for v in sess.run([W, V])])
'''
CLIP = "clip_D = [p.assign(tf.clip_by_value(p, -0.15, 0.15)) for p in {vars}]"
DROPPED = "        sess.run(clip_D)\n        print('clipped')"
KEPT = "        clipped = sess.run(clip_D)\n        print([round(float(np.abs(c).sum()), 4) for c in clipped])"

# name: (head, clip, run); each prints 7 lines
CASES = {
    "a list": ("", "d_vars = [W, V]\n" + CLIP.format(vars="d_vars"), DROPPED),
    "trainable variables": ("", CLIP.format(vars="tf.trainable_variables()"), DROPPED),
    "a dict's values": ("", "critic = {'W': W, 'V': V}\n" + CLIP.format(vars="critic.values()"), DROPPED),
    "tf.assign": ("", "clip_D = [tf.assign(p, tf.clip_by_value(p, -0.15, 0.15)) for p in [W, V]]", DROPPED),
    "alias": ("T = tf\n", "clip_D = [T.assign(p, T.clip_by_value(p, -0.15, 0.15)) for p in T.trainable_variables()]",
              DROPPED),
    "assign_sub": ("", "clip_D = [p.assign_sub(0.5 * p) for p in [W, V]]", DROPPED),
    "a host clip value": ("c = 0.15\n", "clip_D = [p.assign(tf.clip_by_value(p, -c, c)) for p in [W, V]]", DROPPED),
    "bound to _": ("", CLIP.format(vars="[W, V]"), "        _ = sess.run(clip_D)\n        print('clipped')"),
    "kept": ("", CLIP.format(vars="[W, V]"), KEPT),
    "printed": ("", CLIP.format(vars="[W, V]"),
                "        print([round(float(np.abs(c).sum()), 4) for c in sess.run(clip_D)])"),
    # the list changed in place after TF 1.x built the clip (reaching: a definition of the name): the step
    # is traced before that line, where the list holds what TF 1.x built with
    "a list popped later": ("", "d = [W, V]\n" + CLIP.format(vars="d") + "\nd.pop()", DROPPED),
    "a list grown later": ("", "d = [W]\n" + CLIP.format(vars="d") + "\nd.append(V)", DROPPED),
    "an item deleted later": ("", "d = [W, V]\n" + CLIP.format(vars="d") + "\ndel d[0]", DROPPED),
}
CHANGED_LATER = {"a list popped later": "d.pop()", "a list grown later": "d.append(V)", "an item deleted later": "del d[0]"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_clip_is_a_step_of_its_own(name):
    head, clip, run = CASES[name]
    out = tier_output(SCRIPT.format(head=head, clip=clip, run=run))
    step, returns = step_source(out, "train_step_2")
    assert "for p in" in step and ".assign" in step and "sess.run" not in out
    kept = name in ("kept", "printed")
    assert returns == (["return [p for p in [W, V]]"] if kept else []), returns
    if name in CHANGED_LATER:
        assert out.index("train_step_2 = train_step_2.get_concrete_function()") < out.index(CHANGED_LATER[name])


# run and parity on CI: the kept list of new values, and the list popped later (with the gradients test below);
# every case under TF1CLIP_FULL_PROOF=1 (benchmarks/full_proofs.py)
@pytest.mark.parametrize("name", sampled(sorted(CASES), {"kept", "a list popped later"}))
def test_it_prints_and_trains_like_tf1(tmp_path, name):
    head, clip, run = CASES[name]
    assert_prints_and_trains_alike(tmp_path, SCRIPT.format(head=head, clip=clip, run=run), 7)


REFUSED = {
    "fetched with the loss": (CLIP.format(vars="[W, V]"),
                              "        _, l = sess.run([clip_D, loss], {x: xs, y: ys})\n        print(l)",
                              "assign ops over a list of variables, with other fetches: TF 1.x does not order"),
    "a list of tensors": ("d = [W * 1.0, V * 1.0]\n" + CLIP.format(vars="d"), DROPPED,
                          "assigns items of a list not known to hold only variables"),
    # an assignment that reads other variables (the global norm of the list): TF 1.x left them unordered
    "reading the other variables": ("d = [W, V]\nclip_D = [p.assign(p / tf.global_norm(d)) for p in d]", DROPPED,
                                    "each assignment reads `d` besides its own variable"),
    # a model class given the variables (a list or a dict): said for what it is, not by the output check's
    # "`self` is still read but the TF2 program no longer binds it" (its kept parameter was written outside
    # the class)
    "a class given the list": ("class Critic:\n    def __init__(self, vs):\n        self.clip = [p.assign("
                               "tf.clip_by_value(p, -0.15, 0.15)) for p in vs]\n\n\nclip_D = Critic([W, V]).clip",
                               DROPPED, "method `Critic.__init__` is given a graph value or state as `vs`"),
    "a class given a dict": ("class Critic:\n    def __init__(self, ws):\n        self.out = tf.reduce_sum(ws['W'])\n"
                             "\n\nclip_D = Critic({'W': W}).out", "        print(sess.run(clip_D))",
                             "method `Critic.__init__` is given a graph value or state as `ws`"),
    "inside a larger expression": ("clip_D = [p.assign(tf.clip_by_value(p, -0.15, 0.15)) for p in [W, V]][:1]",
                                   DROPPED, "assign ops made in a comprehension other than one bound to a name"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_its_reason(name):
    from codemods.tf2.translator import translate

    clip, run, reason = REFUSED[name]
    result = translate(SCRIPT.format(head="", clip=clip, run=run), "t.py")
    assert result.text is None
    note = next(n for n in result.notes if n.kind == "human")
    assert reason in note.message, note


def test_gradients_of_a_list_changed_later_are_traced_before_the_change(tmp_path):
    run = "        print([np.round(g, 4).tolist() for g in sess.run(g, {x: xs, y: ys})])"
    text = SCRIPT.format(head="", clip="d = [W, V]\ng = tf.gradients(loss, d)\nd.pop()", run=run)
    out = assert_prints_and_trains_alike(tmp_path, text, 7)
    assert out.index("get_concrete_function()") < out.index("d.pop()")

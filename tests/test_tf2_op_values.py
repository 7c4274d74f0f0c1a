"""What sess.run of an update op gives, where the run keeps it (`GraphOp.info["gives"]`, `session._keep_op_values`).

TF 1.x's `sess.run(V.assign(V * 0.5))` gives V's new value. The TF2 tier turned such a run into a call of
a step that applies the op and returns nothing, so `c = sess.run(copy); print(c)` printed None, and a dict
fetch kept None in the op's place. Now the step returns the variable after the op where the run keeps the
result, and nothing where it drops it (a statement of its own, `_`). `minimize` and `apply_gradients` give
None, with `global_step=` too: TF 1.x's `apply_gradients` returns the increment's `.op`, not its tensor.

Variants: the run's result bound to a name, printed in an expression, in a list, a one-element tuple and a
dict; `tf.assign` and `tf.assign_add` (the function forms), through an alias of `tf`, made in a method; the
dropped forms, which return nothing; the op run by another name (`shrink = copy`: the step applied it twice
before, once per name); and the update ops with a global step (of `minimize` and of
`apply_gradients` after a clip), fetched alone, with the loss, in a dict, whose None stays None. Each prints
what `tf1clip run` of the TF 1.x script prints.
"""
import ast

import pytest

from conftest import FIXED_DATA, FIXED_START, assert_prints_and_trains_alike, sampled, tier_output

SCRIPT = "import numpy as np\nimport tensorflow as tf\n{head}\n" + FIXED_START + '''loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, W)), V) - y))
{build}
''' + FIXED_DATA + '''with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
{loop}
    print([v.round(4).tolist() for v in sess.run([W, V])])
'''
FEED = "{x: xs, y: ys}"
SGD = "train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)"
TRAIN = [f"_, l = sess.run([train_op, loss], {FEED})", 'print("step", i, round(float(l), 5))']
SHRINK = "copy = V.assign(V * 0.5)"
SHOW = "print(np.round(c, 4).tolist())"


def _lines(lines: list, depth: int = 8) -> str:
    return "\n".join(" " * depth + line for line in lines)


# name: (head, build, loop lines); each prints 7 lines (two per pass and the final variables)
ASSIGNS = {
    "bound": ("", f"{SGD}\n{SHRINK}", [*TRAIN, "c = sess.run(copy)", SHOW]),
    "printed": ("", f"{SGD}\n{SHRINK}", [*TRAIN, "print(np.round(sess.run(copy), 4).tolist())"]),
    "list": ("", f"{SGD}\n{SHRINK}", [*TRAIN, "cs = sess.run([copy])", "c = cs[0]", SHOW]),
    "tuple unpacked": ("", f"{SGD}\n{SHRINK}", [*TRAIN, "c, = sess.run((copy,))", SHOW]),
    "dict": ("", f"{SGD}\n{SHRINK}", [*TRAIN, "o = sess.run({'c': copy})", "c = o['c']", SHOW]),
    "tf.assign": ("", f"{SGD}\ncopy = tf.assign(V, V * 0.5)", [*TRAIN, "c = sess.run(copy)", SHOW]),
    "tf.assign_add": ("", f"{SGD}\ncopy = tf.assign_add(V, tf.ones_like(V) * 0.1)",
                      [*TRAIN, "c = sess.run(copy)", SHOW]),
    "alias": ("T = tf\n", f"{SGD}\ncopy = T.assign(V, V * 0.5)", [*TRAIN, "c = sess.run(copy)", SHOW]),
    "method": ("", f"{SGD}\n\n\nclass Shrink:\n    def __init__(self):\n"
                   "        self.v = tf.Variable(tf.ones([2]) * 0.8, name='S')\n        self.op = self.v.assign(self.v * 0.5)\n\n\n"
                   "shrink = Shrink()", [*TRAIN, "c = sess.run(shrink.op)", SHOW]),
    "dropped": ("", f"{SGD}\n{SHRINK}", [*TRAIN, "sess.run(copy)", "_ = sess.run(copy)", 'print("shrunk")']),
    # the op bound to another name and run by it: its statement was made again for that name, so the step
    # halved V twice (a wrong conversion, found with the target-network copies)
    "another name": ("", f"{SGD}\n{SHRINK}\nshrink = copy", [*TRAIN, "c = sess.run(shrink)", SHOW]),
    "a method's op by another name": ("", f"{SGD}\n\n\nclass Shrink:\n    def __init__(self):\n"
                                          "        self.v = tf.Variable(tf.ones([2]) * 0.8, name='S')\n"
                                          "        self.op = self.v.assign(self.v * 0.5)\n\n\nshrink = Shrink()\n"
                                          "op = shrink.op", [*TRAIN, "c = sess.run(op)", SHOW]),
}
GS = "gs = tf.train.get_or_create_global_step()\n"
GLOBAL_STEPS = {
    "gs alone": (GS + "train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss, global_step=gs)",
                 [f"t = sess.run(train_op, {FEED})", f"l = sess.run(loss, {FEED})", 'print("step", t)',
                  "print(round(float(l), 5))"]),
    "gs with the loss": (GS + "train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=gs)",
                         [f"t, l = sess.run([train_op, loss], {FEED})", 'print("step", t)',
                          "print(round(float(l), 5))"]),
    "gs in a dict": (GS + "train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss, global_step=gs)",
                     [f"out = sess.run({{'t': train_op, 'l': loss}}, {FEED})", "print(out['t'])",
                      "print(round(float(out['l']), 5))"]),
    "gs of apply_gradients": (
        "gs = tf.Variable(0, trainable=False, dtype=tf.int64)\nopt = tf.train.GradientDescentOptimizer(0.3)\n"
        "grads, tvars = zip(*opt.compute_gradients(loss))\ngrads, _ = tf.clip_by_global_norm(grads, 0.05)\n"
        "train_op = opt.apply_gradients(zip(grads, tvars), global_step=gs)",
        [f"print(sess.run(train_op, {FEED}))", f"print(round(float(sess.run(loss, {FEED})), 5))"]),
}
CASES = {**{k: (head, build, loop) for k, (head, build, loop) in ASSIGNS.items()},
         **{k: ("", build, loop) for k, (build, loop) in GLOBAL_STEPS.items()}}


def _script(name: str) -> str:
    head, build, loop = CASES[name]
    return SCRIPT.format(head=head, build=build, loop=_lines(loop))


# the return statements of the steps: the training step's and the one that applies the op (V's shrink by
# default), or one step that does both
RETURNS = {"dict": {"return loss", "return {'c': V}"}, "method": {"return loss", "return shrink.v"},
           "a method's op by another name": {"return loss", "return shrink.v"},
           "dropped": {"return loss"}, "gs alone": {"return loss"}, "gs with the loss": {"return [None, loss]"},
           "gs in a dict": {"return {'t': None, 'l': loss}"}, "gs of apply_gradients": {"return loss"}}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_step_returns_the_value_only_where_the_run_keeps_it(name):
    out = tier_output(_script(name))
    steps = [f for f in ast.walk(ast.parse(out)) if isinstance(f, ast.FunctionDef) and f.decorator_list]
    returns = {ast.unparse(r) for f in steps for r in ast.walk(f) if isinstance(r, ast.Return)}
    assert returns == RETURNS.get(name, {"return loss", "return V"}), returns
    assert "sess.run" not in out
    if name in ASSIGNS and not name.startswith("tf.assign"):
        assert out.count(".assign(") == 1, out  # the op's statement once, whatever name runs it


# run and parity on CI: the op run by another name, a global step's None in a dict; every case
# under TF1CLIP_FULL_PROOF=1 (benchmarks/full_proofs.py)
@pytest.mark.parametrize("name", sampled(sorted(CASES), {"another name", "gs in a dict"}))
def test_it_prints_and_trains_like_tf1(tmp_path, name):
    assert_prints_and_trains_alike(tmp_path, _script(name), 7)


# an assign op with a value that reads its variable apart from the op's inputs: TF 1.x orders neither first
UNORDERED = {
    "the loss": f"c, l = sess.run([copy, loss], {FEED})",
    "an expression of the variable": "c, w = sess.run([copy, V * 2.0])",
    "in a dict": f"o = sess.run({{'c': copy, 'l': loss}}, {FEED})",
}


@pytest.mark.parametrize("name", sorted(UNORDERED))
def test_an_assign_fetched_with_an_unordered_read_of_its_variable_is_refused(name):
    from codemods.tf2.translator import translate

    script = SCRIPT.format(head="", build=f"{SGD}\n{SHRINK}", loop=_lines([*TRAIN, UNORDERED[name]]))
    result = translate(script, "t.py")
    assert result.text is None
    note = next(n for n in result.notes if n.kind == "human")
    assert "sess.run of the assign op `copy` with a value that reads `V` apart from the op's own inputs" in note.message
    assert note.line == 18  # the run


def test_an_assign_fetched_with_its_variable_or_a_read_it_depends_on_converts():
    # `V` itself: TF 1.x's ref variable, read after the op; a descent step's loss is an input of its assign
    for build, run in ((SHRINK, "c, v = sess.run([copy, V])"),
                       ("gV = tf.gradients(loss, V)[0]\ncopy = V.assign(V - 0.1 * gV)", f"c, l = sess.run([copy, loss], {FEED})")):
        out = tier_output(SCRIPT.format(head="", build=f"{SGD}\n{build}", loop=_lines([*TRAIN, run])))
        assert "V.assign(" in out and "sess.run" not in out

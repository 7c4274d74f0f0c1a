"""Names the graph code reads and then binds again, inside a step (`codemods/tf2/step_locals.py`).

`grads = tf.gradients(loss, tvars)`, then `grads, tvars = [...], [...]` keeping the pairs whose gradient is
not None: the step reads the script's `tvars` and binds its own. Python makes a name a function binds its
local, so the step would fail where it first reads it; the binding and every read after it use a fresh
local instead (`tvars_2`). Variants: at module level, through an alias, `zip(*pairs)`, built in a function,
the filtered list fetched with the update (`tvars[0]` is W, not the unused variable first in TF 1.x's list),
rebound twice, in a class's `__init__`; each prints what TF 1.x printed and trains like it (a sample on CI). Refused with what stops
it: a binding under an `if`; a run that fetches the chosen list without the feed its choice needs.
progen seeds 117, 137 and 311 (refused before: "`tvars` is read by the step and bound again inside it").
"""
import sys
from pathlib import Path

import pytest

from conftest import assert_prints_and_trains_alike, sampled, tier_output

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import libcst as cst  # noqa: E402

from codemods.tf2 import step_locals  # noqa: E402
from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
import tensorflow as tf
{head}
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
unused = tf.Variable(tf.zeros([2]), name="unused")
W = tf.Variable(tf.ones([4, 3]) * 0.3 - tf.reshape(tf.range(12, dtype=tf.float32), [4, 3]) * 0.05, name="W")
V = tf.Variable(tf.ones([3, 1]) * -0.2, name="V")
loss = tf.reduce_mean(tf.square(tf.matmul(tf.tanh(tf.matmul(x, W)), V) - y))
opt = tf.train.GradientDescentOptimizer(0.1)
{model}
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        {fetch}
        print("step", i, round(float(l), 5))
    print([v.round(4).tolist() for v in sess.run([W, V])])
'''
FILTER = '''tvars = tf.trainable_variables()
grads = tf.gradients(loss, tvars)
pairs = [(g, v) for g, v in zip(grads, tvars) if g is not None]
grads, tvars = [g for g, _ in pairs], [v for _, v in pairs]
grads, _ = tf.clip_by_global_norm(grads, 1.0)
train_op = opt.apply_gradients(zip(grads, tvars))
'''
REBIND = "grads, tvars = [g for g, _ in pairs], [v for _, v in pairs]"
FETCH = "_, l = sess.run([train_op, loss], {x: xs, y: ys})"


def _in_function(model: str) -> str:
    lines = model.strip().splitlines()
    body = "".join(f"    {line}\n" for line in lines[:-1])
    return f"def build(loss):\n{body}    return opt.apply_gradients(zip(grads, tvars))\n\n\ntrain_op = build(loss)\n"


def _in_class(model: str) -> str:
    lines = model.strip().splitlines()
    body = "".join(f"        {line}\n" for line in lines[:-1])
    return (f"class Trainer:\n    def __init__(self):\n{body}        self.train_op = opt.apply_gradients(zip(grads, "
            "tvars))\n\n\ntrainer = Trainer()\ntrain_op = trainer.train_op\n")


CONVERTING = {
    "module": (FILTER, FETCH, 4),
    "alias": (FILTER.replace("tf.", "T.").replace("zip(grads, tvars))", "list(zip(grads, tvars)))"), FETCH, 4),
    "zip_star": (FILTER.replace(REBIND, "grads, tvars = zip(*pairs)"), FETCH, 4),
    "in_function": (_in_function(FILTER), FETCH, 4),
    "fetched_item": (FILTER, "_, l, w0 = sess.run([train_op, loss, tvars[0]], {x: xs, y: ys})\n"
                             "        print(w0.shape)", 7),
    "twice": (FILTER.replace("grads, _ =", "tvars = [v for v in tvars]\ngrads, _ ="), FETCH, 4),
    "in_class": (_in_class(FILTER), FETCH, 4),
}


def _script(model: str, fetch: str = FETCH) -> str:
    head = "T = tf" if "T." in model else ""
    return SCRIPT.format(head=head, model=model, fetch=fetch)


@pytest.mark.parametrize("name", sampled(sorted(set(CONVERTING) - {"in_class"}), {"module"}))
def test_a_name_read_then_bound_again_in_the_step_converts_and_trains_alike(tmp_path, name):
    model, fetch, lines = CONVERTING[name]
    out = assert_prints_and_trains_alike(tmp_path, _script(model, fetch), lines)
    step = out[out.index("def train_step"):out.index("get_concrete_function")]
    assert "tape.gradient(loss, tvars)" in step  # the script's list, read before the step binds its own
    assert "tvars_2" in step and "zip(grads, tvars_2)" in step


def test_a_method_local_read_then_bound_again_is_kept_on_the_instance_then_bound_in_the_step(tmp_path):
    """progen seeds 368 and 381: in `__init__` the method's `tvars` is kept on the instance for the reads
    before the rebinding; the rebinding is the step's own local (it was promoted too, `trainer.tvars` bound
    in the step, and the read after it left unbound)."""
    model, fetch, lines = CONVERTING["in_class"]
    out = assert_prints_and_trains_alike(tmp_path, _script(model, fetch), lines)
    step = out[out.index("def train_step"):out.index("get_concrete_function")]
    assert "tape.gradient(loss, trainer.tvars)" in step and "zip(grads, trainer.tvars)" in step
    assert "grads, tvars = [g for g, _ in pairs]" in step and "apply_gradients(zip(grads, tvars))" in step


@pytest.mark.parametrize("name", sorted(set(CONVERTING) - {"in_class"}))
def test_every_variant_converts_with_the_rebinding_renamed(name):
    model, fetch, _ = CONVERTING[name]
    out = tier_output(_script(model, fetch))
    step = out[out.index("def train_step"):out.index("get_concrete_function")]
    bound = [line.strip() for line in step.splitlines() if line.strip().startswith(("grads, tvars", "tvars"))]
    assert bound and all(line.startswith(("grads, tvars_2 =", "tvars_2 =")) for line in bound), bound
    if name == "fetched_item":
        assert "return loss, tvars_2[0]" in step  # TF 1.x's filtered list: W, not `unused`


def _refusal(text: str):
    result = translate(text, "t.py")
    assert result.text is None
    return next(n for n in result.notes if n.kind == "human")


def test_a_rebinding_under_an_if_is_refused_at_it():
    text = _script(FILTER.replace(REBIND, "if pairs:\n    " + REBIND))
    note = _refusal(text)
    assert text.splitlines()[note.line - 1] == "if pairs:"  # the statement that binds it, maybe
    assert "`tvars` is read by the step and bound again inside it, not by one assignment run once in order" \
        in note.message


def test_a_run_of_the_chosen_list_without_the_feed_its_choice_needs_is_refused_with_that_reason():
    """`sess.run(tvars[0])` without `x`: TF 1.x chose the list in Python while it built the graph, so its run
    needed no feed; the TF 2 step chooses again, from gradients that need `x`. The reason says so (it said
    TF 1.x raised InvalidArgumentError, which it did not)."""
    note = _refusal(_script(FILTER, FETCH + "\n        print(sess.run(tvars[0]).shape)"))
    assert "a list TF 1.x chose by Python while it built the graph" in note.message
    assert "does not feed placeholder `x`" in note.message and "InvalidArgumentError" not in note.message


# -- step_locals.split on its own -------------------------------------------------------------------------
def _split(code: str):
    fn = cst.parse_statement(code)
    name = step_locals.read_then_bound(fn)
    assert name == "v"
    renamed = step_locals.split(fn, name, "v_2")
    return None if renamed is None else cst.Module(body=[renamed]).code


def test_split_renames_the_binding_and_what_follows_it_in_with_blocks_too():
    out = _split("def f(a):\n    with t:\n        b = g(v)\n        v = [u for u in v if u]\n"
                 "    c = v + [b]\n    return c, v\n")
    assert out == ("def f(a):\n    with t:\n        b = g(v)\n        v_2 = [u for u in v if u]\n"
                   "    c = v_2 + [b]\n    return c, v_2\n")


@pytest.mark.parametrize("code", [
    "def f(a):\n    b = g(v)\n    if a:\n        v = b\n    return v\n",            # maybe bound
    "def f(a):\n    b = g(v)\n    for u in a:\n        v = u\n    return v\n",        # bound in a loop
    "def f(a):\n    h = lambda: v\n    v = a\n    return h()\n",                      # read when called
    "def f(a):\n    b = g(v)\n    v = a\n    v += [b]\n    return v\n",               # bound in place
    "def f(a):\n    b = g(v)\n    v = [v for v in b]\n    return v\n",                # a comprehension's own
    "def f(a):\n    b = g(v)\n    for v in a:\n        pass\n    return b\n",          # a loop's target
])
def test_split_answers_none_where_the_values_cannot_be_told_apart(code):
    assert _split(code) is None

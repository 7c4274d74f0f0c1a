"""A function defined inside a helper (`def model(x): def act(t): ...`) in the TF2 tier. A helper that only
computes values is kept and called inside the steps; a function its own block defines once, with `def`
(or a lambda bound to a name, read as its `def`), runs there with it, each time the helper does, so
it is kept with it and its TensorFlow calls are written in their TF 2 form (`codemods/tf2/helpers.py`,
`_local_functions`). Variants: a nested `def`; one reading the helper's parameter (a closure); one whose
body needs TF 1.x's API rewritten (`reduction_indices`, `keep_dims`). Each prints what the original
printed and trains like it. Refused, with the reason said: a local function that makes state (it is not
read at its calls), and one whose name the helper binds again (which function runs depends on the
path)."""
import sys
from pathlib import Path

import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = SMALL_TRAINING
CONVERTS = {
    "a_nested_def": '''def model(inp):
    def act(t):
        return tf.nn.relu(t) - 0.1 * tf.nn.relu(-t)
    return tf.matmul(act(tf.matmul(inp, W)), V)
pred = model(x)
loss = tf.reduce_mean(tf.square(pred - y))
''',
    "a_closure_over_a_parameter": '''def model(inp, alpha):
    def act(t):
        return tf.maximum(t, alpha * t)
    h = act(tf.matmul(inp, W))
    return tf.matmul(act(h), V)
pred = model(x, 0.2)
loss = tf.reduce_mean(tf.square(pred - y))
''',
    "tf1_api_inside": '''def model(inp):
    def norm(t):
        return t / (tf.reduce_sum(tf.abs(t), reduction_indices=1, keep_dims=True) + 1.0)
    return tf.matmul(norm(tf.matmul(inp, W)), V)
pred = model(x)
loss = tf.reduce_mean(tf.square(pred - y))
''',
}


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_a_function_defined_in_a_helper_converts_with_it(variant):
    out = tier_output(SCRIPT.format(head="", after="", model=CONVERTS[variant]))
    assert "    def " in out  # kept inside the helper
    assert "reduction_indices" not in out and "keep_dims" not in out


# run and parity on CI: the one whose TF 1.x API is rewritten; the nested def and the closure in
# benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTS), ("tf1_api_inside",)))
def test_a_function_defined_in_a_helper_trains_like_tf1(variant, tmp_path):
    assert_prints_and_trains_alike(tmp_path, SCRIPT.format(head="", after="", model=CONVERTS[variant]), 4)


def _refusal(model: str) -> str:
    result = translate(SCRIPT.format(head="", after="", model=model), "t.py")
    assert result.text is None
    (note,) = [n for n in result.notes if n.kind == "human"]
    return f"{note.line}: {note.message}"


def test_a_local_function_that_makes_state_is_refused_naming_it():
    model = '''def model(inp):
    def dense(h, n):
        return tf.layers.dense(h, n, kernel_initializer=tf.constant_initializer(0.1))
    return dense(tf.matmul(inp, W), 1)
pred = model(x)
loss = tf.reduce_mean(tf.square(pred - y))
'''
    line = SCRIPT.format(head="", after="", model=model).splitlines().index("    def dense(h, n):") + 1
    assert _refusal(model) == f"{line}: not converted to the TF2 tier: helper `model`: `def dense(h, n):` inside it is not read at its calls"


def test_a_local_function_bound_again_in_the_helper_is_not_followed():
    refusal = _refusal('''def model(inp):
    def act(t):
        return tf.nn.relu(t)
    if inp is None:
        act = tf.nn.tanh
    return tf.matmul(act(tf.matmul(inp, W)), V)
pred = model(x)
loss = tf.reduce_mean(tf.square(pred - y))
''')
    assert "`act(...)` is given graph values" in refusal, refusal

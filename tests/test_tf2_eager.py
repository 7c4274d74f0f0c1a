"""The TF2 tier on TF 1.x eager scripts (`codemods/tf2/eager.py`): API mapping, no graph model.

The constructs that convert are proven by parity in tests/test_tf2_parity.py
(fixtures/tf2/constructs/eager_*.py). Here: what is refused, at which line and why (the file
then stays on the compat tier, never half-converted); what the conversion writes (the global
step's increment, no `tfe` left, idempotent); and the gradient helper written into the script
computes what TF 1.x's own `implicit_val_and_grad` computes (TF 2.21 still ships it in
`tensorflow/python/eager/backprop.py`), including its errors.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import run_python

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402
from tf1clip.migrate.engine import migrate, migrate_text  # noqa: E402

HEAD = "import tensorflow as tf\nimport tensorflow.contrib.eager as tfe\n\ntfe.enable_eager_execution()\n"
BODY = ("w = tfe.Variable(1.0)\n"
        "loss_fn = lambda x: tf.square(x * w - 2.0)\n"
        "grad_fn = tfe.implicit_value_and_gradients(loss_fn)\n")

# (script, the source text of the refused line, a phrase of the reason)
REFUSED = {
    "gradients_function": (HEAD + "g = tfe.gradients_function(lambda v: v * v)\n", "gradients_function",
                           "no TF 2 mapping"),
    "minimize": (HEAD + BODY + "opt = tf.train.GradientDescentOptimizer(0.1)\nopt.minimize(lambda: loss_fn(1.0))\n",
                 "opt.minimize", "only `apply_gradients`"),
    "sparse_momentum": (HEAD + "e = tfe.Variable(tf.zeros([5, 2]))\n"
                        "f = lambda i: tf.reduce_sum(tf.nn.embedding_lookup(e, i))\n"
                        "opt = tf.train.MomentumOptimizer(0.1, 0.9)\n", "MomentumOptimizer", "IndexedSlices"),
    "tensor_learning_rate": (HEAD + BODY + "lr = tfe.Variable(0.1)\nopt = tf.train.GradientDescentOptimizer(lr)\n",
                             "GradientDescentOptimizer(lr)", "not a number"),
    "switch_in_function": ("import tensorflow as tf\n\n\ndef main():\n    tf.enable_eager_execution()\n"
                           "    w = tf.contrib.eager.Variable(1.0)\n\n\nmain()\n", "tf.enable_eager_execution()",
                           "inside a function or a condition"),
    "switch_with_config": ("import tensorflow as tf\n\ntf.enable_eager_execution(config=CONFIG)\n"
                           "w = tf.contrib.eager.Variable(1.0)\n", "enable_eager_execution(config", "arguments"),
    "apply_result_used": (HEAD + BODY + "step = tfe.Variable(0, trainable=False)\n"
                          "opt = tf.train.GradientDescentOptimizer(0.1)\n"
                          "op = opt.apply_gradients(grad_fn(1.0)[1], global_step=step)\n", "op = opt.apply_gradients",
                          "result is used"),
    "global_step_unknown_receiver": (HEAD + BODY + "def update(opt, step):\n"
                                     "    opt.apply_gradients(grad_fn(1.0)[1], step)\n", "opt.apply_gradients",
                                     "not assigned a tf.train optimizer"),
    "keras_layer": (HEAD + "layer = tf.keras.layers.Dense(3)\n", "tf.keras.layers.Dense", "Keras 2"),
    "graph_only_api": (HEAD + "y = tf.layers.dense(tf.ones([2, 3]), 4)\n", "tf.layers.dense", "tf.layers.dense"),
    "variable_collections": (HEAD + "w = tfe.Variable(1.0, True, ['mine'])\n", "tfe.Variable(1.0, True",
                             "beyond (initial_value, trainable)"),
    "embedding_shards": (HEAD + "shards = [tfe.Variable(tf.zeros([5, 2])), tfe.Variable(tf.zeros([5, 2]))]\n"
                         "y = tf.nn.embedding_lookup(shards, [1, 7])\n", "tf.nn.embedding_lookup(shards",
                         "partition_strategy"),
}


def _line_of(text: str, snippet: str) -> int:
    (line,) = [i for i, t in enumerate(text.splitlines(), 1) if snippet in t]
    return line


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_at_the_line_of_the_construct_and_left_to_the_compat_tier(case):
    text, where, why = REFUSED[case]
    result = convert(text, f"{case}.py")
    assert result.text is None
    (refusal,) = [n for n in result.notes if n.kind == "human"]
    assert refusal.line == _line_of(text, where), refusal
    assert why in refusal.message and "Traceback" not in refusal.message, refusal
    outcome = migrate(text, f"{case}.py", to="tf2")  # the file as the compat tier writes it, nothing of the TF2 tier
    assert outcome.tier == "compat" and outcome.text == migrate_text(text, f"{case}.py").text


def test_tf2_api_without_the_eager_switch_is_still_mixed_code():
    text = "import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\nwith tf.GradientTape() as tape:\n    pass\n"
    result = convert(text, "mixed.py")
    assert result.text is None
    assert "mixes TF 2 eager code with TF 1 graph code" in result.notes[0].message


def test_global_step_is_incremented_after_the_update_and_tfe_is_gone():
    text = (HEAD + "\n# the model\n" + BODY + "step = tfe.Variable(0, trainable=False, dtype=tf.int64)\n"
            "opt = tf.train.GradientDescentOptimizer(learning_rate=0.1, use_locking=False, name='sgd')\n"
            "for x in tfe.Iterator(tf.data.Dataset.from_tensor_slices([1.0, 2.0])):\n"
            "    loss, pairs = grad_fn(x)\n    opt.apply_gradients(pairs, global_step=step)\n"
            "it = tfe.Iterator(tf.data.Dataset.range(3))\n")
    result = convert(text, "step.py")
    assert result.text is not None, result.notes
    out = result.text
    code = "\n".join(line for line in out.splitlines() if not line.lstrip().startswith("#"))
    assert "tfe" not in code and "enable_eager_execution" not in code and "tf.train." not in code
    assert "    opt.apply_gradients(pairs)\n    step.assign_add(1)\n" in out
    assert "opt = tf.keras.optimizers.SGD(learning_rate=0.1)\n" in out
    assert "for x in tf.data.Dataset.from_tensor_slices([1.0, 2.0]):" in out
    assert "it = iter(tf.data.Dataset.range(3))" in out
    assert "\n\n# the model\nw = tf.Variable(1.0)" in out  # the switch's line gone, the comment kept
    assert [line for line in out.splitlines() if line.startswith(("import", "from"))] == ["import tensorflow as tf"]
    assert convert(out, "step.py").text == out  # converting twice = once


HELPER_CHECK = '''
import json
import tensorflow as tf
from tensorflow.python.eager import backprop  # TF 1.x's tfe.implicit_value_and_gradients, still in TF 2.21

{helpers}

a = tf.Variable([1.0, -2.0], name="a")
frozen = tf.Variable(3.0, trainable=False)
b = tf.Variable(0.5, name="b")
unused = tf.Variable(7.0)


def f(x, scale=1.0):
    return scale * tf.reduce_sum(tf.square(x * b - a)) * frozen   # reads b before a


out = {{}}
for label, fn in (("helper", implicit_value_and_gradients), ("tf1", backprop.implicit_val_and_grad)):
    value, pairs = fn(f)(tf.constant([2.0, 1.0]), scale=0.5)
    out[label] = [float(value), [(g.numpy().tolist(), v.name) for g, v in pairs]]
    out[label + "_grads"] = [(g.numpy().tolist(), v.name) for g, v in
                           (implicit_gradients if label == "helper" else backprop.implicit_grad)(f)(2.0)]
    for bad in (lambda: None, lambda: tf.constant(1.0)):
        try:
            fn(bad)()
        except ValueError as exc:
            out.setdefault(label + "_errors", []).append(str(exc).split(";")[0])
print(json.dumps(out))
'''


def test_gradient_helper_computes_what_tf1s_implicit_val_and_grad_computes(tmp_path):
    text = HEAD + BODY + "g = tfe.implicit_gradients(loss_fn)\n"
    out = convert(text, "helpers.py").text
    helpers = out[out.index("def implicit_value_and_gradients"):out.index("w = tf.Variable")]
    script = tmp_path / "check.py"
    script.write_text(HELPER_CHECK.format(helpers=helpers))
    proc = run_python(script, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["helper"] == got["tf1"] and got["helper_grads"] == got["tf1_grads"]
    # the trainable variables read, in creation order (a before b), not the frozen or unused one
    value, pairs = got["helper"]
    assert [name for _, name in pairs] == ["a:0", "b:0"], pairs
    assert value == pytest.approx(0.5 * ((2 * 0.5 - 1) ** 2 + (1 * 0.5 + 2) ** 2) * 3.0)
    assert got["helper_errors"] == got["tf1_errors"] == [
        "Cannot differentiate a function that returns None",
        "No trainable variables were accessed while the function was being computed."]


RMSPROP_CHECK = """
import numpy as np
w0 = 1.0
ms, mom, w = np.ones(1, np.float32), np.zeros(1, np.float32), tf.Variable([w0])
ms_v, mom_v = tf.Variable(ms), tf.Variable(mom)
for x in (1.0, 2.0, 3.0):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(x * w - 2.0))
    g = tape.gradient(loss, w)
    tf.raw_ops.ResourceApplyRMSProp(var=w.handle, ms=ms_v.handle, mom=mom_v.handle, lr=0.1, rho=0.9, momentum=0.5,
                                    epsilon=1e-10, grad=g)
    print("tf1 %.9f" % w.numpy()[0])
"""


def test_rmsprop_twin_updates_as_tf1s_kernel_with_its_ones_slot(tmp_path):
    """RMSProp in a TF 1.x eager script: the twin (Keras' RMSprop, its mean-square slot made with ones) gives
    the updates of TF 1.x's own kernel (`ResourceApplyRMSProp`, still in TF 2.21) from TF 1.x's ones-slot."""
    text = (HEAD + BODY + "opt = tf.train.RMSPropOptimizer(0.1, momentum=0.5)\n"
            "for x in (1.0, 2.0, 3.0):\n    loss, pairs = grad_fn(x)\n    opt.apply_gradients(pairs)\n"
            "    print('tf2 %.9f' % w.numpy())\n")
    out = convert(text, "rms.py").text
    assert out is not None and "opt = RMSPropOptimizer(0.1, rho=0.9, momentum=0.5, epsilon=1e-10)" in out
    script = tmp_path / "rms.py"
    script.write_text(out + RMSPROP_CHECK)
    proc = run_python(script, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    tf2 = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("tf2 ")]
    tf1 = [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("tf1 ")]
    assert len(tf2) == len(tf1) == 3 and tf2[0] != 1.0
    assert tf2 == pytest.approx(tf1, rel=1e-6, abs=1e-7)


def test_one_variable_needs_no_partition_strategy():
    """nce_loss / embedding_lookup of names and attributes only ever bound to a `tfe.Variable` (one tensor:
    TF 1's partition strategy is never read) convert; the shard list above is refused."""
    text = HEAD + ("class Model:\n    def __init__(self):\n        self.emb = tfe.Variable(tf.zeros([10, 4]))\n"
                   "        self.w = tfe.Variable(tf.zeros([10, 4]))\n        self.b = tfe.Variable(tf.zeros([10]))\n\n"
                   "    def loss(self, ids, labels):\n        embed = tf.nn.embedding_lookup(self.emb, ids)\n"
                   "        return tf.reduce_mean(tf.nn.nce_loss(weights=self.w, biases=self.b, labels=labels, "
                   "inputs=embed, num_sampled=2, num_classes=10))\n")
    result = convert(text, "one_variable.py")
    assert result.text is not None, result.notes
    assert "tf.nn.nce_loss(weights=self.w" in result.text and "partition_strategy" not in result.text

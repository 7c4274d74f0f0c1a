"""`tf.logging` → `tf.get_logger()`: TF 1.x's functions were one call each on that logger.

The script logs and prints under `tf1clip run` (TF 1.x's face) and its TF 2 migration under plain
TF 2.21; what they log and print must be the same lines, in each spelling of the module.
"""
import sys
from pathlib import Path

import pytest

from conftest import refusal, run_python, run_tf1clip, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

SCRIPT = '''import numpy as np
{imports}

{L}.set_verbosity({L}.INFO)
x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.ones([3, 1]) * 0.5)
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
sess = tf.Session()
sess.run(tf.global_variables_initializer())
xs = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0
{L}.info("verbosity %d", {L}.get_verbosity())
for i in range(3):
    _, l = sess.run([train_op, loss], {{x: xs}})
    {L}.info("step %d loss %.6f", i, l)
    {L}.warn("warned %d", i)
    {L}.debug("not shown %d", i)
    print(i, l, {L}.get_verbosity() == {L}.INFO, {L}.ERROR > {L}.WARN)
'''
SPELLINGS = {
    "tf.logging": ("import tensorflow as tf", "tf.logging"),
    "compat.v1": ("import tensorflow.compat.v1 as tf", "tf.logging"),
    "from_import": ("import tensorflow as tf\nfrom tensorflow import logging", "logging"),
    "alias": ("import tensorflow as tf\nlog = tf.logging", "log"),
}


def _said(text: str) -> list:
    return [line for line in text.splitlines() if line.startswith(("INFO:tensorflow:", "WARNING:tensorflow:warned",
                                                                   "DEBUG")) or line[:1].isdigit()]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_logging_converts(spelling):
    imports, module = SPELLINGS[spelling]
    result = translate(SCRIPT.format(imports=imports, L=module), "train.py")
    assert result.text is not None, result.notes
    assert ".logging" not in result.text and "tf.get_logger().setLevel(20)" in result.text


# run on CI for an alias; every spelling in benchmarks/full_proofs.py
@pytest.mark.parametrize("spelling", sampled(sorted(SPELLINGS), ("alias",)))
def test_logging_converts_and_says_the_same(spelling, tmp_path):
    imports, module = SPELLINGS[spelling]
    source = SCRIPT.format(imports=imports, L=module)
    result = translate(source, "train.py")
    assert result.text is not None, result.notes
    (tmp_path / "old.py").write_text(source)
    (tmp_path / "new.py").write_text(result.text)
    old = run_tf1clip("run", tmp_path / "old.py", cwd=tmp_path)
    new = run_python(tmp_path / "new.py", cwd=tmp_path)
    assert old.returncode == 0 and new.returncode == 0, old.stderr[-2000:] + new.stderr[-2000:]
    said_old = _said(old.stdout) + _said(old.stderr)  # printed lines, then the logger's (stderr)
    said_new = _said(new.stdout) + _said(new.stderr)
    assert len(said_old) == 10 and said_old[3] == "INFO:tensorflow:verbosity 20", said_old
    assert said_new == said_old


@pytest.mark.parametrize("call, reason", [
    ('tf.logging.info("%s", loss)', "tf.logging.info is given graph values"),
    ('tf.logging.log_every_n(tf.logging.INFO, "step", 10)', "tf.logging.log_every_n has no TF 2 equivalent"),
])
def test_what_logging_cannot_keep_is_refused(call, reason):
    source = SCRIPT.format(imports="import tensorflow as tf", L="tf.logging").replace(
        'tf.logging.info("verbosity %d", tf.logging.get_verbosity())', call)
    line, message = refusal(translate(source, "train.py"))
    assert reason in message, message
    assert line == 12

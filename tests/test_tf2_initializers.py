"""The TF2 tier's initializers draw from TF 1.x's distribution (codemods/tf2/variables.py).

TF 2's initializer classes changed their defaults (a normal or truncated normal of stddev 0.05,
a uniform in [-0.05, 0.05]; TF 1.x: stddev 1.0, [0, 1)). `tf1clip parity` gives both sides the
same start values, so it cannot see a changed distribution: here the converted initializer's
draws are compared with TF 1.x's own initializer (tf.compat.v1), on 100 000 values each."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402

CASES = [
    "tf.truncated_normal_initializer()",
    "tf.truncated_normal_initializer(stddev=0.1)",
    "tf.random_normal_initializer()",
    "tf.random_normal_initializer(0.5)",
    "tf.random_uniform_initializer()",
    "tf.random_uniform_initializer(-1.0)",
    "tf.initializers.truncated_normal()",
]


def _script(init: str) -> str:
    return f"""import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 400])
w = tf.get_variable("w", [400, 250], initializer={init})
loss = tf.reduce_mean(tf.matmul(x, w))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train_op, {{x: np.ones([2, 400], np.float32)}})
"""


@pytest.mark.parametrize("init", CASES)
def test_the_converted_initializer_draws_from_tf1s_distribution(init):
    import tensorflow as tf
    result = convert(_script(init), "init.py")
    assert result.text is not None, result.notes
    found = re.search(r"w = tf\.Variable\((.*)\(\[400, 250\], dtype=tf\.float32\), name=\"w\"\)", result.text)
    assert found, result.text
    tf2_draws = eval(found.group(1), {"tf": tf})([400, 250], dtype=tf.float32).numpy()
    tf1 = eval(init.replace("tf.", "tf.compat.v1.", 1), {"tf": tf})
    tf1_draws = tf1([400, 250], dtype=tf.float32).numpy()
    stats = {"mean": np.mean, "std": np.std, "1%": lambda a: np.percentile(a, 1), "99%": lambda a: np.percentile(a, 99)}
    for what, stat in stats.items():
        assert abs(stat(tf2_draws) - stat(tf1_draws)) < 0.03 * max(1.0, abs(stat(tf1_draws))), (what, init)

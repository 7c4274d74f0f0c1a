"""Side-by-side costs of the compat runtime, in one run.

1. Start-up + run of a legacy script: `python SCRIPT` with the header
   `import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()` vs `tf1clip run SCRIPT`.
2. Per-step time of a training step clipped by global norm: written out by hand
   (`compute_gradients` + `clip_by_global_norm` + `apply_gradients`) vs
   `tf1clip.clip_gradients_by_norm(opt, 5.0).minimize(loss)`.

Usage: python benchmarks/bench_runtime.py [--repeats N] [--steps N]. Prints a table with
medians and ratios; no assertion (goals are read off the ratios, not timed in tests).
`benchmarks/run.py` runs it as its "runtime" section.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

SCRIPT_BODY = """
import numpy as np
tf.set_random_seed(0)
rng = np.random.RandomState(0)
X = rng.randn(256, 64).astype("float32")
Y = rng.randn(256, 10).astype("float32") * 10
x = tf.placeholder(tf.float32, [None, 64])
y = tf.placeholder(tf.float32, [None, 10])
h = tf.layers.dense(x, 128, activation=tf.nn.relu)
pred = tf.layers.dense(h, 10)
loss = tf.reduce_mean(tf.square(pred - y))
optimizer = tf.train.AdamOptimizer(1e-3)
gradients, variables = zip(*optimizer.compute_gradients(loss))
gradients, _ = tf.clip_by_global_norm(gradients, 5.0)
train_op = optimizer.apply_gradients(zip(gradients, variables))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(50):
        sess.run(train_op, {x: X, y: Y})
"""


def _time(cmd, env, repeats):
    import _common

    return statistics.median(_common.measure(cmd, extra_env=env, sample_tree=False).wall for _ in range(repeats))


def bench_startup(repeats):
    env = {"TF_USE_LEGACY_KERAS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain.py")
        legacy = os.path.join(tmp, "legacy.py")
        with open(plain, "w") as handle:
            handle.write("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n" + SCRIPT_BODY)
        with open(legacy, "w") as handle:
            handle.write("import tensorflow as tf\n" + SCRIPT_BODY)
        t_plain = _time([sys.executable, plain], env, repeats)
        t_run = _time([sys.executable, "-m", "tf1clip", "run", legacy], env, repeats)
    return t_plain, t_run


def bench_step(steps, rounds=10):
    """Median step time of each variant; both sessions stay open and take turns in `rounds`
    blocks, so neither is favoured by running first or by the machine's load at one moment."""
    import numpy as np
    import tensorflow as tf

    import tf1clip

    v1 = tf.compat.v1
    rng = np.random.RandomState(0)
    X = rng.randn(256, 64).astype("float32")
    Y = rng.randn(256, 10).astype("float32") * 10
    runners = {}
    for label in ("by hand", "clip_gradients_by_norm"):
        graph = tf.Graph()
        with graph.as_default():
            x = v1.placeholder(tf.float32, [None, 64])
            y = v1.placeholder(tf.float32, [None, 10])
            w1 = v1.get_variable("w1", [64, 128])
            w2 = v1.get_variable("w2", [128, 10])
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2) - y))
            optimizer = v1.train.AdamOptimizer(1e-3)
            if label == "by hand":
                gradients, variables = zip(*optimizer.compute_gradients(loss))
                gradients, _ = tf.clip_by_global_norm(gradients, 5.0)
                train_op = optimizer.apply_gradients(zip(gradients, variables))
            else:
                train_op = tf1clip.clip_gradients_by_norm(optimizer, 5.0).minimize(loss)
            sess = v1.Session(graph=graph)
            sess.run(v1.global_variables_initializer())
            for _ in range(20):
                sess.run(train_op, {x: X, y: Y})
        runners[label] = (sess, train_op, {x: X, y: Y})
    times = {label: [] for label in runners}
    for _ in range(rounds):
        for label, (sess, train_op, feed) in runners.items():
            for _ in range(max(1, steps // rounds)):
                start = time.perf_counter()
                sess.run(train_op, feed)
                times[label].append(time.perf_counter() - start)
    for sess, _, _ in runners.values():
        sess.close()
    return {label: statistics.median(values) for label, values in times.items()}


def run(quick: bool, log, repeats: int | None = None) -> list[dict]:
    """benchmarks/run.py's section: the compat runtime's own costs."""
    import _common as c

    steps = 30 if quick else 300
    repeats = repeats or (1 if quick else 5)
    t_plain, t_run = bench_startup(repeats)
    log(f"runtime: python {t_plain:.2f} s, tf1clip run {t_run:.2f} s")
    step = bench_step(steps)
    section = "compat runtime"
    return [
        c.row(section, "legacy script, start-up + 50 steps", "s (median)", "python SCRIPT (compat.v1 header)", t_plain,
              "tf1clip run SCRIPT (unmodified)", t_run, target=1.1,
              note="the import hook and TF1 face cost nothing measurable"),
        c.row(section, "64-128-10 MLP step clipped by global norm", "ms/step", "clip written by hand",
              step["by hand"] * 1e3, "tf1clip.clip_gradients_by_norm", step["clip_gradients_by_norm"] * 1e3,
              target=1.05, note=f"median of {steps} steps each, both sessions in one process taking turns"),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=300)
    opts = parser.parse_args()
    t_plain, t_run = bench_startup(opts.repeats)
    steps = bench_step(opts.steps)
    print(f"{'measurement':48s} {'median':>10s} {'ratio':>7s}")
    print(f"{'python SCRIPT (compat.v1 header), 50 steps':48s} {t_plain:9.2f}s {1.0:7.2f}")
    print(f"{'tf1clip run SCRIPT (unmodified), 50 steps':48s} {t_run:9.2f}s {t_run / t_plain:7.2f}")
    base = steps["by hand"]
    for label, value in steps.items():
        print(f"{'step, clip written by hand' if label == 'by hand' else 'step, tf1clip.clip_gradients_by_norm':48s} "
              f"{value * 1e3:8.3f}ms {value / base:7.2f}")


if __name__ == "__main__":
    main()

"""One measured run for bench_cnngap: the CNN's TF1 session step and its TF2 forms, in one process.

    python _cnngap_driver.py [--batch B --rounds R --steps S]

The step-time fixture's convnet (fixtures/bench/cnn_mnist_clip.py: 5x5 convs of 32 and 64
filters with biases, 2x2 max pooling, dense 1024, dropout, 10 classes, clip_by_global_norm(5.0),
Adam) written with the ops tf.layers builds (conv2d + bias_add + relu, matmul + bias_add), as:

  session      TF 1.x: a Session step, compute_gradients with its default GATE_OP
  session-none the same with gate_gradients=GATE_NONE
  tape         TF2: a tf.function step with a GradientTape (the TF2 tier's form)
  tape-gated   the same, with each conv's bias gradient passed through a `tuple` gate, as GATE_OP does
  gradients    TF2: a tf.function step with tf.gradients(gate_gradients=True), TF 1.x's gradient graph

All five start from the same weights and use tf.compat.v1.train.AdamOptimizer (ResourceApplyAdam,
the kernel of the TF2 tier's Adam twin). They run in turns in one process, `--steps` steps each
per round, so drift in the machine's speed falls on all of them alike. A bit check first takes
one step's gradients of every form from identical weights (no dropout) and reports the largest
difference from the session's, per variable.

Prints one line: {"ms": {form: [per-round mean ms/step]}, "max_abs_diff": {form: {var: d}}, ...}.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
FORMS = ("session", "session-none", "tape", "tape-gated", "gradients")
NAMES = ("conv1/kernel", "conv1/bias", "conv2/kernel", "conv2/bias", "dense/kernel", "dense/bias",
         "logits/kernel", "logits/bias")
SHAPES = ((5, 5, 1, 32), (32,), (5, 5, 32, 64), (64,), (3136, 1024), (1024,), (1024, 10), (10,))


@tf.custom_gradient
def gated_bias_add(value, bias):
    """tf.nn.bias_add whose two gradients leave through one `tuple` gate, as under GATE_OP."""
    def grad(dy):
        return tuple(tf.tuple([dy, tf.raw_ops.BiasAddGrad(out_backprop=dy)]))
    return tf.nn.bias_add(value, bias), grad


def forward(x, training, params, bias_add=tf.nn.bias_add):
    k1, b1, k2, b2, w3, b3, w4, b4 = params
    h = tf.nn.max_pool2d(tf.nn.relu(bias_add(tf.nn.conv2d(x, k1, 1, "SAME"), b1)), 2, 2, "VALID")
    h = tf.nn.max_pool2d(tf.nn.relu(bias_add(tf.nn.conv2d(h, k2, 1, "SAME"), b2)), 2, 2, "VALID")
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(tf.reshape(h, [-1, 3136]), w3), b3))
    h = tf.cond(training, lambda: tf.nn.dropout(h, rate=0.4, seed=1), lambda: h)
    return tf.nn.bias_add(tf.matmul(h, w4), b4)


def xent(y, logits):
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))


def session_form(start, gate):
    """(step(x, y, training), gradients(x, y)) of a TF 1.x Session built from `start`."""
    graph = tf.Graph()
    with graph.as_default():
        x, y = v1.placeholder(tf.float32, [None, 28, 28, 1]), v1.placeholder(tf.float32, [None, 10])
        training = v1.placeholder(tf.bool, [])
        params = [v1.get_variable(n, initializer=tf.constant(a)) for n, a in zip(NAMES, start)]
        opt = v1.train.AdamOptimizer(1e-4)
        grads, variables = zip(*opt.compute_gradients(xent(y, forward(x, training, params)), gate_gradients=gate))
        clipped, norm = tf.clip_by_global_norm(grads, 5.0)
        train = opt.apply_gradients(zip(clipped, variables))
        sess = v1.Session(graph=graph)
        sess.run(v1.global_variables_initializer())
    return (lambda xs, ys, on: sess.run([train, norm], {x: xs, y: ys, training: on}),
            lambda xs, ys: sess.run(list(grads), {x: xs, y: ys, training: False}))


def function_form(start, form):
    """The same step as a concrete tf.function: the tape, the tape with gated conv biases, or
    gated tf.gradients."""
    params = [tf.Variable(a, name=n.replace("/", "_")) for n, a in zip(NAMES, start)]
    opt = v1.train.AdamOptimizer(1e-4)
    bias_add = gated_bias_add if form == "tape-gated" else tf.nn.bias_add

    def gradients(x, y, training):
        if form == "gradients":
            loss = xent(y, forward(x, training, params))
            return tf.gradients(loss, params, gate_gradients=True)
        with tf.GradientTape() as tape:
            loss = xent(y, forward(x, training, params, bias_add))
        return tape.gradient(loss, params)

    specs = [tf.TensorSpec([None, 28, 28, 1], tf.float32), tf.TensorSpec([None, 10], tf.float32)]

    @tf.function(input_signature=specs + [tf.TensorSpec([], tf.bool)])
    def step(x, y, training):
        clipped, norm = tf.clip_by_global_norm(gradients(x, y, training), 5.0)
        opt.apply_gradients(zip(clipped, params))
        return norm

    @tf.function(input_signature=specs)
    def grads_only(x, y):
        return gradients(x, y, tf.constant(False))

    step = step.get_concrete_function()
    return (lambda xs, ys, on: step(xs, ys, tf.constant(on)).numpy(),
            lambda xs, ys: [g.numpy() for g in grads_only(xs, ys)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    init = tf.keras.initializers.GlorotUniform(seed=0)
    start = [init(s).numpy() if len(s) > 1 else rng.randn(*s).astype(np.float32) * 0.1 for s in SHAPES]
    images = rng.randint(0, 256, size=(4 * args.batch, 28, 28, 1)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=4 * args.batch)]
    forms = {"session": session_form(start, v1.train.Optimizer.GATE_OP),
             "session-none": session_form(start, v1.train.Optimizer.GATE_NONE)}
    forms.update((f, function_form(start, f)) for f in FORMS[2:])
    batch = [(images[i * args.batch:(i + 1) * args.batch], labels[i * args.batch:(i + 1) * args.batch])
             for i in range(4)]
    reference = forms["session"][1](*batch[0])
    diffs = {f: {n: float(np.max(np.abs(g - r))) for n, g, r in zip(NAMES, forms[f][1](*batch[0]), reference)}
             for f in FORMS[1:]}
    for form in FORMS:
        for i in range(args.warmup):
            forms[form][0](*batch[i % 4], True)
    ms = {f: [] for f in FORMS}
    for r in range(args.rounds):
        for form in (FORMS if r % 2 == 0 else FORMS[::-1]):
            step = forms[form][0]
            t0 = time.perf_counter()
            for i in range(args.steps):
                step(*batch[i % 4], True)
            ms[form].append((time.perf_counter() - t0) / args.steps * 1e3)
    print(json.dumps({"ms": ms, "max_abs_diff": diffs, "batch": args.batch, "rounds": args.rounds,
                      "steps": args.steps, "warmup": args.warmup}))


if __name__ == "__main__":
    main()

"""One measured run for bench_clipcost: build one training step, warm up, time steps, print JSON.

    python _clipcost_driver.py mlp-tf2   {none,global,wait,normwait}  [--width W --inputs D --batch B]
    python _clipcost_driver.py mlp-graph {none,hand,ungated,wrapped,norm,wait,normwait,mulpass} [same]
    python _clipcost_driver.py emb       {none,sparse,dense}          [--rows R --batch B]
    python _clipcost_driver.py emb-check                              [--rows R --batch B]

Prints one line: {"step_ms": [...], "median_ms": m, "params": n, "maxrss_mb": ..., ...}.
All data is random, generated here from fixed seeds.

A norm that only a control dependency consumes is never computed: grappler's dependency
optimizer turns such a stateless op into a NoOp (and its inputs with it), so the wait then holds
each update back until all gradients exist and reads nothing. The `norm` and `normwait` variants
fetch the norm, which keeps it computed. `emb-check` times nothing: it runs one step of
the sparse and of the densified clip from identical weights and reports how far apart they land.
"""
from __future__ import annotations

import argparse
import itertools
import json
import resource
import statistics
import time

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
CLIP = 5.0
CLASSES = 10
NBATCH = 8
# The MLP loss is scaled so that the global gradient norm stays well above CLIP while timing:
# clipping really rescales (Adam itself is invariant to a constant gradient scale).
MLP_LOSS_SCALE = 1000.0


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(step, warmup, steps):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def mlp_data(args):
    """NBATCH batches of random inputs and random labels, used in turn (one fixed batch would be
    memorised within the warm-up, its gradients vanishing)."""
    rng = np.random.RandomState(0)
    x = rng.randn(NBATCH, args.batch, args.inputs).astype("float32")
    y = rng.randint(0, CLASSES, size=(NBATCH, args.batch)).astype("int64")
    return x, y


def xent(y, logits):
    return MLP_LOSS_SCALE * tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def waiting_for_norm(grads):
    """(global norm, `grads` unchanged but each waiting for that norm): the clip's wait alone,
    every update held back until all gradients exist, nothing scaled. Unless the caller fetches
    the norm, grappler prunes it (module docstring): the wait is then on the gradients alone."""
    norm = tf.linalg.global_norm(grads)
    with tf.control_dependencies([norm]):
        return norm, [tf.identity(g) for g in grads]


def mlp_tf2(args):
    """TF2: Keras Dense layers, tf.function step, GradientTape, Adam; clip or not before apply."""
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((args.inputs,))]
                             + [keras.layers.Dense(args.width, activation="relu") for _ in range(3)]
                             + [keras.layers.Dense(CLASSES)])
    opt = keras.optimizers.Adam(1e-3)
    batches = [(tf.constant(x), tf.constant(y)) for x, y in zip(*mlp_data(args))]
    variables = model.trainable_variables

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = xent(y, model(x, training=True))
        grads = tape.gradient(loss, variables)
        if args.clip == "global":
            grads, _ = tf.clip_by_global_norm(grads, CLIP)
        elif args.clip in ("wait", "normwait"):
            norm, grads = waiting_for_norm(grads)
        opt.apply_gradients(zip(grads, variables))
        return (loss, norm) if args.clip == "normwait" else loss

    @tf.function
    def grad_norm(x, y):  # reported only, never part of a timed step
        with tf.GradientTape() as tape:
            loss = xent(y, model(x))
        return tf.linalg.global_norm(tape.gradient(loss, variables))

    norm_first = float(grad_norm(*batches[0]))
    it = itertools.cycle(batches)
    times = timed(lambda: tf.nest.map_structure(lambda t: t.numpy(), step(*next(it))), args.warmup, args.steps)
    params = int(sum(np.prod(v.shape) for v in variables))
    return {"step_ms": times, "params": params, "grad_norm_first": norm_first,
            "grad_norm_last": float(grad_norm(*batches[0]))}


def run_graph(args, loss, op, feeds):
    """Initialise, then time `op` fed with each of `feeds` in turn; pre/post global grad norms."""
    norm = tf.linalg.global_norm(tf.gradients(loss, v1.trainable_variables()))
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        out = {"maxrss_after_init_mb": rss_mb(), "grad_norm_first": float(sess.run(norm, feeds[0]))}
        it = itertools.cycle(feeds)
        out["step_ms"] = timed(lambda: sess.run(op, next(it)), args.warmup, args.steps)
        out["grad_norm_last"] = float(sess.run(norm, feeds[0]))
    out["params"] = int(sum(np.prod(v.shape) for v in v1.trainable_variables()))
    return out


def dense_params(sizes):
    """Graph-mode MLP weights (get_variable, Glorot init) for layer sizes [in, h, ..., out]."""
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = v1.get_variable(f"dense{i}/kernel", [fan_in, fan_out], initializer=v1.glorot_uniform_initializer(seed=i))
        b = v1.get_variable(f"dense{i}/bias", [fan_out], initializer=v1.zeros_initializer())
        layers.append((w, b))
    return layers


def forward(h, layers):
    for i, (w, b) in enumerate(layers):
        h = tf.matmul(h, w) + b
        if i < len(layers) - 1:
            h = tf.nn.relu(h)
    return h


def train_op(loss, opt, clip):
    """none: minimize; hand: compute -> clip_by_global_norm -> apply; ungated: the same with
    compute_gradients(gate_gradients=GATE_NONE); wrapped: tf1clip's
    ClippedOptimizer; sparse: the same (IndexedSlices stay sparse); dense: IndexedSlices
    densified with tf.convert_to_tensor before clip_by_global_norm, as naive code does;
    norm: the global norm computed alongside the unclipped update (fetched with it); wait: every
    update waiting for all gradients (a control dependency on their norm, which grappler
    prunes); normwait: the same with the norm fetched, so computed and waited for."""
    import tf1clip

    if clip == "none":
        return opt.minimize(loss)
    if clip in ("wrapped", "sparse"):
        return tf1clip.ClippedOptimizer(opt, "global_norm", CLIP).minimize(loss)
    # ungated: the clip by hand on gradients computed without compute_gradients' default gating
    # (GATE_OP passes each op's gradients through `tuple` identities)
    gate = v1.train.Optimizer.GATE_NONE if clip == "ungated" else v1.train.Optimizer.GATE_OP
    grads, variables = zip(*opt.compute_gradients(loss, gate_gradients=gate))
    if clip == "norm":  # the clip's norm pass alone: computed in the step, nothing waits for it
        return [opt.apply_gradients(zip(grads, variables)), tf.linalg.global_norm(grads)]
    if clip in ("wait", "normwait"):
        norm, waiting = waiting_for_norm(grads)
        update = opt.apply_gradients(zip(waiting, variables))
        return [update, norm] if clip == "normwait" else update
    if clip == "dense":
        grads = [tf.convert_to_tensor(g) for g in grads]
    grads, _ = tf.clip_by_global_norm(grads, CLIP)
    return opt.apply_gradients(zip(grads, variables))


def multiply_pass(args):
    """The one pass an exact global-norm clip adds to the wait: every value of a tensor the size
    of each gradient times the clip factor (a fed scalar), alone in a Session step. The products
    go to new buffers (a variable's buffer is never reused), where a clip's go into its
    gradients' own: an upper bound of the multiply's cost. One value of each product is fetched,
    so no product can be pruned and fetching costs nothing."""
    with tf.Graph().as_default():
        weights = [t for layer in dense_params([args.inputs] + [args.width] * 3 + [CLASSES]) for t in layer]
        scale = v1.placeholder(tf.float32, [])
        kept = tf.add_n([tf.reshape(w * scale, [-1])[0] for w in weights])
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            times = timed(lambda: sess.run(kept, {scale: 0.5}), args.warmup, args.steps)
    return {"step_ms": times, "params": int(sum(np.prod(w.shape) for w in weights)),
            "grad_norm_first": None, "grad_norm_last": None}


def mlp_graph(args):
    """TF1 graph mode: placeholders, get_variable weights, Session, AdamOptimizer."""
    if args.clip == "mulpass":
        return multiply_pass(args)
    with tf.Graph().as_default():
        v1.set_random_seed(0)
        x = v1.placeholder(tf.float32, [None, args.inputs])
        y = v1.placeholder(tf.int64, [None])
        loss = xent(y, forward(x, dense_params([args.inputs] + [args.width] * 3 + [CLASSES])))
        op = train_op(loss, v1.train.AdamOptimizer(1e-3), args.clip)
        return run_graph(args, loss, op, [{x: xs, y: ys} for xs, ys in zip(*mlp_data(args))])


def emb_graph(args, clip):
    """An embedding table (rows x 64) looked up by `batch` ids, a small head, GradientDescent.

    GradientDescent, because its sparse update is a true scatter (Adam's sparse apply still
    rewrites both full-size moment slots every step, hiding what sparse gradients save).
    Returns (loss, train op, feeds): NBATCH batches of distinct ids with random labels."""
    rng = np.random.RandomState(1)
    # Distinct ids within a batch: with a repeated id the sparse clip's norm counts that row's
    # slices apart (TF1 semantics) while the densified one sums them first; they would differ.
    feeds_np = [(rng.choice(args.rows, size=args.batch, replace=False).astype("int64"),
                 rng.randint(0, CLASSES, size=args.batch).astype("int64")) for _ in range(NBATCH)]
    ids = v1.placeholder(tf.int64, [None])
    y = v1.placeholder(tf.int64, [None])
    v1.set_random_seed(0)
    table = v1.get_variable("embedding", [args.rows, 64], initializer=v1.random_uniform_initializer(-1.0, 1.0, seed=7))
    logits = forward(tf.nn.embedding_lookup(table, ids), dense_params([64, 128, CLASSES]))
    # Scaled so the global gradient norm is well above CLIP: clipping really rescales.
    loss = 100.0 * tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    op = train_op(loss, v1.train.GradientDescentOptimizer(0.1), clip)
    return loss, op, [{ids: i, y: l} for i, l in feeds_np]


def emb(args):
    with tf.Graph().as_default():
        return run_graph(args, *emb_graph(args, args.clip))


def emb_check(args):
    """One step of the sparse clip and of the densified clip, from identical weights."""
    out = {}
    for clip in ("sparse", "dense"):
        with tf.Graph().as_default():
            loss, op, feeds = emb_graph(args, clip)
            norm = tf.linalg.global_norm(tf.gradients(loss, v1.trainable_variables()))
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                before = sess.run(v1.trainable_variables())
                out[clip + "_norm"] = float(sess.run(norm, feeds[0]))
                out[clip + "_ops"] = sorted({o.type for o in sess.graph.get_operations()}
                                            & {"ResourceScatterAdd", "UnsortedSegmentSum", "ResourceApplyGradientDescent"})
                sess.run(op, feeds[0])
                out[clip] = (before, sess.run(v1.trainable_variables()))
    (b_s, a_s), (b_d, a_d) = out.pop("sparse"), out.pop("dense")
    same_start = all(np.array_equal(p, q) for p, q in zip(b_s, b_d))
    diff = max(float(np.max(np.abs(p - q))) for p, q in zip(a_s, a_d))
    moved = max(float(np.max(np.abs(p - q))) for p, q in zip(a_s, b_s))
    sparse_kept = "ResourceScatterAdd" in out["sparse_ops"] and "UnsortedSegmentSum" not in out["sparse_ops"]
    return dict(out, same_start=same_start, max_abs_diff=diff, max_update=moved, sparse_kept=sparse_kept,
                clipped=out["sparse_norm"] > CLIP, ok=bool(same_start and diff < 1e-6 and moved > 0 and sparse_kept))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("variant", choices=["mlp-tf2", "mlp-graph", "emb", "emb-check"])
    parser.add_argument("clip", nargs="?", default="none",
                        choices=["none", "global", "hand", "ungated", "wrapped", "norm", "wait", "normwait", "mulpass",
                                 "sparse", "dense"])
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--inputs", type=int, default=1024)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=25)
    args = parser.parse_args()
    if args.variant == "mlp-tf2":
        result = mlp_tf2(args)
    else:
        v1.disable_eager_execution()
        result = {"mlp-graph": mlp_graph, "emb": emb, "emb-check": emb_check}[args.variant](args)
    if "step_ms" in result:
        result["median_ms"] = statistics.median(result["step_ms"])
    result["maxrss_mb"] = rss_mb()
    print(json.dumps(result))


if __name__ == "__main__":
    main()

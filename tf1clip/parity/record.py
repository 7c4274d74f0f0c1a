"""Record a training script's optimizer updates by hooks, without editing the script.

Run as `python -m tf1clip.parity.record --side old|new --out DIR [--steps N]
[--init FILE.npz] [--no-transfer] [--face] [--no-dropout | --keyed-dropout] [--protect DIR]
[--deterministic]
SCRIPT [ARGS...]`. OLD runs under the TF 1.x face (graph mode), NEW under plain TensorFlow 2
(or under the face too with --face: a NEW identical to OLD). Writes DIR/record.json and
DIR/initial.npz, DIR/final.npz, DIR/steps.npz.

Where the numbers come from:
- The update is `apply_gradients` of `tf.compat.v1.train.Optimizer` (and so of
  ClippedOptimizer, contrib's decorator, optimize_loss, slim's create_train_op), of tf-keras'
  optimizers, or `apply` of a Keras 3 optimizer (which `apply_gradients` and `fit` use):
  hooks/graph.py, hooks/tf_keras.py, hooks/keras3.py, all through updates.on_update.
- The loss is the target of the gradient computation that produced the update's raw
  gradients: `compute_gradients(loss)` / `minimize(loss)` / `tf.gradients(loss, ...)` /
  `tape.gradient(loss, ...)` (hooks/gradients.py). In graph mode it is fetched in the same
  `Session.run` as the train op, so it is the value the step was computed from.
- Pre-clip norm: global norm of those raw gradients for the update's variables. Post-clip:
  global norm of the gradients handed to the optimizer, after the optimizer's own
  clipvalue/clipnorm/global_clipnorm where it has them.
- In graph mode the recording ops are built at the first `Session.run` that runs an update,
  after the user's graph is built, so they do not shift the op-count-derived seeds of the
  user's random ops.
The bookkeeping (what is kept, the start-value rule, the output files) is recorder.py.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback

from tf1clip.parity.distribute import provide_replicas
from tf1clip.parity import initializers, keyed_draws, pipelines, randomness, while_loops, workdir
from tf1clip.parity.hooks import graph as graph_hooks
from tf1clip.parity.hooks import install_hooks
from tf1clip.parity.recorder import Recorder, StopParity
from tf1clip.tracebacks import print_user_traceback

EXIT_MISMATCH = 3
EXIT_CRASH = 4
EXIT_NO_STRATEGY = 5


def _creator_when_eager(rec, scopes) -> None:
    """Under the TF 1.x face a script may turn eager execution on (TF 1.x's eager API): from
    then on its variables are eager ones, given their start values as they are made, as a
    TF 2 NEW's are (a graph's variables are matched at its first step instead)."""
    import tensorflow as tf
    from tensorflow.python.framework import ops

    original = ops.enable_eager_execution_internal  # (randomness wraps it too: this goes around that)

    def enable_eager_execution_internal(*args, **kwargs):
        result = original(*args, **kwargs)
        scopes.enter_context(tf.variable_creator_scope(rec.creator))
        return result

    ops.enable_eager_execution_internal = enable_eager_execution_internal


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tf1clip.parity.record")
    parser.add_argument("--side", choices=("old", "new"), required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--init")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--no-transfer", action="store_true", help="NEW: match OLD's variables, load nothing")
    parser.add_argument("--face", action="store_true", help="NEW: run under the TF 1.x face, as OLD")
    parser.add_argument("--no-dropout", action="store_true", help="dropout is the identity")
    parser.add_argument("--keyed-dropout", action="store_true",
                        help="dropout masks keyed by what each dropout is and when it runs (keyed_draws.py)")
    parser.add_argument("--protect", metavar="DIR",
                        help="the user's working directory: links to its files are copy-on-write")
    parser.add_argument("--copy", metavar="DIR", help="this side's mirror of --protect (its hard links too)")
    parser.add_argument("--replicas", type=int, help="NEW: N logical CPU devices, the default of MirroredStrategy()")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)

    from tf1clip._source import check_source, decode_source

    with open(opts.script, "rb") as handle:
        data = handle.read()
    problem = check_source(opts.script, data)
    if problem is not None:
        print(problem.one_line(), file=sys.stderr)
        return 2
    text, _ = decode_source(data)

    face = opts.side == "old" or opts.face
    if face:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    if opts.protect:
        workdir.protect_links(opts.protect, opts.copy)
    if face:
        import tf1clip.v1  # noqa: F401 - graph mode, as the script expects (TensorFlow imported here)
    randomness.seed_everything(opts.seed)
    randomness.seed_candidate_samplers()
    while_loops.one_iteration_at_a_time()
    pipelines.one_schedule()
    import tensorflow as tf

    if opts.protect:
        workdir.protect_gfile()
    if opts.no_dropout:
        randomness.identity_dropout()
    if opts.deterministic:
        tf.config.experimental.enable_op_determinism()
    rec = Recorder(opts.side, opts.out, steps=opts.steps, init_file=opts.init, transfer=not opts.no_transfer)
    if opts.keyed_dropout and not opts.no_dropout:
        rec.keys = keyed_draws.DropoutKeys(rec.updates_done, opts.seed)
        keyed_draws.install(rec.keys)
    if opts.replicas:
        provide_replicas(rec, opts.replicas)
    install_hooks(rec)
    initializers.install(rec.draws)
    status, error, code = "completed", None, 0
    from tf1clip import runner

    try:
        if face:
            with contextlib.ExitStack() as eager_scopes:
                _creator_when_eager(rec, eager_scopes)
                code = runner.run_script(opts.script, text, opts.args, passthrough=(BaseException,))
        else:
            with tf.variable_creator_scope(rec.creator):
                code = runner.execute_main(opts.script, text, opts.args, passthrough=(BaseException,))
    except StopParity:
        status = "stopped"
    except BaseException as exc:  # noqa: BLE001
        # a stop raised inside a tf.function callback arrives wrapped in a TF error
        if rec.stopped or rec.mismatch or "StopParity" in str(exc):
            status = "stopped"
        else:
            status, error, code = "crashed", "".join(traceback.format_exception_only(type(exc), exc)).strip(), 1
            print_user_traceback(exc, hide=(runner.__file__,))
    if rec.mismatch:
        status = "mismatch"
    if opts.replicas and status in ("completed", "stopped") and rec.replicas_seen != opts.replicas:
        status, error = "no-strategy", (
            f"--replicas {opts.replicas}: the script created no tf.distribute.MirroredStrategy over "
            f"{opts.replicas} replicas (largest seen: {rec.replicas_seen}); a distributed NEW builds its "
            "step under strategy.scope() (e.g. tf1clip migrate --to tf2 --strategy mirrored)")
    if isinstance(code, int) and code != 0 and status == "completed":
        status, error = "crashed", f"script exited with status {code}"
    graph_hooks.finish(rec)
    if rec.final is None:
        rec.final = rec.final_eager()
    rec.write(status, error)
    if status == "mismatch":
        return EXIT_MISMATCH
    if status == "crashed":
        return EXIT_CRASH
    if status == "no-strategy":
        return EXIT_NO_STRATEGY
    return 0


if __name__ == "__main__":
    sys.exit(main())

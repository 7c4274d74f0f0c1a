"""Input pipelines on one fixed schedule, so that a program draws the same batches each time it
runs (both sides of a parity run). Adds no graph ops.

**Queue runners.** TF 1.x's queue-based input (`tf.train.shuffle_batch`, `batch`, `*_join`,
`slice_input_producer`, `string_input_producer`, a `QueueRunner` made by hand) fills its queues
from background threads. Two things in it depend on thread timing, so even one program run
twice trains on different batches (`parity S S` failed at the first batch that differed):
- **several threads enqueueing into one queue** (`num_threads=4`, `[enqueue_op] * 4`, one op
  per reader in the `_join` functions): the order of the elements depends on which thread runs
  first;
- **how full a `RandomShuffleQueue` is when it is dequeued from**: it picks each element at
  random among those present, and a dequeue proceeds as soon as more than
  `min_after_dequeue` are there, so how many it picks among depends on how far the enqueue
  threads got.

Pinned: a queue runner runs its enqueue ops in one thread, in turn (the same op listed N times
is one op); the shuffle queue of `tf.train.shuffle_batch` (and `maybe_shuffle_batch`, the
`_join` forms) is made with `min_after_dequeue = capacity - 1`, so each element is picked from
a full queue (or, once the queue is closed, from what is left), the state TF 1.x's fast enqueue
threads usually kept it in. A `RandomShuffleQueue` made by hand keeps its own: the script may
fill it with its own enqueue runs, short of its capacity, where waiting for a full queue would
never end.

**tf.data.** A `map` with `num_parallel_calls` runs its function on several elements at once;
a random op in it (augmentation, noise) is one stateful kernel, so which element gets which
draw follows thread scheduling. `interleave(deterministic=False)` and `parallel_interleave(
sloppy=True)` hand out elements in the order they are ready. Pinned: `map` runs one element at
a time (`map_and_batch` with one parallel call), and interleaves are deterministic, as TF's
own `enable_op_determinism` makes them.

**Sessions.** A TF 1.x graph leaves ops unordered unless a data or control edge orders them:
two train ops in one `Session.run`, or a `tf.assign` and a read of the variable it writes
(backprop written by hand), may run in either order, and results differ from run to run.
Pinned: every `Session.run` executes its ops in the calling thread, one at a time
(`RunOptions.inter_op_thread_pool = -1`), and the session's own pool has one thread (for
callables, e.g. queue runners). Measured on fixtures/parity/unordered_assigns.py (hand-written
backprop whose W1 gradient reads W2 while the same run assigns W2): one inter-op thread alone
still gave a finite loss in some runs and `inf` in others; in the calling thread the loss was the
same in every run, with grappler's rewrites on as in a plain session. Intra-op parallelism,
inside one kernel, is unchanged; a script's own `inter_op_parallelism_threads` and run options
are kept apart from these two.

Each is one of the schedules TF could run, chosen always; the data, the model, the order of a
deterministic pipeline and the distribution of every shuffle are unchanged.
"""
from __future__ import annotations

import threading

from tf1clip.steps import wrap


def one_schedule() -> None:
    """Pin queue runners, shuffle queues and tf.data's parallel transformations to one schedule
    in this process (see the module)."""
    _queue_runners()
    _datasets()
    _sessions()


SESSION_SCHEDULE = ("each Session.run in its calling thread, one op at a time (ops that no edge orders run "
                    "in one fixed order)")


def _sessions() -> None:
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.client import pywrap_tf_session as tf_session
    from tensorflow.python.client import session as session_lib

    def make_init(original):
        def __init__(self, target="", graph=None, config=None):
            pinned = config_pb2.ConfigProto()
            if config is not None:
                pinned.CopyFrom(config)
            pinned.inter_op_parallelism_threads = 1
            pinned.use_per_session_threads = True  # the global pool keeps the first session's size
            return original(self, target, graph, pinned)
        return __init__

    wrap(session_lib.BaseSession, "__init__", make_init)

    def make_call(original):
        def _call_tf_sessionrun(self, options, feed_dict, fetch_list, target_list, run_metadata):
            pinned = config_pb2.RunOptions()
            if options is not None:
                pinned.ParseFromString(bytes(tf_session.TF_GetBuffer(options)))
            pinned.inter_op_thread_pool = -1  # the calling thread runs every op of this run
            buffer = tf_session.TF_NewBufferFromString(pinned.SerializeToString())
            try:
                return original(self, buffer, feed_dict, fetch_list, target_list, run_metadata)
            finally:
                tf_session.TF_DeleteBuffer(buffer)
        return _call_tf_sessionrun

    wrap(session_lib.BaseSession, "_call_tf_sessionrun", make_call)


def _datasets() -> None:
    from tensorflow.python.data.experimental.ops import batching
    from tensorflow.python.data.ops import interleave_op, map_op, readers

    def make_map(original):
        def map_(input_dataset, map_func, num_parallel_calls=None, deterministic=None, *args, **kwargs):
            return original(input_dataset, map_func, None, None, *args, **kwargs)
        return map_

    for name in ("_map_v2", "_map_v1"):
        wrap(map_op, name, make_map)

    def make_interleave(original):
        def _interleave(input_dataset, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                        deterministic=None, name=None):
            return original(input_dataset, map_func, cycle_length, block_length, num_parallel_calls,
                            None if num_parallel_calls is None else True, name)
        return _interleave

    wrap(interleave_op, "_interleave", make_interleave)

    def make_parallel_interleave(original):
        def __init__(self, input_dataset, map_func, cycle_length, block_length, sloppy, *args, **kwargs):
            return original(self, input_dataset, map_func, cycle_length, block_length, False, *args, **kwargs)
        return __init__

    wrap(readers.ParallelInterleaveDataset, "__init__", make_parallel_interleave)

    def make_map_and_batch(original):
        def __init__(self, input_dataset, map_func, batch_size, num_parallel_calls, *args, **kwargs):
            return original(self, input_dataset, map_func, batch_size, 1, *args, **kwargs)
        return __init__

    wrap(batching._MapAndBatchDataset, "__init__", make_map_and_batch)  # noqa: SLF001


def _queue_runners() -> None:
    from tensorflow.python.training import input as input_ops
    from tensorflow.python.training import queue_runner_impl

    def make_shuffle_batch(original):
        def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, *args, **kwargs):
            return original(tensors, batch_size, capacity, max(min_after_dequeue, capacity - 1), *args, **kwargs)
        return shuffle_batch

    # The helpers behind shuffle_batch, maybe_shuffle_batch and their _join forms (looked up
    # at each call): their queue is always fed by a queue runner. A RandomShuffleQueue made by
    # hand may be filled by the script's own enqueue runs, short of its capacity, so it keeps
    # TF 1.x's min_after_dequeue.
    for name in ("_shuffle_batch", "_shuffle_batch_join"):
        wrap(input_ops, name, make_shuffle_batch)

    def make_create_threads(original):
        def create_threads(self, sess, coord=None, daemon=False, start=False):
            ops = list({id(op): op for op in self._enqueue_ops}.values())  # in order, each op once
            if len(ops) == 1 and len(self._enqueue_ops) == 1:
                return original(self, sess, coord, daemon, start)
            return _threads_in_turn(self, ops, sess, coord, daemon, start)
        return create_threads

    wrap(queue_runner_impl.QueueRunner, "create_threads", make_create_threads)


def _threads_in_turn(runner, ops: list, sess, coord, daemon: bool, start: bool) -> list:
    """`QueueRunner.create_threads` with one thread that runs `ops` in turn (TF 1.x's `_run`
    for each op in its own thread, otherwise): an op whose input is exhausted drops out, and the
    queue is closed when none is left."""
    with runner._lock:  # noqa: SLF001 - the runner's own bookkeeping, kept as TF 1.x keeps it
        if runner._runs_per_session.get(sess, 0) > 0:  # noqa: SLF001
            return []
        runner._runs_per_session[sess] = 1  # noqa: SLF001
        runner._exceptions_raised = []  # noqa: SLF001
    threads = [threading.Thread(target=_run_in_turn, args=(runner, sess, ops, coord),
                                name=f"QueueRunnerThread-{runner.name}-in-turn")]
    if coord:
        threads.append(threading.Thread(target=runner._close_on_stop,  # noqa: SLF001
                                        args=(sess, runner.cancel_op, coord),
                                        name=f"QueueRunnerThread-{runner.name}-close_on_stop"))
    for thread in threads:
        if coord:
            coord.register_thread(thread)
        if daemon:
            thread.daemon = True
        if start:
            thread.start()
    return threads


def _run_in_turn(runner, sess, ops: list, coord) -> None:
    closed = runner.queue_closed_exception_types
    try:
        live = [sess.make_callable(op) for op in ops]
        while live and not (coord and coord.should_stop()):
            for call in list(live):
                try:
                    call()
                except closed:  # this op's input is exhausted (or its queue closed)
                    live.remove(call)
        if not live:
            try:
                sess.run(runner.close_op)
            except Exception:  # noqa: BLE001 - TF 1.x ignores errors of the close op too
                pass
    except Exception as exc:  # noqa: BLE001 - as TF 1.x's runner: to the coordinator, or raised
        if coord:
            coord.request_stop(exc)
        else:
            with runner._lock:  # noqa: SLF001
                runner._exceptions_raised.append(exc)  # noqa: SLF001
            raise
    finally:
        with runner._lock:  # noqa: SLF001
            runner._runs_per_session[sess] -= 1  # noqa: SLF001

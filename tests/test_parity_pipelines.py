"""Parity runs input pipelines (queue runners, tf.data) on one schedule (tf1clip/parity/pipelines.py).

What the schedule is (one enqueue thread a runner, shuffle queues dequeued from full, tf.data maps one
element at a time, interleaves deterministic), read off
the graph and the threads in a recorded run and in plain Python; that a queue pipeline then
draws the same batches run after run; the parity of whole scripts is in tests/test_parity_self.py
(fixtures/parity/queue_threads.py, queue_readers_join.py). Real TensorFlow, real subprocesses.
"""
from __future__ import annotations

from conftest import run_python

SCRIPT = """
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
tf.set_random_seed(3)
values = tf.constant(np.arange(60, dtype=np.float32))
one = tf.train.slice_input_producer([values], shuffle=False)[0]
batch = tf.train.shuffle_batch([one], batch_size=5, capacity=10, min_after_dequeue=2, num_threads=4)
own = tf.RandomShuffleQueue(capacity=10, min_after_dequeue=2, dtypes=[tf.float32], shapes=[[]])
fifo = tf.FIFOQueue(capacity=8, dtypes=[tf.float32], shapes=[[]])
two = tf.train.QueueRunner(fifo, [fifo.enqueue([tf.constant(1.0)]), fifo.enqueue([tf.constant(2.0)])])
shuffles = [o for o in tf.get_default_graph().get_operations() if o.type == "RandomShuffleQueueV2"]
print("min_after_dequeue", [o.get_attr("min_after_dequeue") for o in shuffles])
runner = [r for r in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) if r.name == shuffles[0].name][0]
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    mine = [t for t in threads if runner.name + "-" in t.name and "close_on_stop" not in t.name]
    print("threads", len(runner.enqueue_ops), len(mine), len(two.create_threads(sess, coord=coord, start=True)) - 1)
    print("batches", [sess.run(batch).astype(int).tolist() for _ in range(6)])
    print("fifo", [int(sess.run(fifo.dequeue())) for _ in range(6)])
    coord.request_stop()
    coord.join(stop_grace_period_secs=5)
"""


def _lines(proc) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in proc.stdout.splitlines()
            if line.split(" ", 1)[0] in ("min_after_dequeue", "threads", "batches", "fifo")}


def test_queue_runners_run_on_one_schedule_under_parity(tmp_path):
    script = tmp_path / "queues.py"
    script.write_text(SCRIPT)
    plain = _lines(run_python(script, cwd=tmp_path, timeout=120))
    assert plain["min_after_dequeue"] == "[2, 2]" and plain["threads"] == "4 4 2"  # TF 1.x's own schedule
    runs = []
    for k in range(3):
        out = tmp_path / f"rec{k}"
        proc = run_python("-m", "tf1clip.parity.record", "--side=new", f"--out={out}", "--", script, cwd=tmp_path,
                          timeout=120)
        runs.append(_lines(proc))
    pinned = runs[0]
    # shuffle_batch's queue: capacity - 1, each element picked from a full queue; one made by
    # hand keeps its own (the script may fill it itself, short of capacity)
    assert pinned["min_after_dequeue"] == "[9, 2]"
    assert pinned["threads"] == "4 1 1"  # one thread a runner: the four copies are one op; two ops in turn
    assert pinned["fifo"] == "[1, 2, 1, 2, 1, 2]"  # the two enqueue ops in turn, in their order
    batches = eval(pinned["batches"])  # noqa: S307 - our own printed list
    assert len(batches) == 6 and all(len(b) == 5 for b in batches)
    assert [v for b in batches for v in b] != sorted(v for b in batches for v in b)  # shuffled ...
    assert len({v for b in batches for v in b}) == 30  # ... each element once
    # the first batch is picked from the first 10 elements only: the queue was full, not fuller
    assert max(batches[0]) < 10 + 4
    assert all(run == pinned for run in runs[1:])  # the same batches every run


DATASETS = """
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
tf.set_random_seed(5)
base = tf.data.Dataset.range(64)
noisy = base.map(lambda x: tf.cast(x, tf.float32) + tf.random_uniform([]), num_parallel_calls=4)
mixed = base.interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=4,
                        num_parallel_calls=4, deterministic=False)
sloppy = base.apply(tf.data.experimental.parallel_interleave(
    lambda x: tf.data.Dataset.from_tensors(x), cycle_length=4, sloppy=True))
batched = base.apply(tf.data.experimental.map_and_batch(lambda x: x * 2, 8, num_parallel_calls=4))
def inputs(op):
    return [i.op for i in op.inputs]
print("map", noisy._variant_tensor.op.type)
print("interleave", mixed._variant_tensor.op.type, mixed._variant_tensor.op.get_attr("deterministic").decode())
print("parallel_interleave", sloppy._variant_tensor.op.get_attr("deterministic").decode())
print("map_and_batch", tf.make_ndarray(inputs(batched._variant_tensor.op)[2].get_attr("value")))
with tf.Session() as sess:
    value = tf.data.make_one_shot_iterator(noisy.batch(64)).get_next()
    print("noise", np.round(sess.run(value) - np.arange(64), 6).tolist())
"""


def test_datasets_run_on_one_schedule_under_parity(tmp_path):
    script = tmp_path / "datasets.py"
    script.write_text(DATASETS)

    def lines(proc):
        assert proc.returncode == 0, proc.stderr[-3000:]
        return dict(line.split(" ", 1) for line in proc.stdout.splitlines()
                    if line.split(" ", 1)[0] in ("map", "interleave", "parallel_interleave", "map_and_batch", "noise"))

    plain = lines(run_python(script, cwd=tmp_path, timeout=120))
    assert plain["map"] == "ParallelMapDatasetV2" and plain["interleave"].endswith(" false")
    assert plain["parallel_interleave"] == "false" and plain["map_and_batch"] == "4"
    runs = [lines(run_python("-m", "tf1clip.parity.record", "--side=new", f"--out={tmp_path / f'rec{k}'}", "--",
                             script, cwd=tmp_path, timeout=120)) for k in range(3)]
    pinned = runs[0]
    assert pinned["map"] == "MapDataset"  # one element at a time: the draws go to the elements in order
    assert pinned["interleave"].endswith(" true") and pinned["parallel_interleave"] == "true"
    assert pinned["map_and_batch"] == "1"
    noise = eval(pinned["noise"])  # noqa: S307 - our own printed list
    assert len(noise) == 64 and all(0.0 <= v < 1.0 for v in noise) and len(set(noise)) > 60
    assert all(run == pinned for run in runs[1:])  # the same draws for the same elements, every run

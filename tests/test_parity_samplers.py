"""Candidate samplers under `tf1clip parity`: every sampler op made without a seed gets the op
seed of its creation order in its graph (randomness.seed_candidate_samplers), so a TF 1.x graph
and its TF 2 translation (a `tf.function`, traced twice when it creates variables) draw the
same classes, run after run. Real TensorFlow in real subprocesses."""
import json

from conftest import FIXTURES, run_python, run_tf1clip

CONSTRUCTS = FIXTURES / "tf2" / "constructs"

# Draws every kind of candidate sampler three times in a TF 1.x graph (Session runs, after
# other random ops) and in a tf.function (its own random ops first; it creates a variable, so
# TensorFlow traces it twice), with or without the parity policy installed; prints JSON.
DRAWS = r'''
import json, sys
import numpy as np
import tensorflow as tf
from tf1clip.parity import randomness

if sys.argv[1] == "policy":
    randomness.seed_candidate_samplers()
labels = np.array([[1], [5], [7], [2]], np.int64)


def samplers(random, l):
    return {
        "log_uniform_unique": random.log_uniform_candidate_sampler(l, 1, 6, True, 50)[0],
        "log_uniform": random.log_uniform_candidate_sampler(l, 1, 6, False, 50)[0],
        "uniform": random.uniform_candidate_sampler(l, 1, 6, True, 50)[0],
        "learned_unigram": random.learned_unigram_candidate_sampler(l, 1, 6, True, 50)[0],
        "fixed_unigram": random.fixed_unigram_candidate_sampler(l, 1, 6, True, 50, unigrams=list(range(1, 51)))[0],
        "seeded": random.log_uniform_candidate_sampler(l, 1, 6, True, 50, seed=3)[0],
    }


graph = tf.Graph()
with graph.as_default():
    graph.seed = 5
    tf.compat.v1.random_normal([2]), tf.compat.v1.random_uniform([2])  # op seeds 0 and 1 of the graph
    ops = samplers(tf.compat.v1.random, labels)
    with tf.compat.v1.Session(graph=graph) as sess:
        tf1 = [sess.run(ops) for _ in range(3)]

tf.random.set_seed(5)
made = []


@tf.function
def step(l):
    if not made:
        made.append(tf.Variable(1.0))
    tf.random.normal([2])
    return samplers(tf.random, l)


tf2 = [step(tf.constant(labels)) for _ in range(3)]
print(json.dumps({side: {k: [d[k].numpy().tolist() if hasattr(d[k], "numpy") else d[k].tolist() for d in draws]
                         for k in draws[0]} for side, draws in (("tf1", tf1), ("tf2", tf2))}))
'''


def _draws(mode, tmp_path):
    proc = run_python("-c", DRAWS, mode, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_tf1_session_and_tf2_function_draw_the_same_classes_under_the_policy(tmp_path):
    policy, plain = _draws("policy", tmp_path), _draws("plain", tmp_path)
    for kind, runs in policy["tf1"].items():
        assert runs == policy["tf2"][kind], kind                   # the same three draws, run by run
        assert runs[0] != runs[1] or runs[1] != runs[2], kind      # the kernel advances at each run
        assert all(len(set(r)) == 6 for r in runs) or kind == "log_uniform", kind  # unique=True: distinct
    # without the policy the op seeds differ (the graph's op count), and so do the draws
    assert plain["tf1"]["log_uniform_unique"] != plain["tf2"]["log_uniform_unique"]
    # a sampler given its seed keeps it: the same draws with and without the policy
    assert policy["tf1"]["seeded"] == plain["tf1"]["seeded"] == plain["tf2"]["seeded"]


def _migrated(name, tmp_path):
    out = tmp_path / "tf2"
    proc = run_tf1clip("migrate", "--to", "tf2", "--outtree", out, CONSTRUCTS / name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (new,) = out.rglob(name)
    text = new.read_text()
    calls = [line for line in text.splitlines() if "tf.nn.nce_loss(" in line or "tf.nn.sampled_softmax_loss(" in line]
    assert len(calls) == 1 and "def train_step" in text and "tf.compat" not in text
    assert "partition_strategy" not in text.split("def train_step", 1)[1]  # dropped (TF 2's call has none)
    return new


def _exact(report):
    rows = json.loads(report.read_text())["optimizers"][0]["rows"]
    assert len(rows) == 8
    return all(r["loss_old"] == r["loss_new"] for r in rows)


def test_nce_loss_and_its_tf2_translation_train_alike(tmp_path):
    old = CONSTRUCTS / "nce_loss_skipgram.py"
    new = _migrated(old.name, tmp_path)
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", old, new, "--no-dropout", "--json", report, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "candidate samplers (nce_loss, sampled_softmax_loss) seeded by creation order" in proc.stdout
    assert _exact(report)  # the same negative classes at every step: the same losses, bit for bit


def test_sampled_softmax_with_accidental_hits_and_adam_trains_alike(tmp_path):
    """remove_accidental_hits=True, a unique sampler; the Keras-3 optimizer's variables are made in
    the step's first trace, so TensorFlow traces it twice: the sampler's seed counts per graph."""
    old = CONSTRUCTS / "sampled_softmax_get_variable.py"
    new = _migrated(old.name, tmp_path)
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", old, new, "--json", report, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "candidate samplers (nce_loss, sampled_softmax_loss) seeded by creation order" in proc.stdout
    assert _exact(report)


def test_nce_loss_self_parity(tmp_path):
    old = CONSTRUCTS / "nce_loss_skipgram.py"
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", old, old, "--json", report, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert _exact(report)

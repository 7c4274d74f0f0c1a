"""Parity checks itself: a script against its `--to compat` migration and against an identical
copy of itself must pass, for legacy fixtures and for one fixture per failure class of
issue 13 (fixtures/parity/README.md). Real scripts, real TensorFlow, real subprocesses.

The two programs are the same program, so any difference is the harness': unequal
randomness (MNIST reader, dropout, tf.data shuffles), an update it does not see (batch norm's
moving statistics, gradient descent written with tf.assign) or files one side left for the
other (a checkpoint restored at start).
"""
import json
import shutil

import pytest

from conftest import FIXTURES, make_mnist, run_tf1clip, sampled, tail

LEGACY = sorted(p.name for p in (FIXTURES / "legacy").glob("*.py"))
CLASSES = {  # fixture -> updates its whole run makes
    "mnist_no_seed.py": 8,
    "random_ops_in_step.py": 8,
    "batch_norm_contrib.py": 6,
    "assign_gradient_descent.py": 8,
    "assign_integer_sessions.py": 4,  # its first part writes 4 times
    "rnn_dropout_loop.py": 6,
    "rnn_batch_norm_deps.py": 6,
    "checkpoint_resume.py": 6,
    "estimator_dropout_unseeded.py": 6,
    "ragged_batches.py": 6,  # np.array of ragged pairs: an object array on both sides
    "queue_threads.py": 8,  # shuffle_batch(num_threads=4): queue runners on one schedule
    "queue_readers_join.py": 8,  # three readers into shuffle_batch_join
    "dataset_parallel_map.py": 8,  # a random op in a tf.data map with num_parallel_calls=4
    "tfe_linreg.py": 8,  # TF 1.x's eager API: eager enabled after the face's graph mode
}
# One legacy fixture stands for the others here (the LSTM's and the MNIST reader's harness cases are
# rnn_dropout_loop.py's and mnist_no_seed.py's below): every legacy fixture's compat migration is also
# held to the numbers it prints each step under `tf1clip run` (tests/test_migrate_legacy.py), and each
# one's TF2-tier output to parity (tests/test_tf2_parity.py).
LEGACY_HERE = [LEGACY[0]]
EVERY = ([FIXTURES / "legacy" / name for name in LEGACY_HERE] + [FIXTURES / "parity" / name for name in CLASSES
                                                            if name != "tfe_linreg.py"]
         + [FIXTURES / "runtime" / "tfe_linreg.py"])
# CI's sample (all of them under TF1CLIP_FULL_PROOF=1): one program per mechanism of the harness that
# a same-program run could get wrong, the MNIST reader's shuffle, an update no optimizer makes (batch
# norm's statistics, tf.assign descent), files one side leaves for the other, queue runners, a random op
# in a parallel tf.data map, TF 1.x's eager API. The others' mechanisms have their own tests besides:
# assign_integer_sessions below, dropout (test_parity_dropout), the Estimator (test_estimator_parity).
# Two TensorFlow processes a parity, two parities a script: CI's time keeps this to three, and
# the legacy clip, `tf.assign` descent, a parallel map, files left for the other side and TF 1.x's eager
# API run in the whole proof.
SAMPLE = ["mnist_no_seed.py", "batch_norm_contrib.py", "queue_threads.py"]
SCRIPTS = sampled(EVERY, SAMPLE, key=lambda path: path.name)


def _updates(script):
    return CLASSES.get(script.name, 10)  # every legacy fixture makes 10 updates


def _parity(old, new, cwd, *options):
    report = cwd / f"parity-{new.stem}.json"
    proc = run_tf1clip("parity", old, new, "--json", report, *options, cwd=cwd, timeout=600)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def _check_pass(proc, result, script, label):
    assert proc.returncode == 0, f"{script.name} vs {label}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n" \
                                 f"{tail(proc.stderr)}"
    assert result["passed"] and not result["problems"] and not result["errors"]
    rows = [row for opt in result["optimizers"] for row in opt["rows"]]
    per_update = len(result["optimizers"][0]["rows"])
    assert per_update == _updates(script), f"{script.name}: {per_update} steps compared"
    assert all(row["ok"] for row in rows)
    assert all(w["ok"] for opt in result["optimizers"] for w in opt["weights"])


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_passes_against_its_compat_migration_and_a_copy(script, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    if "mnist" in script.name:
        make_mnist().write_mnist(work / "MNIST_data")
    migrated = run_tf1clip("migrate", script, "--to", "compat", "--outtree", tmp_path / "compat", cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    compat = tmp_path / "compat" / script.name
    assert compat.read_text() != script.read_text()  # a different file: the compat face, no tf1clip.run
    copy = work / f"copy_{script.name}"
    shutil.copyfile(script, copy)

    proc, result = _parity(script, compat, work)
    _check_pass(proc, result, script, "its compat migration")
    proc, result = _parity(script, copy, work)
    _check_pass(proc, result, script, "an identical copy")
    assert result["new_runtime"].startswith("TF 1.x face")
    eager = script.name == "tfe_linreg.py"  # TF 1.x's eager API: the header says so
    assert result["old_runtime"] == ("TF 1.x eager, compat runtime" if eager else "TF1 graph, compat runtime")
    _left_as_it_was(work, script, copy)


def _left_as_it_was(work, script, copy):
    """The user's working directory is left as it was: no checkpoint, no log written into it."""
    assert sorted(p.name for p in work.iterdir()) == sorted(
        ["MNIST_data"] * ("mnist" in script.name) + [copy.name] + [p.name for p in work.glob("parity-*.json")])


def test_integer_writes_made_after_the_first_step_are_compared(tmp_path):
    """Integer and boolean variables written by assign ops, made after the run's first write and
    held by two sessions, are compared step by step: a NEW that doubles one of them differently
    (its compat migration, edited)
    fails at that write's first step, and names it."""
    script = FIXTURES / "parity" / "assign_integer_sessions.py"
    migrated = run_tf1clip("migrate", script, "--to", "compat", "--outtree", tmp_path / "compat", cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    wrong = tmp_path / "wrong.py"
    text = (tmp_path / "compat" / script.name).read_text()
    assert text.count("2 * scale") == 1
    wrong.write_text(text.replace("2 * scale", "3 * scale"))
    proc, result = _parity(script, wrong, tmp_path)
    assert proc.returncode == 1, proc.stdout[-2000:]
    by_name = {w["name"]: w for opt in result["optimizers"] for w in opt["weights"]}
    assert sorted(by_name) == ["counter:0", "flag:0", "scale:0", "total:0"]
    assert [opt["first_divergent_step"] for opt in result["optimizers"]] == [None, 1, None]
    assert not by_name["scale:0"]["ok"] and by_name["scale:0"]["max_abs_diff"] == 38.0  # 54 - 16 after 3 writes
    assert all(by_name[name]["ok"] for name in ("counter:0", "flag:0", "total:0"))
    rows = result["optimizers"][2]["rows"]
    assert len(rows) == 4  # two writes in each of two sessions

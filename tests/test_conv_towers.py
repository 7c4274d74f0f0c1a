"""Multi-GPU towers that reuse `tf.layers` variables (fixtures/runtime/conv_towers.py).

Training and evaluation towers on 1, 2 and 4 logical devices (soft-placed on the CPU) must
make exactly the one-tower variable set and, splitting one batch in equal parts, train as
one tower does on the whole batch (the average of equal splits' mean-loss gradients is the
whole batch's gradient). The compat migration prints the same lines and passes parity. A
tower fed 0 rows, which oneDNN's convolution gets wrong on some machines, stops with one line
naming it, and runs as TF 1.x did with TensorFlow's own kernels. Real subprocesses, real
TensorFlow.
"""
from __future__ import annotations

import math
import re

import pytest

from conftest import FIXTURES, line_of, run_python, run_tf1clip, tail
from test_runner import stderr_lines

FIXTURE = FIXTURES / "runtime" / "conv_towers.py"
STEP = re.compile(r"towers (\d+) step (\d+) loss (\S+) eval (\S+) accuracy (\S+)$")

# TF 1.x's names for one tower's layers (layer names restart in each ConvNet scope entry).
ONE_TOWER = ["ConvNet/conv2d/bias[4]", "ConvNet/conv2d/kernel[3x3x1x4]", "ConvNet/conv2d_1/bias[6]",
             "ConvNet/conv2d_1/kernel[2x2x4x6]", "ConvNet/dense/bias[10]", "ConvNet/dense/kernel[24x10]",
             "ConvNet/dense_1/bias[3]", "ConvNet/dense_1/kernel[10x3]"]
SLOTS = sorted([v for name in ONE_TOWER for v in (name, name.replace("[", "/Adam[", 1),
                                                   name.replace("[", "/Adam_1[", 1))]
                + ["beta1_power[]", "beta2_power[]"])


def _parse(stdout):
    """[(towers, variable names, [(loss, eval, accuracy) per step], weights checksum)] in run order"""
    runs = []
    for line in stdout.splitlines():
        words = line.split(" ")
        if words[0] != "towers":
            continue
        towers = int(words[1])
        if words[2] == "variables":
            assert words[4:6] == ["trainable", "8:"], line
            runs.append((towers, line.split(": ", 1)[1].split(" "), [], []))
            assert int(words[3]) == len(runs[-1][1]), line
            continue
        assert runs and runs[-1][0] == towers, line
        _, _, steps, weights = runs[-1]
        if words[2] == "weights":
            weights.append(float(words[3]))
        else:
            step = STEP.match(line)
            assert step and int(step.group(2)) == len(steps), line
            steps.append(tuple(float(step.group(k)) for k in (3, 4, 5)))
    return runs


def _same_run(run, one):
    """`run` makes `one`'s variables and prints its numbers up to float rounding."""
    _, names, steps, weights = run
    assert names == one[1]
    assert len(steps) == len(one[2]) == 3
    for got, want in zip(steps, one[2]):
        assert got == pytest.approx(want, rel=1e-5)
    assert weights == pytest.approx(one[3], rel=1e-5)


@pytest.fixture(scope="module")
def no_dropout():
    proc = run_tf1clip("run", FIXTURE, "--dropout", "0")
    assert proc.returncode == 0, tail(proc.stderr)
    return proc


def test_towers_make_the_one_tower_variables_and_train_like_it(no_dropout):
    runs = _parse(no_dropout.stdout)
    assert [run[0] for run in runs] == [1, 2, 4]
    one = runs[0]
    assert sorted(one[1]) == one[1] == SLOTS  # 8 layer variables, 16 Adam slots, 2 beta powers
    for run in runs[1:]:
        _same_run(run, one)
    for towers, _, steps, _ in runs:
        # the evaluation towers reuse the trained variables: without dropout they compute the
        # training towers' function, so each step's eval loss is the next step's training loss
        for before, after in zip(steps, steps[1:]):
            assert after[0] == pytest.approx(before[1], rel=1e-5), towers
        assert all(0 < loss < 3 for loss, _, _ in steps)


def test_the_other_reuse_styles_too(no_dropout):
    """cifar10's towers (tf.name_scope('tower_i') + get_variable_scope().reuse_variables())
    and reuse=tf.AUTO_REUSE for every copy."""
    proc = run_tf1clip("run", FIXTURE, "--dropout", "0", "--style", "scope,auto", "4")
    assert proc.returncode == 0, tail(proc.stderr)
    runs = _parse(proc.stdout)
    assert [run[0] for run in runs] == [4, 4]
    one = _parse(no_dropout.stdout)[0]
    for run in runs:
        _same_run(run, one)


def test_compat_migration_prints_the_same_lines_and_passes_parity(tmp_path, no_dropout):
    out = tmp_path / "out"
    proc = run_tf1clip("migrate", FIXTURE, "--to", "compat", "--outtree", out)
    assert proc.returncode == 0, proc.stderr
    migrated = out / FIXTURE.name
    ran = run_python(migrated, "--dropout", "0")
    assert ran.returncode == 0, tail(ran.stderr)
    assert ran.stdout == no_dropout.stdout
    parity = run_tf1clip("parity", FIXTURE, migrated, "--", "4")  # with dropout, equal randomness
    assert parity.returncode == 0, tail(parity.stdout + parity.stderr)
    assert parity.stdout.rstrip().endswith("PASS")
    assert "ConvNet/dense_1/kernel:0: 0  ok" in parity.stdout


def test_an_empty_tower_stops_in_one_line_or_runs_as_tf1_did():
    # 4 rows fed to 4 towers of 2: towers 2 and 3 get 0 rows. Whether oneDNN's convolution gets the
    # empty batch wrong depends on the machine (its build and the CPU's instruction set, seen once
    # to run right on a CI machine): with oneDNN asked for, tf1clip either names the defect in one
    # line or, where the kernels got it right, prints what TensorFlow's own kernels print.
    proc = run_tf1clip("run", FIXTURE, "--rows", "4", "--dropout", "0", "4", "1",
                       env={"TF_ENABLE_ONEDNN_OPTS": "1"})
    # TF 1.x ran it: the empty towers' mean loss is NaN and their gradients are zeros, so the
    # update is Adam's on half the 4-row gradient, which is the one-tower update up to epsilon
    ran = run_tf1clip("run", FIXTURE, "--rows", "4", "--dropout", "0", "4", "1",
                      env={"TF_ENABLE_ONEDNN_OPTS": "0"})
    assert ran.returncode == 0, tail(ran.stderr)
    (four, _, four_steps, _), (one, _, one_steps, _) = _parse(ran.stdout)
    assert (four, one) == (4, 1)
    assert all(math.isnan(loss) for loss, _, _ in four_steps)
    assert not any(math.isnan(loss) for loss, _, _ in one_steps)
    for got, want in zip(four_steps, one_steps):
        assert got[1:] == pytest.approx(want[1:], rel=1e-3)
    if proc.returncode == 0:
        flat = [x for run in _parse(proc.stdout) for step in run[2] for x in step]
        want = [x for steps in (four_steps, one_steps) for step in steps for x in step]
        assert flat == pytest.approx(want, rel=1e-5, nan_ok=True)
        return
    assert proc.returncode == 2, tail(proc.stderr)
    notes = [line for line in stderr_lines(proc) if line.startswith(str(FIXTURE))]
    # the empty towers' ops are unordered (TF 1.x too): either one's training copy stops first
    run_line = line_of(FIXTURE.read_text(), "_, value = sess.run([train_op, mean_loss], feed)")
    assert len(notes) == 1
    assert re.match(f"{re.escape(str(FIXTURE))}:{run_line}: ConvNet_[46]/conv2d_1/Conv2D: ", notes[0]), notes
    assert notes[0].split(": ", 2)[2] == (
        "this convolution's input has depth 4 in the graph but 1 "
        "when it ran: TF 2.21's oneDNN convolution gives a batch of 0 rows its input's shape (TF 1.x's "
        "kernels gave an empty result), e.g. a tower's slice of a feed with fewer rows than towers x batch "
        "size; feed every tower rows, or run with TF_ENABLE_ONEDNN_OPTS=0 (TensorFlow's own kernels, as "
        "TF 1.x used)")
    assert "Traceback" not in proc.stderr


def test_a_depth_the_graph_does_not_know_keeps_tensorflows_error(tmp_path):
    """Only a convolution whose graph depth disagrees with the one its kernel saw is named."""
    script = tmp_path / "wrong_depth.py"
    script.write_text(
        "import numpy as np\nimport tensorflow as tf\n"
        "x = tf.placeholder(tf.float32, [None, None, None, None])\n"
        "y = tf.nn.conv2d(x, tf.ones([3, 3, 3, 2]), [1, 1, 1, 1], 'VALID')\n"
        "with tf.Session() as sess:\n    sess.run(y, {x: np.ones([1, 5, 5, 2], np.float32)})\n")
    proc = run_tf1clip("run", script)
    assert proc.returncode == 1
    assert "input depth must be evenly divisible by filter depth: 2 vs 3" in proc.stderr
    assert "Traceback" in proc.stderr and "batch of 0 rows" not in proc.stderr

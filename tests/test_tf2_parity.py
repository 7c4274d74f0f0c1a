"""Every fixture converted to the TF2 tier runs under plain `python` on TF 2.21 and passes
`tf1clip parity` against its TF1 original (real TensorFlow, real subprocesses, ~7 s each).

Covers the recipe goldens (fixtures/tf2_golden/rXX.py), the structure goldens (a helper
inlined, a model class refolded into a class with `@tf.function` methods, a GAN with two
optimizers: fixtures/tf2_golden/structures/converted/*.py), one fixture per optimizer-table row
and per Keras-argument rewrite (fixtures/tf2_golden/optimizers/*.py, converted here), so each
row is proven by parity, and one small program per construct the translator reads
(fixtures/tf2/constructs/*.py: layers, variable scopes, feeds, main() and flags, the MNIST reader,
tf.data iterators, sparse gradients), converted here.
A get_slot row is proven by what the script prints: parity compares losses, gradients and
weights, not the slot values a script reads, so OLD and NEW are recorded from the same start
values and every number they print must agree.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import make_mnist, run_python, run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402
from codemods.tf2.optimizer_table import OPTIMIZERS, SLOTS  # noqa: E402

GOLDEN = ROOT / "fixtures" / "tf2_golden"
LEGACY = ROOT / "fixtures" / "legacy"
CONSTRUCTS = ROOT / "fixtures" / "tf2" / "constructs"


# constructs whose TF2-tier output another test runs through parity, with stricter checks
PROVEN_ELSEWHERE = {
    "nce_loss_skipgram.py": "tests/test_parity_samplers.py (losses equal bit for bit)",
    "sampled_softmax_get_variable.py": "tests/test_parity_samplers.py (losses equal bit for bit)",
    "rnn_dropout_wrapper_stack.py": "tests/test_parity_dropout.py (dropout on, and its inverted rate fails)",
}


def _pairs():
    for golden in sorted(GOLDEN.glob("r*.py")):
        yield pytest.param(LEGACY / golden.name, golden, id=golden.stem)
    for golden in sorted((GOLDEN / "structures" / "converted").glob("*.py")):
        yield pytest.param(GOLDEN / "structures" / golden.name, golden, id="structure-" + golden.stem)
    # one per optimizer-table row, and the Keras-argument rewrites (lr=, clipvalue with clipnorm)
    rows = {(ROOT / "fixtures" / row.proof).resolve() for row in OPTIMIZERS.values()}
    for old in sorted((GOLDEN / "optimizers").glob("*.py")):
        kind = "optimizer" if old.resolve() in rows else "keras-args"
        yield pytest.param(old, None, id=f"{kind}-{old.stem}")
    # one small program per construct the translator reads (fixtures/tf2/constructs/), converted here
    for old in sorted(CONSTRUCTS.glob("*.py")):
        if old.name not in PROVEN_ELSEWHERE:
            yield pytest.param(old, None, id=f"construct-{old.stem}")


@pytest.mark.parametrize("old, new", list(_pairs()))
def test_converted_fixture_runs_and_passes_parity(old, new, tmp_path):
    golden = new is not None
    if new is None:
        result = convert(old.read_text(), old.name)
        assert result.text is not None, result.notes
        new = tmp_path / old.name
        new.write_text(result.text)
    if "read_data_sets" in new.read_text():  # the MNIST reader: local synthetic files, never a download
        make_mnist().write_mnist(tmp_path / "MNIST_data")
    if golden:
        # A committed golden also runs as the user would run it, outside parity's recorder. For the
        # outputs converted here, parity's NEW side is that run (plain TensorFlow 2, no TF 1.x face),
        # so a second process would prove nothing more.
        plain_dir = tmp_path / "plain"  # its own folder: files the plain run writes (checkpoints) stay out
        plain_dir.mkdir()
        if "read_data_sets" in new.read_text():
            make_mnist().write_mnist(plain_dir / "MNIST_data")
        plain = run_python(new, cwd=plain_dir, timeout=300)
        assert plain.returncode == 0, plain.stderr[-2000:]
    assert "import tf1clip" not in new.read_text() and "from tf1clip" not in new.read_text()
    proc = run_tf1clip("parity", old, new, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def _record_both(old: Path, new: Path, tmp_path: Path) -> list:
    """What OLD (TF 1.x) and NEW print under parity's recorder, NEW from OLD's start values."""
    init = tmp_path / "old" / "initial.npz"
    recorded = []
    for side, script, options, env in (("old", old, [], {"TF_USE_LEGACY_KERAS": "1"}),
                                       ("new", new, [f"--init={init}"], None)):
        proc = run_python("-m", "tf1clip.parity.record", f"--side={side}", f"--out={tmp_path / side}", *options,
                          "--", script, cwd=tmp_path, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        recorded.append(proc.stdout)
    return recorded


def _printed(stdout: str) -> list:
    return [float(v) for v in re.findall(r"=(-?[0-9.]+(?:e[-+]?[0-9]+)?)", stdout)]


@pytest.mark.parametrize("row", SLOTS.values(), ids=lambda r: f"{r.optimizer.rsplit('.', 1)[1]}-{r.slot}")
def test_slot_read_prints_what_tf1_printed(row, tmp_path):
    old = ROOT / "fixtures" / row.proof
    new = GOLDEN / old.name
    assert new.is_file(), f"{old.name} is not converted"
    recorded = _record_both(old, new, tmp_path)
    old_numbers, new_numbers = map(_printed, recorded)
    assert len(old_numbers) == len(new_numbers) > 10
    np.testing.assert_allclose(new_numbers, old_numbers, rtol=1e-4, atol=1e-5)


def test_build_time_print_prints_what_tf1_printed(tmp_path):
    """R10 printed the gradients' types once, when TF1 built the graph; the converted script prints
    them when `build_time_print` is traced, once, before the loop: the same line, at the same place."""
    old, new = LEGACY / "r10_slim_create_train_op.py", GOLDEN / "r10_slim_create_train_op.py"
    old_lines, new_lines = (out.splitlines() for out in _record_both(old, new, tmp_path))
    assert old_lines[0] == new_lines[0] == "sparse=1,0,0,0,0"
    assert len(old_lines) == len(new_lines)
    np.testing.assert_allclose(_printed("\n".join(new_lines)), _printed("\n".join(old_lines)), rtol=1e-4, atol=1e-5)


def test_resuming_from_a_tf1_checkpoint_restores_adams_state(tmp_path):
    """A TF 1.x checkpoint holding Adam's slots and beta powers (`layer1/W1/Adam`, `..._1`,
    `optimizer/beta1_power`): the converted script restores them into the Adam twin and continues
    exactly as TF 1.x does. Independent check: the losses both print after resuming (they differ
    from step 4 on if the slots were left at zero), then parity from that checkpoint."""
    old = CONSTRUCTS / "checkpoint_resume_adam.py"
    result = convert(old.read_text(), old.name)
    assert result.text is not None, result.notes
    assert ('adam_tf1_state(train_op_optimizer, {"layer1/W1": W1, "layer1/b1": b1, "output/W2": W2}, "Adam", '
            '("optimizer/beta1_power", "optimizer/beta2_power"))') in result.text
    (tmp_path / "new.py").write_text(result.text)
    first = run_tf1clip("run", old, cwd=tmp_path, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    assert (tmp_path / "model" / "mlp.ckpt-3.index").is_file()
    printed = {}
    for side, command in (("old", lambda cwd: run_tf1clip("run", old, cwd=cwd, timeout=300)),
                          ("new", lambda cwd: run_python(tmp_path / "new.py", cwd=cwd, timeout=300))):
        cwd = tmp_path / side
        shutil.copytree(tmp_path / "model", cwd / "model")
        proc = command(cwd)
        assert proc.returncode == 0, proc.stderr[-2000:]
        printed[side] = re.findall(r"step (\d+) loss ([0-9.]+)", proc.stdout)
    assert [int(s) for s, _ in printed["old"]] == [4, 5, 6]
    np.testing.assert_allclose([float(v) for _, v in printed["new"]], [float(v) for _, v in printed["old"]],
                               rtol=1e-6)
    assert [s for s, _ in printed["new"]] == ["4", "5", "6"]
    proc = run_tf1clip("parity", old, tmp_path / "new.py", "--no-dropout", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_state_fed_back_at_run_time_prints_what_tf1_printed(tmp_path):
    """A feed dict that gets the rnn's state only at run time (`feed.update`, `feed[in_state] = ...`):
    one step per fed set, picked by the dict's keys. Parity compares the training updates; the
    generation changes no variable, so the characters and state sums it prints, recorded from the
    same start values, are compared with TF 1.x's here."""
    old = CONSTRUCTS / "state_fed_back_at_run_time.py"
    result = convert(old.read_text(), old.name)
    assert result.text is not None, result.notes
    assert "(compute_sample_and_out_state_2 if 'in_state_3' in feed else compute_sample_and_out_state)(**feed)" \
        in result.text
    new = tmp_path / old.name
    new.write_text(result.text)
    recorded = _record_both(old, new, tmp_path)
    old_numbers, new_numbers = map(_printed, recorded)
    states = re.findall(r"state=([0-9.]+)", recorded[0])
    assert len(states) == 12 and len(set(states[:4])) == 4  # the state fed back changes every character
    assert len(old_numbers) == len(new_numbers) == 30
    np.testing.assert_allclose(new_numbers, old_numbers, rtol=1e-4, atol=1e-5)


def test_variables_under_several_context_managers_keep_tf1_names(tmp_path):
    """`with tf.device(...), tf.name_scope("embedding"):` reads as nested blocks: a `tf.Variable(name="W")`
    inside is TF 1.x's `embedding/W`, a `get_variable` under `variable_scope("out")` is `out/W`. The
    names both print, and the losses, are TF 1.x's."""
    old = CONSTRUCTS / "several_context_managers.py"
    result = convert(old.read_text(), old.name)
    assert result.text is not None, result.notes
    new = tmp_path / old.name
    new.write_text(result.text)
    old_out, new_out = _record_both(old, new, tmp_path)
    assert old_out.splitlines()[0] == new_out.splitlines()[0] == "['embedding/W:0', 'out/W:0', 'out/b:0']"
    np.testing.assert_allclose(_printed(new_out), _printed(old_out), rtol=1e-5, atol=1e-6)


def test_switch_left_to_its_literal_default_evaluates_as_tf1(tmp_path):
    """`is_training = tf.placeholder_with_default(False, ...)` fed True by the train step only: the
    evaluation runs on the default (the other branch of a tf.cond) and prints TF 1.x's accuracies from
    the same weights (the int default `top` too)."""
    old = CONSTRUCTS / "switch_with_literal_default.py"
    result = convert(old.read_text(), old.name)
    assert result.text is not None, result.notes
    assert "is_training = tf.constant(False, tf.bool)" in result.text
    new = tmp_path / old.name
    new.write_text(result.text)
    old_out, new_out = _record_both(old, new, tmp_path)
    evaluated = [re.findall(r"acc=([0-9.]+) top=([0-9.]+)", out) for out in (old_out, new_out)]
    assert len(evaluated[0]) == len(evaluated[1]) == 6
    np.testing.assert_allclose(np.array(evaluated[1], float), np.array(evaluated[0], float), atol=1e-6)

"""The TF2 tier's fixtures pass `tf1clip parity` against their TF 1.x originals (real TensorFlow,
real subprocesses, ~10-25 s a case).

The whole proof is `benchmarks/tf2_parity.py`: every recipe golden, hand-written recipe form
(fixtures/tf2, sampled by tests/test_parity_fixtures.py), structure golden, optimizer-table row,
Keras-argument rewrite and construct program, through the same `prove()` this file calls (a
golden also runs under plain `python`; a fixture without one is converted first). Run it for every
change of the TF2 tier. CI runs the fixed sample `SAMPLE` below (all of them under
TF1CLIP_FULL_PROOF=1), chosen by one rule each:

* three optimizer-table rows and one Keras-argument rewrite: the rows whose math is furthest from
  Keras's own (RMSProp's ones-initialised slot and epsilon inside the sqrt, Nesterov momentum, Adagrad's
  accumulator) and the argument rewrite that clips twice; every row is in the whole proof, which a change
  of the optimizer table runs (tests/test_twins.py holds the rnn twins, case by case, on CI);
* one structure golden and two recipe goldens: a golden is held to the converter's output by
  tests/test_tf2_golden.py, so its parity on CI guards the harness and the runtime, not the
  translation; the sample takes the two-optimizer GAN, the global-norm recipe and the MNIST one, the
  only one also run under plain `python` outside the recorder (parity's NEW side is a plain TF 2 run
  already);
* four construct programs of the translator's families (rnn, session given to helpers, feeds,
  layers), the others of each family being the benchmark's.

The sample is small because CI's time is: each case is two TensorFlow processes (~7 s here, twice that
on a slower machine); `python benchmarks/full_proofs.py` runs them all.

Constructs whose printed numbers this file compares below (`_record_both`) are not in the sample:
those tests run both sides already. A get_slot row is proven by what the script prints: parity
compares losses, gradients and weights, not the slot values a script reads, so OLD and NEW are
recorded from the same start values and every number they print must agree.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import FULL_PROOF, run_python, run_tf1clip, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from codemods.tf2 import convert  # noqa: E402
from codemods.tf2.optimizer_table import SLOTS  # noqa: E402
import tf2_parity  # noqa: E402

GOLDEN, LEGACY, HAND, CONSTRUCTS = tf2_parity.GOLDEN, tf2_parity.LEGACY, tf2_parity.HAND, tf2_parity.CONSTRUCTS
CASES = {case.id: case for case in tf2_parity.cases()}
SAMPLE_CONSTRUCTS = ("rnn_lstm_text_classifier", "session_given_to_methods", "keep_prob_and_learning_rate_feeds",
                     "tf_layers_cnn")
# compared below from the same start values, printed numbers and all
RECORDED_HERE = ("checkpoint_resume_adam", "state_fed_back_at_run_time", "several_context_managers",
                 "switch_with_literal_default", "saver_save_without_step")
SAMPLE_GOLDENS = ("structure-gan_two_optimizers", "r02_clip_by_global_norm", "r07_mnist_mlp")
SAMPLE_ROWS = ("optimizer-rmsprop", "optimizer-momentum_nesterov", "optimizer-adagrad",
               "keras-args-keras_clipvalue_clipnorm")
SAMPLE = sampled([c for c in CASES.values() if c.kind != "hand" and c.old.stem not in RECORDED_HERE],
                 [*SAMPLE_ROWS, *SAMPLE_GOLDENS, *("construct-" + name for name in SAMPLE_CONSTRUCTS)],
                 key=lambda case: case.id)


def test_the_benchmark_lists_every_fixture_and_the_sample_every_kind():
    """Nothing escapes the whole proof: every golden, every hand-written TF 2 version and every construct
    program is one of its cases (less those proven elsewhere), and the sample takes each kind of case
    (the hand-written versions' sample is tests/test_parity_fixtures.py's, with its stricter checks)."""
    news = {(case.golden or case.old).resolve() for case in CASES.values()}
    wanted = ({g.resolve() for g in GOLDEN.glob("r*.py")} | {h.resolve() for h in HAND.glob("r*.py")}
              | {p.resolve() for p in (GOLDEN / "optimizers").glob("*.py")}
              | {g.resolve() for g in (GOLDEN / "structures" / "converted").glob("*.py")}
              | {p.resolve() for p in CONSTRUCTS.glob("*.py") if p.name not in tf2_parity.PROVEN_ELSEWHERE})
    assert news == wanted and len(CASES) == len(news) >= 60
    assert all(case.old.resolve() == (LEGACY / case.old.name).resolve()
               for case in CASES.values() if case.kind in ("recipe", "hand"))
    assert {case.kind for case in SAMPLE} | {"hand"} == set(tf2_parity.KINDS)
    assert all(name + ".py" not in {c.old.name for c in SAMPLE} for name in RECORDED_HERE)
    assert all(("construct-" + name) in CASES for name in RECORDED_HERE)


@pytest.mark.parametrize("case", SAMPLE, ids=lambda c: c.id)
def test_converted_fixture_passes_parity(case, tmp_path):
    outcome = tf2_parity.prove(case, tmp_path, plain_run=FULL_PROOF or case.id == "r07_mnist_mlp")
    assert outcome.ok, f"{outcome.stage}: {outcome.detail}"
    assert outcome.stage == "parity"


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


def test_saver_save_without_a_step_writes_what_tf1_wrote(tmp_path):
    """saver.save(sess, path) without a global_step: the converted script, run by plain `python`, prints what
    TF 1.x printed (the paths, tf.train.latest_checkpoint, a restore of the bare path), leaves the same files
    (less TF 1.x's `.meta` graphs, which TF 2 has no graph to write) and the same `checkpoint` state files,
    byte for byte: relative and absolute folders, a bare file name, max_to_keep=2 deleting older saves."""
    old = CONSTRUCTS / "saver_save_without_step.py"
    result = convert(old.read_text(), old.name)
    assert result.text is not None, result.notes
    assert 'save_checkpoint(saver, "ckpt/model_%d.ckpt" % epoch, 2)' in result.text
    runs = {}
    for side in ("old", "new"):
        cwd = tmp_path / side
        cwd.mkdir()
        (cwd / "script.py").write_text(old.read_text() if side == "old" else result.text)
        proc = (run_tf1clip("run", cwd / "script.py", cwd=cwd, timeout=300) if side == "old"
                else run_python(cwd / "script.py", cwd=cwd, timeout=300))
        assert proc.returncode == 0, proc.stderr[-2000:]
        files = sorted(str(p.relative_to(cwd)) for p in cwd.rglob("*") if p.is_file() and p.name != "script.py")
        states = {f: (cwd / f).read_text().replace(str(cwd), "CWD") for f in files if Path(f).name == "checkpoint"}
        runs[side] = (proc.stdout.replace(str(cwd), "CWD"), files, states)
    (old_out, old_files, old_states), (new_out, new_files, new_states) = runs["old"], runs["new"]
    assert new_out == old_out and "restored True" in old_out and old_out.count("saved") == 6
    assert new_files == [f for f in old_files if not f.endswith(".meta")]
    assert not any(f.startswith("ckpt/model_0") or f.startswith("ckpt/model_3") for f in old_files)  # deleted
    assert new_states == old_states and len(old_states) == 3


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

"""Parity with dropout on, TF 1.x against TF 2 (keyed dropout draws, tf1clip/parity/keyed_draws.py).

For each dropout fixture, a correct TF 2 migration passes with no flags, and the three classic
mistakes fail: keep_prob passed as rate, the dropout left out, dropout applied at evaluation time
(seen only in the fetched evaluation values: training is unchanged); on CI, the sample `MISTAKES`. The correct migrations
are written by hand (fixtures/parity/dropout/*_tf2.py) or are the TF2 tier's own output; the
broken ones are made here from them by one edit each, checked to have happened. Real
TensorFlow, real subprocesses."""
import json
import re
import sys

import pytest

from conftest import FIXTURES, run_tf1clip, sampled

sys.path.insert(0, str(FIXTURES.parent))
from codemods.tf2 import convert  # noqa: E402

DROPOUT = FIXTURES / "parity" / "dropout"
KEYED = "randomness: TF 1.x against TF 2, dropout keyed"


def _parity(old, new, tmp_path, *flags):
    report = tmp_path / f"report-{new.stem}.json"
    proc = run_tf1clip("parity", old, new, "--json", report, *flags, cwd=tmp_path)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def _edited(text, old, new, path, count=1):
    assert text.count(old) == count, (old, text.count(old))
    path.write_text(text.replace(old, new))
    return path


def _tier(old, tmp_path, edit=None):
    text = old.read_text()
    if edit:
        text = edit(text)
    result = convert(text, old.name)
    assert result.text is not None, result.notes
    original = tmp_path / old.name
    original.write_text(text)
    new = tmp_path / f"{old.stem}_tier.py"
    new.write_text(result.text)
    return original, new


HAND = {
    "keep_prob_fed": {
        "rate inverted": ("rate=rate)  # MUTATE:train_rate", "rate=1 - rate)"),
        "dropout dropped": ("        hidden = tf.nn.dropout(hidden, rate=rate)  # MUTATE:train_rate", "        pass"),
        "dropout at evaluation": ("net(x, 0.0) - y))  # MUTATE:eval_rate", "net(x, 0.4) - y))"),
    },
    "two_towers": {
        "rate inverted": ("rate=0.3)  # MUTATE:train_rate", "rate=0.7)"),
        "dropout dropped": ("        hidden = tf.nn.dropout(hidden, rate=0.3)  # MUTATE:train_rate", "        pass"),
        "dropout at evaluation": ("model(x, False) - y))  # MUTATE:eval_rate", "model(x, True) - y))"),
    },
}


# CI's sample of the mistakes (all of them under TF1CLIP_FULL_PROOF=1): all three on keep_prob_fed, the
# inverted rate on the two towers (the other two fail there for the reasons they fail on the first).
MISTAKES = {"keep_prob_fed": sampled(HAND["keep_prob_fed"], list(HAND["keep_prob_fed"])),
            "two_towers": sampled(HAND["two_towers"], ["rate inverted"])}


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_migration_passes_with_dropout_on_and_each_classic_mistake_fails(name, tmp_path):
    old, new = DROPOUT / f"{name}_tf1.py", DROPOUT / f"{name}_tf2.py"
    proc, report = _parity(old, new, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert KEYED in proc.stdout
    assert report["fetched"]["status"] == "equal" and report["fetched"]["count"] == 8, report["fetched"]
    assert all(r["loss_abs"] <= 1e-6 * abs(r["loss_old"]) for r in report["optimizers"][0]["rows"])
    for mistake in MISTAKES[name]:
        before, after = HAND[name][mistake]
        broken = _edited(new.read_text(), before, after, tmp_path / f"{name}_{mistake.replace(' ', '_')}.py")
        proc, report = _parity(old, broken, tmp_path)
        assert proc.returncode == 1, (mistake, proc.stdout + proc.stderr)
        if mistake == "dropout at evaluation":  # training is the same: only the fetched evaluation differs
            assert report["optimizers"][0]["first_divergent_step"] is None, mistake
            assert report["fetched"]["status"] == "different" and report["fetched"]["first"] == 2, report["fetched"]
        else:
            assert report["optimizers"][0]["first_divergent_step"] == 1, (mistake, proc.stdout)


def test_keyed_draws_do_not_move_when_the_tf2_program_makes_other_random_ops_first(tmp_path):
    """Keras 3 Dropout layers (their own seed generators), a random op drawn in the step before the
    dropouts, an initializer made later: the k-th dropout still draws OLD's k-th mask."""
    proc, report = _parity(DROPOUT / "keep_prob_fed_tf1.py", DROPOUT / "keep_prob_fed_keras_tf2.py", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["fetched"]["status"] == "equal", report["fetched"]


def test_tier_output_of_layers_dropout_with_a_training_flag_passes_and_its_mistakes_fail(tmp_path):
    old, new = _tier(DROPOUT / "layers_training_tf1.py", tmp_path)
    text = new.read_text()
    assert text.count("tf.nn.dropout(hidden, rate=0.3) if is_training else hidden") == 2, text
    proc, report = _parity(old, new, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert KEYED in proc.stdout and report["fetched"]["status"] == "equal", report["fetched"]
    inverted = _edited(text, "rate=0.3)", "rate=0.7)", tmp_path / "inverted.py", count=2)
    proc, report = _parity(old, inverted, tmp_path)
    assert proc.returncode == 1 and report["optimizers"][0]["first_divergent_step"] == 1, proc.stdout
    at_eval = _edited(text, "compute_loss(X, Y, False)", "compute_loss(X, Y, True)", tmp_path / "at_eval.py")
    proc, report = _parity(old, at_eval, tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert report["optimizers"][0]["first_divergent_step"] is None and report["fetched"]["first"] == 2


def test_tier_output_of_dropout_wrappers_in_a_dynamic_rnn_passes_with_dropout_on(tmp_path):
    """Two DropoutWrapper'd LSTM cells (keep_prob fed 0.6) in a while loop: each time step's mask
    is keyed by its iteration; keep_prob passed as rate fails at step 1."""
    source = FIXTURES / "tf2" / "constructs" / "rnn_dropout_wrapper_stack.py"
    old, new = _tier(source, tmp_path, edit=lambda t: re.sub(r"TRAIN_KEEP = 1\.0", "TRAIN_KEEP = 0.6", t, count=1))
    assert "TRAIN_KEEP = 0.6" in old.read_text()
    proc, report = _parity(old, new, tmp_path, "--steps", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert KEYED in proc.stdout
    inverted = _edited(new.read_text(), "rate=1.0 - keep_prob", "rate=keep_prob", tmp_path / "inverted.py")
    proc, report = _parity(old, inverted, tmp_path, "--steps", "3")
    assert proc.returncode == 1 and report["optimizers"][0]["first_divergent_step"] == 1, proc.stdout


def test_no_dropout_still_passes_the_inverted_rate_it_cannot_see(tmp_path):
    """The blindness the keyed policy removes, kept visible: --no-dropout passes keep_prob as rate."""
    new = _edited((DROPOUT / "keep_prob_fed_tf2.py").read_text(), "rate=rate)  # MUTATE:train_rate",
                  "rate=1 - rate)", tmp_path / "inverted.py")
    proc, _ = _parity(DROPOUT / "keep_prob_fed_tf1.py", new, tmp_path, "--no-dropout")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_rnn_whose_dropped_outputs_nothing_reads_does_not_shift_the_next_rnns_masks(tmp_path):
    """golbin's Seq2Seq shape: the encoder's DropoutWrapper drops outputs nobody reads, so TF 1.x
    never runs it while the TF 2 loop body does; the decoder's dropout must still be numbered
    alike on both sides (it was not: the tier's output failed at step 1). A dropout NEW makes in
    its step and never uses changes nothing; the decoder's keep probability changed fails."""
    old, new = _tier(DROPOUT / "seq2seq_tf1.py", tmp_path)
    text = new.read_text()
    proc, report = _parity(old, new, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert KEYED in proc.stdout and report["fetched"]["status"] == "equal", report["fetched"]
    dead = _edited(text, "        outputs, enc_states = encode_rnn(enc_input)\n",
                   "        outputs, enc_states = encode_rnn(enc_input)\n"
                   "        unused = tf.nn.dropout(enc_states, rate=0.5)\n", tmp_path / "dead.py")
    proc, report = _parity(old, dead, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    decoder = _edited(text, "dec_cell = DropoutWrapper(dec_cell, output_keep_prob=0.5)",
                      "dec_cell = DropoutWrapper(dec_cell, output_keep_prob=0.7)", tmp_path / "decoder.py")
    proc, report = _parity(old, decoder, tmp_path)
    assert proc.returncode == 1 and report["optimizers"][0]["first_divergent_step"] == 1, proc.stdout

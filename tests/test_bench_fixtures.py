"""fixtures/bench: the compute-bound models the step-time benchmark times side by side.

A step-time ratio means something only if both sides compute the same training: each fixture
is migrated by the real `tf1clip migrate --to tf2` (what the benchmark times), must land in the
TF2 tier (a compat fallback would time a Session against a Session), and must pass
`tf1clip parity` against its TF 1.x original, with the global-norm clip acting.
`--no-dropout`: the TF 1.x and TF 2 programs draw their dropout masks from different random
streams (docs/parity.md), so dropout is compared by its expectation.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_tf1clip, tail

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "fixtures" / "bench"


@pytest.mark.parametrize("old", sorted(BENCH.glob("*.py")), ids=lambda p: p.stem)
def test_bench_fixture_migrates_to_tf2_and_trains_like_tf1(old, tmp_path):
    out = tmp_path / "migrated"
    proc = run_tf1clip("migrate", old, "--to", "tf2", "--outtree", out, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, tail(proc.stdout + proc.stderr)
    assert f"{old.name} (TF2 tier)" in proc.stdout + proc.stderr, tail(proc.stdout + proc.stderr)
    new = out / old.name
    text = new.read_text()
    assert "tf.function" in text and "Session" not in text and "tf1clip" not in text
    report = tmp_path / "parity.json"
    proc = run_tf1clip("parity", "--no-dropout", "--steps", "3", "--json", report, old, new,
                       cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, tail(proc.stdout + proc.stderr, 40)
    rows = [row for opt in json.loads(report.read_text())["optimizers"] for row in opt["rows"]]
    assert len(rows) == 3 and all(row["ok"] for row in rows)
    for row in rows:  # the clip acts on every compared step, on both sides
        assert row["grad_norm_pre_old"] > 5.0 and row["grad_norm_post_new"] == pytest.approx(5.0, rel=1e-5)

"""`tf1clip migrate --to tf2 --verify`: a TF2 output is kept only when parity passes.

Real subprocesses: the CLI migrates a tree of two scripts (fixtures/tf2_safety/probes/reduction_indices.py,
which the TF2 tier converts exactly, and fixtures/tf2_safety/verify/noise_in_step.py, whose training
step draws random label noise, which TF 1 and TF 2 draw differently),
runs `tf1clip parity` on each converted script in a scratch copy, keeps the first one's TF2
output and writes the compat tier's output for the second; both carry their parity table in the
text report and in --report JSON.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from conftest import run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tf1clip.migrate.engine import migrate  # noqa: E402

FIXTURES = ROOT / "fixtures" / "tf2_safety" / "verify"
EXACT = ROOT / "fixtures" / "tf2_safety" / "probes" / "reduction_indices.py"


def test_verify_keeps_tf2_output_only_where_parity_passes(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES, tree)
    shutil.copy(EXACT, tree / "exact.py")
    before = {p.name: p.read_bytes() for p in tree.iterdir()}
    report = tmp_path / "report.json"
    out = tmp_path / "out"
    proc = run_tf1clip("migrate", tree, "--to", "tf2", "--verify", "--verify-steps", "3", "--outtree", out,
                       "--report", report, cwd=tmp_path, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in tree.iterdir()} == before  # the user's tree is not touched

    files = {Path(f["path"]).name: f for f in json.loads(report.read_text())["files"]}
    exact, noisy = files["exact.py"], files["noise_in_step.py"]

    assert exact["tier"] == "tf2" and exact["parity"]["passed"]
    rows = exact["parity"]["optimizers"][0]["rows"]
    assert len(rows) == 3 and all(r["ok"] and abs(r["loss_old"] - r["loss_new"]) < 1e-5 for r in rows)
    text = EXACT.read_text()
    assert (out / "exact.py").read_text() == migrate(text, "exact.py", to="tf2").text

    assert noisy["tier"] == "compat" and not noisy["parity"]["passed"]
    assert noisy["parity"]["problems"], noisy["parity"]
    assert any(h["rule"] == "verify" and "not kept" in h["message"] for h in noisy["left_for_human"])
    text = (FIXTURES / "noise_in_step.py").read_text()
    assert (out / "noise_in_step.py").read_text() == migrate(text, "noise_in_step.py", to="compat").text

    summary = json.loads(report.read_text())["summary"]
    assert summary["verified"] == 1 and summary["verify_failed"] == 1
    assert "verifying" in proc.stderr and "parity (3 steps" in proc.stderr  # progress, then the tables
    assert "loss OLD" in proc.stderr


def test_verify_needs_the_tf2_tier(tmp_path):
    for args in (["--verify"], ["--to", "tf2", "--verify-steps", "3"], ["--to", "tf2", "--verify", "--strategy",
                                                                       "multi_worker"]):
        proc = run_tf1clip("migrate", EXACT, *args, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "error" in proc.stderr, proc.stderr

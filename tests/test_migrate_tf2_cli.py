"""`tf1clip migrate --to tf2` over the legacy fixtures: TF2 tier where exact, compat elsewhere,
every fallback reported with file:line and why; the result runs and is stable."""
import json
import shutil

from conftest import FIXTURES, run_python, run_tf1clip

LEGACY = FIXTURES / "legacy"
TF2_TIER = {"r01_clip_by_value.py", "r02_clip_by_global_norm.py", "r03_clip_by_norm.py",
            "r04_contrib_clip_gradients_by_norm.py", "r05_keras_clipvalue.py", "r07_mnist_mlp.py",
            "r08_tf_gradients_global_norm_decay.py", "r09_optimize_loss.py", "r09b_optimize_loss_callable.py",
            "r10_slim_create_train_op.py", "r11_minimize_no_clip.py"}


def test_tree_migrates_to_tf2_with_compat_fallback_and_reasons(tmp_path):
    src = tmp_path / "legacy"
    shutil.copytree(LEGACY, src)
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    proc = run_tf1clip("migrate", "legacy", "--to", "tf2", "--outtree", out, "--report", report, "-j", "2",
                       cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(report.read_text())
    files = {f["path"].split("/")[-1]: f for f in doc["files"] if f["kind"] == "python"}
    assert {name for name, f in files.items() if f.get("tier") == "tf2"} == TF2_TIER
    for name, entry in files.items():
        assert entry["status"] == "changed"
        if name not in TF2_TIER:
            assert entry["tier"] == "compat"
            reasons = [h for h in entry["left_for_human"] if "not converted to the TF2 tier" in h["message"]]
            assert len(reasons) == 1 and reasons[0]["line"] > 0, entry
    assert doc["summary"]["tf2_tier"] == 11 and doc["summary"]["compat_fallback"] == 1
    assert "11 to the TF2 tier, 1 to the compat tier" in proc.stderr
    # TF2-tier output imports only TensorFlow (and numpy): never tf1clip, never compat.v1
    for name in TF2_TIER:
        text = (out / name).read_text()
        assert "tf1clip" not in text and "compat.v1" not in text and "tf.GradientTape()" in text
    # applying it again changes nothing
    again = run_tf1clip("migrate", "out", "--to", "tf2", "--check", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_tf2_tier_output_runs_under_plain_python(tmp_path):
    src = tmp_path / "legacy"
    src.mkdir()
    shutil.copy(LEGACY / "r09_optimize_loss.py", src)
    proc = run_tf1clip("migrate", "legacy", "--to", "tf2", "--inplace", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    ran = run_python(src / "r09_optimize_loss.py", cwd=src)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert len([line for line in lines if line.startswith("step=")]) == 10
    assert lines[-1].startswith("checksum=")

"""Global-norm clipping under MirroredStrategy (2 logical CPUs) against single-device TF1."""
import json

from conftest import FIXTURES, run_tf1clip

DIST = FIXTURES / "distribute"
OLD = DIST / "single_device_tf1.py"


def parity(new, tmp_path, *extra):
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", OLD, DIST / new, "--replicas", "2", "--json", report, *extra, cwd=tmp_path)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def test_all_reduce_then_clip_once_matches_single_device(tmp_path):
    proc, result = parity("mirrored_clip_once.py", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = result["optimizers"][0]["rows"]
    assert len(rows) == 16
    assert all(row["grad_norm_pre_old"] > 5.0 for row in rows)  # the clip bites every step
    assert all(abs(row["grad_norm_post_new"] - 5.0) < 1e-4 for row in rows)


def test_keras_global_clipnorm_clips_per_replica_and_diverges(tmp_path):
    proc, result = parity("mirrored_keras_global_clipnorm.py", tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    first = result["optimizers"][0]["rows"][0]
    # same loss and raw gradient at step 1, but what is applied is the sum of two
    # separately clipped halves: its norm exceeds the 5.0 that single-device TF1 applied
    assert first["loss_old"] == first["loss_new"]
    assert abs(first["grad_norm_post_old"] - 5.0) < 1e-4
    assert 5.1 < first["grad_norm_post_new"] <= 10.0
    assert result["optimizers"][0]["first_divergent_step"] == 1
    assert all(w["max_abs_diff"] > 1e-2 for w in result["optimizers"][0]["weights"])


def test_replicas_needs_a_distributed_new(tmp_path):
    new = tmp_path / "plain.py"
    new.write_text((DIST / "mirrored_clip_once.py").read_text()
                   .replace("strategy = tf.distribute.MirroredStrategy()",
                            "strategy = tf.distribute.get_strategy()"))
    report = tmp_path / "r.json"
    proc = run_tf1clip("parity", OLD, new, "--replicas", "2", "--json", report, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "created no tf.distribute.MirroredStrategy over 2 replicas" in proc.stderr

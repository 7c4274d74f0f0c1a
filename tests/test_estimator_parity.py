"""An Estimator script trains exactly like the same model written as a session loop (issue 15's
"done when"), and its `--to compat` output trains exactly like it. Real subprocesses, real
`tf1clip parity` at its default tolerances.
"""
import shutil

import pytest

from conftest import FIXTURES, run_python, run_tf1clip, tail

ESTIMATOR = FIXTURES / "estimator" / "est_clip_global_norm.py"
SESSION = FIXTURES / "estimator" / "session_clip_global_norm.py"


def _parity(old, new, cwd, *args):
    proc = run_tf1clip("parity", old, new, "--json", cwd / "parity.json", "--", *args, cwd=cwd, timeout=600)
    assert proc.returncode == 0, tail(proc.stdout + proc.stderr)
    assert proc.stdout.rstrip().endswith("PASS")
    import json

    with open(cwd / "parity.json") as handle:
        return json.load(handle)


@pytest.mark.parametrize("args", [(), ("--input", "dataset"), ("--calls", "3")],
                         ids=["numpy_input_fn", "dataset_input_fn", "three_train_calls"])
def test_estimator_model_fn_passes_parity_against_session_loop(tmp_path, args):
    result = _parity(ESTIMATOR, SESSION, tmp_path, *args)
    (optimizer,) = result["optimizers"]
    assert len(optimizer["rows"]) == 12  # every update of every train() call, in one record
    assert optimizer["first_divergent_step"] is None and all(w["ok"] for w in optimizer["weights"])
    assert len(optimizer["weights"]) == 4 and result["passed"] and not result["problems"]


def test_compat_output_of_estimator_script_runs_and_passes_parity(tmp_path):
    work = tmp_path / "src"
    work.mkdir()
    shutil.copy(ESTIMATOR, work / ESTIMATOR.name)
    proc = run_tf1clip("migrate", work, "--to", "compat", "--inplace", cwd=tmp_path)
    assert proc.returncode == 0, tail(proc.stderr)
    migrated = work / ESTIMATOR.name
    text = migrated.read_text()
    assert "import tf1clip.estimator" in text and "tf.estimator" not in text
    assert "[estimator] tensorflow.estimator.Estimator → tf1clip.estimator.Estimator" in proc.stderr
    ran = run_python(migrated, "--steps", "4", cwd=tmp_path)  # plain python, no tf1clip run
    assert ran.returncode == 0, tail(ran.stderr)
    assert ran.stdout.strip().splitlines()[-1] == "global_step=4"
    _parity(ESTIMATOR, migrated, tmp_path, "--calls", "2")
    # and the other way round: the session loop under tf1clip run, the migrated Estimator as NEW
    _parity(SESSION, migrated, tmp_path)

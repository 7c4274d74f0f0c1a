"""Compat-tier (and TF2-tier) constructs found in the proving ground's failures, each on a
fixture of our own (fixtures/runtime): the `--to compat` output runs under plain Python, prints
what the original prints under `tf1clip run`, and passes parity against it. Real TensorFlow, real subprocesses.
"""
import json
import shutil

import numpy as np

from conftest import FIXTURES, run_python, run_tf1clip, tail

RUNTIME = FIXTURES / "runtime"


def _migrate(source, out, cwd):
    proc = run_tf1clip("migrate", source, "--to", "compat", "--outtree", out, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def test_datasets_made_in_a_module_left_on_tf2(tmp_path):
    """`data_utils.py` uses no TF 1.x-only API, so the compat tier leaves it, and its datasets
    are TF 2 datasets. The TF 1.x script reading their `output_types`, `output_shapes` and
    `make_one_shot_iterator()` reads them through `tf.data.get_output_types(...)` and the
    other tf.compat.v1.data functions, and trains the same."""
    work = tmp_path / "original"
    shutil.copytree(RUNTIME / "dataset_module", work)
    report = _migrate(work, tmp_path / "compat", tmp_path)
    out = tmp_path / "compat"
    assert (out / "data_utils.py").read_text() == (work / "data_utils.py").read_text()
    text = (out / "train.py").read_text()
    assert "tf.data.Iterator.from_structure(tf.data.get_output_types(train), tf.data.get_output_shapes(train))" in text
    assert "first_test_row = tf.data.make_one_shot_iterator(test).get_next()" in text
    assert "train.py:8: [dataset_v1] `.output_types` → tf.data.get_output_types(...)" in report

    original = run_tf1clip("run", "train.py", cwd=work)
    assert original.returncode == 0, tail(original.stderr)
    migrated = run_python("train.py", cwd=out)
    assert migrated.returncode == 0, tail(migrated.stderr)
    assert migrated.stdout == original.stdout
    lines = migrated.stdout.splitlines()
    assert len(lines) == 10  # 2 epochs of 4 batches, the test loss, the first test row
    # by hand: zero weights, so the first loss is the mean square of the first batch's targets
    rng = np.random.RandomState(3)
    x = rng.randn(64, 5).astype(np.float32)
    y = (x.dot(rng.randn(5, 1)) + 0.5).astype(np.float32)
    assert lines[0] == "loss %.6f" % float(np.mean(y[:16] ** 2))
    assert lines[-1] == "first test x %.6f" % x[0, 0]

    result_file = tmp_path / "parity.json"
    proc = run_tf1clip("parity", work / "train.py", out / "train.py", "--json", result_file, cwd=work, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    result = json.loads(result_file.read_text())
    assert result["passed"] and len(result["optimizers"][0]["rows"]) == 8


def test_flags_absl_logging_defines_too(tmp_path):
    """`log_dir` and `v`, defined by the script and by absl.logging: the compat output drops
    absl.logging's flag before each definition, so the script's own flags parse the command
    line (without those lines TF 2.21 stops on DuplicateFlagError)."""
    _migrate(RUNTIME / "flags_log_dir.py", tmp_path / "compat", tmp_path)
    script = tmp_path / "compat" / "flags_log_dir.py"
    text = script.read_text()
    guards = [line for line in text.splitlines() if "delattr(" in line]
    assert guards == ['if flags.FLAGS.find_module_defining_flag("log_dir") == "absl.logging": '
                      'delattr(flags.FLAGS, "log_dir")',
                      'if tf.app.flags.FLAGS.find_module_defining_flag("v") == "absl.logging": '
                      'delattr(tf.app.flags.FLAGS, "v")']
    for args, expected in ((["--log_dir=/tmp/elsewhere", "--v=5"], "log_dir=/tmp/elsewhere v=5 scaled=10.0"),
                           ([], "log_dir=./logs v=3 scaled=6.0")):
        original = run_tf1clip("run", RUNTIME / "flags_log_dir.py", *args, cwd=tmp_path)
        migrated = run_python(script, *args, cwd=tmp_path)
        assert migrated.returncode == 0, tail(migrated.stderr)
        assert original.stdout == migrated.stdout == expected + "\n"

    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text("\n".join(line for line in text.splitlines() if line not in guards) + "\n")
    failed = run_python(unguarded, cwd=tmp_path)
    assert failed.returncode != 0 and "DuplicateFlagError: The flag 'log_dir' is defined twice" in failed.stderr


def test_flags_named_like_absl_logging_in_the_tf2_tier(tmp_path):
    """The TF2 tier writes absl's flags, and drops absl.logging's flag of the same name first too."""
    proc = run_tf1clip("migrate", RUNTIME / "flags_log_dir.py", "--to", "tf2", "--outtree", tmp_path / "tf2",
                       cwd=tmp_path)
    assert proc.returncode == 0 and "1 to the TF2 tier" in proc.stderr, proc.stderr
    script = tmp_path / "tf2" / "flags_log_dir.py"
    text = script.read_text()
    assert 'delattr(absl_flags.FLAGS, "log_dir")' in text and 'delattr(absl_flags.FLAGS, "v")' in text
    assert "compat.v1" not in text
    migrated = run_python(script, "--log_dir=/tmp/elsewhere", "--v=5", cwd=tmp_path)
    assert migrated.returncode == 0, tail(migrated.stderr)
    assert migrated.stdout == "log_dir=/tmp/elsewhere v=5 scaled=10.0\n"

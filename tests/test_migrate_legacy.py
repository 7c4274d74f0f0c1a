"""Issue 4, first "Done when": every fixtures/legacy script, migrated with `--to compat`, runs
under plain `python` on TF 2.21 and prints the same numbers as the original under `tf1clip run`.

All fixtures are migrated in one `tf1clip migrate -j 2` run; the 2 × N script runs go through a
small thread pool (each is a subprocess importing TensorFlow, ~3 s). A second migrate run over
the output must report no changes.
"""
from __future__ import annotations

import ast
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
from glob import glob
from pathlib import Path

import pytest

from conftest import QUIET_ENV, make_mnist, run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
LEGACY = ROOT / "fixtures" / "legacy"
SCRIPTS = [Path(p).name for p in sorted(glob(str(LEGACY / "*.py")))]
# Every test here reads the module fixture below: one xdist worker runs them all, so its 2 × N
# TensorFlow runs happen once, not once per worker (`--dist loadgroup`, .ci/run).
pytestmark = pytest.mark.xdist_group("migrate_legacy")


def _env():
    env = dict(os.environ)
    env.update(QUIET_ENV)  # PYTHONHASHSEED=0
    env.pop("TF_USE_LEGACY_KERAS", None)
    return env


def _data_into(folder: Path, script: Path) -> None:
    """Copy the fixtures' data files next to the script; write MNIST where it reads it."""
    for other in LEGACY.iterdir():
        if other.is_file() and other.suffix != ".py":
            shutil.copy(other, folder / other.name)
    if "MNIST_data" in script.read_text(encoding="utf-8"):
        make_mnist().write_mnist(folder / "MNIST_data")


def _run(argv, cwd):
    proc = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def _contrib_uses(text: str) -> list[str]:
    """`tensorflow.contrib` imports and `.contrib` attributes left in the code (not in comments)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Attribute) and node.attr == "contrib" and "tf1clip" not in ast.unparse(node):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tensorflow.contrib"):
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("tensorflow.contrib")]
    return found


@pytest.fixture(scope="module")
def legacy_runs(tmp_path_factory):
    if not SCRIPTS:
        return {}
    base = tmp_path_factory.mktemp("legacy")
    report = base / "report.json"
    proc = run_tf1clip("migrate", LEGACY, "--to", "compat", "--outtree", base / "migrated", "-j", "2",
                       "--report", report)
    assert proc.returncode == 0, proc.stderr
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for name in SCRIPTS:
            new_dir, old_dir = base / "new" / name[:-3], base / "old" / name[:-3]
            new_dir.mkdir(parents=True)
            old_dir.mkdir(parents=True)
            shutil.copy(base / "migrated" / name, new_dir / name)
            shutil.copy(LEGACY / name, old_dir / name)
            _data_into(new_dir, LEGACY / name)
            _data_into(old_dir, LEGACY / name)
            jobs[name] = (pool.submit(_run, [sys.executable, name], new_dir),
                          pool.submit(_run, [sys.executable, "-m", "tf1clip", "run", name], old_dir))
        runs = {name: (new.result(), old.result()) for name, (new, old) in jobs.items()}
    again = run_tf1clip("migrate", base / "migrated", "--check", "--report", base / "again.json")
    return {"runs": runs, "report": json.loads(report.read_text()), "again": again,
            "again_report": json.loads((base / "again.json").read_text()), "dir": base / "migrated"}


@pytest.mark.parametrize("name", SCRIPTS)
def test_migrated_fixture_prints_the_same_numbers_as_tf1clip_run(legacy_runs, name):
    (new_code, new_out, new_err), (old_code, old_out, old_err) = legacy_runs["runs"][name]
    assert old_code == 0, f"original under tf1clip run failed:\n{old_err[-3000:]}"
    assert new_code == 0, f"migrated script failed under plain python:\n{new_err[-3000:]}"
    assert new_out.strip(), "the fixture printed nothing"
    assert new_out == old_out


@pytest.mark.parametrize("name", SCRIPTS)
def test_migrated_fixture_is_compat_form_and_reported(legacy_runs, name):
    text = (legacy_runs["dir"] / name).read_text(encoding="utf-8")
    entry = next(f for f in legacy_runs["report"]["files"] if Path(f["path"]).name == name)
    assert entry["status"] == "changed" and entry["changes"]
    assert "import tensorflow.compat.v1 as tf" in text
    assert text.index("tf.disable_v2_behavior()") > text.index("import tensorflow.compat.v1 as tf")
    assert not _contrib_uses(text)
    if "TF_USE_LEGACY_KERAS" in text:
        assert text.index("TF_USE_LEGACY_KERAS") < text.index("import tensorflow")
    # The report names every tf1clip runtime import the output has.
    used = sorted({line.split()[1].split(" as ")[0] for line in text.splitlines()
                   if line.startswith(("import tf1clip", "from tf1clip"))})
    assert bool(used) == bool(entry.get("runtime")), (used, entry.get("runtime"))


def test_second_migration_reports_no_changes(legacy_runs):
    assert SCRIPTS, "fixtures/legacy holds no scripts"
    again = legacy_runs["again"]
    assert again.returncode == 0, again.stderr
    summary = legacy_runs["again_report"]["summary"]
    assert summary["changed"] == 0 and summary["changes"] == 0 and summary["unchanged"] == len(SCRIPTS)

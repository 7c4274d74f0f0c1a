"""Issue 4, second and third "Done when": the fixture tree migrates with each outcome, twice = once.

fixtures/migrate/tree/ has a Python 2 file, a broken file, a notebook (magics, outputs, a
cell magic), non-Python files, a CRLF file, a latin-1 file with a coding cookie, a UTF-8 file
with a BOM, an executable script, TF 2 code, mixed TF 1/2 code and a library package;
fixtures/migrate/tree_expected/ holds the expected bytes of every file that changes. Symlinks
(one inside the tree, one file and one directory pointing outside) are made per test. Every
test runs the real CLI in a subprocess and checks exit codes, bytes, modes and the report.
"""
from __future__ import annotations

import json
import os
import pty
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import QUIET_ENV, run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "fixtures" / "migrate" / "tree"
EXPECTED = ROOT / "fixtures" / "migrate" / "tree_expected"
SECRET = b"import tensorflow as tf\nx = tf.placeholder(tf.float32)\n"


def _make_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    # What a checkout might not keep, made explicit: CRLF endings and the executable bit.
    crlf = tree / "crlf_model.py"
    crlf.write_bytes(crlf.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    os.chmod(tree / "run_train.py", 0o755)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_bytes(SECRET)
    os.symlink("train.py", tree / "link_inside.py")
    os.symlink(os.path.join("..", "outside", "secret.py"), tree / "link_outside.py")
    os.symlink(os.path.join("..", "outside"), tree / "linked_dir")
    return tree


def _expected(rel: str) -> bytes:
    """tree_expected/'s bytes (CRLF for crlf_model.py, whatever a checkout did to it)."""
    data = (EXPECTED / rel).read_bytes()
    if rel == "crlf_model.py":
        data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return data


def _snapshot(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_file():
                out[rel] = ("file", path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return out


def _files(root: Path) -> list[str]:
    return sorted(rel for rel, v in _snapshot(root).items() if v[0] == "file")


def _entry(report: dict, rel: str) -> dict:
    return next(f for f in report["files"] if f["path"].replace(os.sep, "/").endswith("tree/" + rel))


@pytest.fixture
def tree(tmp_path):
    return _make_tree(tmp_path)


def test_default_prints_a_diff_and_writes_nothing(tree, tmp_path):
    before, outside = _snapshot(tree), _snapshot(tmp_path / "outside")
    proc = run_tf1clip("migrate", "tree", cwd=tmp_path)
    assert proc.returncode == 2  # a Python 2 file and a broken file could not be processed
    assert _snapshot(tree) == before and _snapshot(tmp_path / "outside") == outside
    assert "--- a/tree/train.py\n+++ b/tree/train.py\n" in proc.stdout
    assert "+import tensorflow.compat.v1 as tf\n" in proc.stdout
    assert "-    cell = rnn.BasicLSTMCell(units)\n" in proc.stdout
    assert "\033[" not in proc.stdout  # no colour when stdout is not a terminal
    assert "tf1clip migrate: 16 files: 7 would change, 4 unchanged, 3 skipped, 2 errors" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_inplace_gives_each_outcome(tree, tmp_path):
    before = _snapshot(tree)
    proc = run_tf1clip("migrate", "tree", "--inplace", "--report", "report.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    after = _snapshot(tree)

    # Python 2 and broken files: byte-for-byte unchanged, reported with file:line.
    for rel, line, words in [("legacy_py2.py", 5, "Python 2 syntax (print statement)"),
                             ("broken.py", 3, "syntax error")]:
        assert after[rel] == before[rel]
        entry = _entry(report, rel)
        assert entry["status"] == "error" and entry["line"] == line and words in entry["reason"]
        assert f"tree/{rel}:{line}: {words}" in proc.stderr

    # Rewritten files: the expected bytes, encoding, BOM, newline style and mode kept.
    for rel in ["train.py", "model/lstm.py", "crlf_model.py", "latin1_data.py", "bom_utf8.py",
                "run_train.py", "notebook.ipynb"]:
        assert after[rel][1] == _expected(rel), rel
        assert after[rel][2] == before[rel][2], rel
        assert _entry(report, rel)["status"] == "changed"
    crlf = after["crlf_model.py"][1]
    assert crlf.count(b"\r\n") == crlf.count(b"\n") == len(crlf.splitlines())
    assert b"caf\xe9" in after["latin1_data.py"][1] and after["latin1_data.py"][1].startswith(b"# -*- coding: latin-1")
    assert after["bom_utf8.py"][1].startswith(b"\xef\xbb\xbfimport tensorflow.compat.v1 as tf\n")
    assert after["run_train.py"][2] == 0o755 and after["run_train.py"][1].startswith(b"#!/usr/bin/env python\n")

    # The notebook: code cells rewritten, magics, outputs and everything else as they were.
    old_nb, new_nb = json.loads(before["notebook.ipynb"][1]), json.loads(after["notebook.ipynb"][1])
    for old_cell, new_cell in zip(old_nb["cells"], new_nb["cells"]):
        assert {k: v for k, v in old_cell.items() if k != "source"} == {k: v for k, v in new_cell.items() if k != "source"}
    assert old_nb["metadata"] == new_nb["metadata"]
    sources = ["".join(c["source"]) for c in new_nb["cells"]]
    assert sources[1].startswith("%matplotlib inline\n") and "!nvidia-smi\n" in sources[1]
    assert sources[2].endswith("loss?") and "tf1clip.clip_gradients_by_norm(" in sources[2]
    assert sources[3] == "".join(old_nb["cells"][3]["source"])  # %%time cell: left, reported
    assert "    files = !ls\n" in sources[4]
    nb_entry = _entry(report, "notebook.ipynb")
    assert {c.get("cell") for c in nb_entry["changes"]} == {2, 3}
    assert [(h["cell"], h["rule"]) for h in nb_entry["left_for_human"]] == [(4, "notebook")]

    # Left alone, with the reason.
    for rel, status, reason in [("tf2_model.py", "unchanged", "no TF 1.x-only API"),
                                ("utils.py", "unchanged", "does not use TensorFlow"),
                                ("mixed.py", "unchanged", "mixes TF 2 and TF 1"),
                                ("README.md", "skipped", "not a Python file"),
                                ("data/config.json", "skipped", "not a Python file"),
                                ("link_outside.py", "skipped", "points outside the tree"),
                                ("linked_dir", "skipped", "points outside the tree"),
                                ("link_inside.py", "skipped", "inside the tree")]:
        assert after[rel] == before[rel], rel
        entry = _entry(report, rel)
        assert entry["status"] == status and reason in entry["reason"], entry
    assert "tf.GradientTape" in _entry(report, "mixed.py")["left_for_human"][0]["message"] or \
        "tf.function" in _entry(report, "mixed.py")["left_for_human"][0]["message"]
    assert (tmp_path / "outside" / "secret.py").read_bytes() == SECRET

    # Every change has a line and a rule; places left for a human say why; runtime named.
    lstm = _entry(report, "model/lstm.py")
    assert all(c["line"] >= 1 and c["rule"] for c in lstm["changes"])
    assert [(h["line"], h["rule"]) for h in lstm["left_for_human"]] == [(15, "contrib_symbols")]
    assert "tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper" in lstm["left_for_human"][0]["message"]
    assert _entry(report, "train.py")["runtime"] == ["tf1clip.clip_gradients_by_norm"]
    assert {(c["line"], c["rule"]) for c in _entry(report, "train.py")["changes"]} >= {
        (3, "compat_v1_imports"), (3, "disable_v2_behavior"), (3, "legacy_keras"), (14, "contrib_symbols"),
        (15, "contrib_symbols")}
    summary = report["summary"]
    assert (summary["files"], summary["changed"], summary["unchanged"], summary["error"]) == (16, 7, 4, 2)
    assert summary["left_for_human"] == 3 and summary["use_runtime"] == 2
    assert not [p for p in tmp_path.rglob("*") if "tf1clip-tmp" in p.name]


def test_second_run_reports_no_changes(tree, tmp_path):
    first = run_tf1clip("migrate", "tree", "--inplace", cwd=tmp_path)
    assert first.returncode == 2
    migrated = _snapshot(tree)
    second = run_tf1clip("migrate", "tree", "--inplace", "--check", "--report", "again.json", cwd=tmp_path)
    assert second.returncode == 2  # still the two files that cannot be processed, nothing else
    summary = json.loads((tmp_path / "again.json").read_text())["summary"]
    assert summary["changed"] == 0 and summary["changes"] == 0 and summary["error"] == 2
    assert _snapshot(tree) == migrated
    assert second.stdout == ""


def test_outtree_mirrors_the_tree_and_copies_other_files(tree, tmp_path):
    before = _snapshot(tree)
    proc = run_tf1clip("migrate", "tree", "--outtree", "out", "-j", "2", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert _snapshot(tree) == before
    out = _snapshot(tmp_path / "out")
    for rel, value in before.items():
        if rel in ("link_outside.py", "linked_dir"):
            assert rel not in out  # not followed, not copied
            continue
        if value[0] == "link":
            assert out[rel] == value  # a link inside the tree stays a (relative) link
            continue
        expected = EXPECTED / rel
        assert out[rel][1] == (_expected(rel) if expected.exists() else value[1]), rel
        assert out[rel][2] == value[2], rel  # modes mirrored (run_train.py stays executable)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "outside", "tree"]
    assert proc.stdout == ""


def test_jobs_give_the_same_result_as_one_process(tree, tmp_path):
    one = run_tf1clip("migrate", "tree", "--outtree", "one", "--report", "one.json", cwd=tmp_path)
    many = run_tf1clip("migrate", "tree", "--outtree", "many", "-j", "3", "--report", "many.json", cwd=tmp_path)
    assert one.returncode == many.returncode == 2
    assert _snapshot(tmp_path / "one") == _snapshot(tmp_path / "many")
    strip = lambda r: [{k: v for k, v in f.items() if k != "written"} for f in r["files"]]  # noqa: E731
    one_r, many_r = (json.loads((tmp_path / n).read_text()) for n in ("one.json", "many.json"))
    assert strip(one_r) == strip(many_r) and one_r["summary"] == many_r["summary"]
    assert one.stderr.replace("one/", "") == many.stderr.replace("many/", "")


def test_migrated_tree_runs_like_the_original(tree, tmp_path):
    """The migrated package (train.py importing model/lstm.py) runs under plain python."""
    assert run_tf1clip("migrate", "tree", "--outtree", "out", cwd=tmp_path).returncode == 2
    env = dict(os.environ, **QUIET_ENV)
    env.pop("TF_USE_LEGACY_KERAS", None)
    new = subprocess.Popen([sys.executable, "train.py"], cwd=tmp_path / "out", env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    old = subprocess.Popen([sys.executable, "-m", "tf1clip", "run", "train.py"], cwd=tree, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    (new_out, new_err), (old_out, old_err) = new.communicate(timeout=300), old.communicate(timeout=300)
    assert old.returncode == 0, old_err[-2000:]
    assert new.returncode == 0, new_err[-2000:]
    assert new_out == old_out and new_out.count("step=") == 3


@pytest.mark.parametrize("args, code", [
    (["tree/train.py", "--check"], 1),
    (["tree/utils.py", "tree/tf2_model.py", "--check"], 0),
    (["tree/train.py", "tree/broken.py", "--check"], 2),
    (["tree/train.py"], 0),
])
def test_check_exit_codes(tree, tmp_path, args, code):
    before = _snapshot(tree)
    proc = run_tf1clip("migrate", *args, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    assert _snapshot(tree) == before


def test_check_after_inplace_is_clean(tree, tmp_path):
    assert run_tf1clip("migrate", "tree/train.py", "tree/crlf_model.py", "--inplace", "--check", cwd=tmp_path).returncode == 1
    assert run_tf1clip("migrate", "tree/train.py", "tree/crlf_model.py", "--check", cwd=tmp_path).returncode == 0


def test_missing_path_is_an_error_but_the_others_are_processed(tree, tmp_path):
    proc = run_tf1clip("migrate", "tree/train.py", "nope.py", "--inplace", cwd=tmp_path)
    assert proc.returncode == 2
    assert "error      nope.py: no such file or directory" in proc.stderr
    assert (tree / "train.py").read_bytes() == _expected("train.py")


def test_explicit_symlink_argument_is_not_followed(tree, tmp_path):
    proc = run_tf1clip("migrate", "tree/link_outside.py", "--inplace", cwd=tmp_path)
    assert proc.returncode == 0
    assert "is a symlink: not followed" in proc.stderr
    assert (tmp_path / "outside" / "secret.py").read_bytes() == SECRET and (tree / "link_outside.py").is_symlink()


@pytest.mark.parametrize("args, words", [
    (["tree", "--to", "tf3"], "argument --to: invalid choice: 'tf3'"),
    (["tree", "--inplace", "--outtree", "x"], "not allowed with argument"),
    (["tree", "-j", "-1"], "-j must be 0 or more"),
    (["tree", "--outtree", "tree"], "is the input tree itself; use --inplace"),
    ([], "the following arguments are required: PATH"),
])
def test_usage_errors_are_one_line_exit_2(tree, tmp_path, args, words):
    before = _snapshot(tree)
    proc = run_tf1clip("migrate", *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert words in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == "" and _snapshot(tree) == before


def _run_on_pty(args, cwd):
    """Run the CLI with stdout and stderr on a pseudo-terminal; return everything it printed."""
    env = dict(os.environ, **QUIET_ENV)
    env.pop("NO_COLOR", None)
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tf1clip", *args], cwd=cwd, env=env,
                            stdout=follower, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace")


def test_colour_and_progress_only_on_a_terminal(tree, tmp_path):
    code, shown = _run_on_pty(["migrate", "tree"], tmp_path)
    assert code == 2
    assert "\033[32m+import tensorflow.compat.v1 as tf\033[0m" in shown  # coloured diff (rich)
    assert "━" in shown and "13/13" in shown  # rich's progress bar over the 13 Python files and notebooks
    piped = run_tf1clip("migrate", "tree", cwd=tmp_path)
    assert "\033[" not in piped.stdout + piped.stderr and "\r" not in piped.stderr

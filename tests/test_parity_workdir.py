"""Isolation: each side of `tf1clip parity` runs in its own copy of the working directory, and
the user's files are never written (tf1clip/parity/workdir.py). Real files, real subprocesses."""
import json
import os
import re
import shutil
import textwrap

import pytest

from conftest import FIXTURES, run_python, run_tf1clip
from tf1clip.parity.workdir import WorkdirError, mirror


def _tree(root):
    (root / "data").mkdir(parents=True)
    (root / "data" / "small.txt").write_text("small")
    (root / "data" / "big.bin").write_bytes(b"B" * 100)
    (root / "train.py").write_text("print('hi')\n")
    (root / "data" / "alias.txt").symlink_to("small.txt")
    for skipped in (".git", "__pycache__"):
        (root / skipped).mkdir()
        (root / skipped / "x").write_text("x")
    return root


def test_mirror_copies_small_files_links_large_ones_and_skips_tool_folders(tmp_path):
    source = _tree(tmp_path / "src")
    made = mirror(source, tmp_path / "copy", file_limit=16)
    copy = tmp_path / "copy"
    assert (made.copied, made.linked) == (2, 1)
    assert not (copy / "train.py").is_symlink() and (copy / "train.py").read_text() == "print('hi')\n"
    assert not (copy / "data" / "small.txt").is_symlink()
    assert os.readlink(copy / "data" / "big.bin") == str(source / "data" / "big.bin")
    assert os.readlink(copy / "data" / "alias.txt") == "small.txt"  # a link in the source stays a link
    assert not (copy / ".git").exists() and not (copy / "__pycache__").exists()
    # the total budget links what does not fit, smallest files copied first
    made = mirror(source, tmp_path / "copy2", total_limit=6)
    assert (made.copied, made.linked) == (1, 2) and not (tmp_path / "copy2" / "data" / "small.txt").is_symlink()
    with pytest.raises(WorkdirError, match=r"holds more than 3 files and folders; parity copies"):
        mirror(source, tmp_path / "copy3", entry_limit=3)


WRITER = """
import os, sys
from tf1clip.parity.workdir import protect_gfile, protect_links
protect_links(sys.argv[1])
with open("data/big.bin", "a") as handle:          # append: the copy keeps the content
    handle.write("+appended")
with open("big2.bin", "w") as handle:               # truncate: nothing to copy
    handle.write("rewritten")
fd = os.open("big3.bin", os.O_WRONLY | os.O_APPEND)
os.write(fd, b"+os")
os.close(fd)
protect_gfile()
import tensorflow as tf
with tf.io.gfile.GFile("big4.bin", "w") as handle:  # TensorFlow's own file writer
    handle.write("gfile")
print("read", open("data/big.bin").read()[-9:], open("big2.bin").read(), open("big3.bin").read()[-3:],
      open("big4.bin").read())
"""


def test_writes_to_linked_files_land_in_the_copy_never_in_the_original(tmp_path):
    source = _tree(tmp_path / "src")
    for name in ("big2.bin", "big3.bin", "big4.bin"):
        (source / name).write_bytes(b"O" * 100)
    mirror(source, tmp_path / "copy", file_limit=16)
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = run_python(script, source, cwd=tmp_path / "copy")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["read", "+appended", "rewritten", "+os", "gfile"]
    assert (source / "data" / "big.bin").read_bytes() == b"B" * 100
    for name in ("big2.bin", "big3.bin", "big4.bin"):
        assert (source / name).read_bytes() == b"O" * 100
        assert not (tmp_path / "copy" / name).is_symlink()


def test_keep_reports_each_sides_copy_and_old_checkpoints_are_not_seen_by_new(tmp_path):
    script = tmp_path / "train.py"
    shutil.copyfile(FIXTURES / "parity" / "checkpoint_resume.py", script)
    report = tmp_path / "report.json"
    proc = run_tf1clip("parity", script, script, "--keep", "--json", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = re.search(r"^working copies kept: OLD (\S+)  NEW (\S+)$", proc.stdout, re.M)
    assert kept, proc.stdout
    result = json.loads(report.read_text())
    assert result["kept"] == {"old": kept.group(1), "new": kept.group(2)}
    try:
        for side in kept.groups():
            # each side trained its own 6 steps from scratch and saved its own checkpoints
            names = sorted(os.listdir(os.path.join(side, "checkpoints")))
            assert "model-6.index" in names and "checkpoint" in names
            assert os.path.isfile(os.path.join(side, "train.py"))
        assert [len(opt["rows"]) for opt in result["optimizers"]] == [6]
        assert not (tmp_path / "checkpoints").exists()  # the user's folder got nothing
    finally:
        shutil.rmtree(os.path.dirname(os.path.dirname(kept.group(1))))
    # without --keep nothing is left behind
    again = run_tf1clip("parity", script, script, "--steps", "1", cwd=tmp_path)
    assert again.returncode == 0 and "working copies kept" not in again.stdout

"""benchmarks/realworld.py, the real-world proving ground, end to end on a tiny local corpus.

The real corpus is not part of CI (it needs the snapshots); here a git repository made in
tmp_path holds a project fixture (R2, a clipped Adam script that converts to the TF2 tier), a
script that reads generated data and changes no variable, and a script that cannot import a
module, each run by the real harness through the real tools. The table's cells and counts
are checked against what each of those scripts does.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, run_python, tail

sys.path.insert(0, str(ROOT / "benchmarks"))

from realworld import manifest, report, snapshots  # noqa: E402

READER = '''\
"""Reads generated text, counts its lines in a graph: no variable."""
import tensorflow as tf

lines = open("data/lines.txt").read().splitlines()
count = tf.constant(len(lines))
with tf.Session() as sess:
    print("lines=%d" % sess.run(count))
'''
MISSING = '''\
import tensorflow as tf
import realworld_module_that_is_not_installed
'''


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


def _make_repo(tmp_path):
    """snapshots/owner+tiny/repo holding the three scripts (and a library file); its commit."""
    work = tmp_path / "work"
    (work / "train").mkdir(parents=True)
    shutil.copy(FIXTURES / "legacy" / "r02_clip_by_global_norm.py", work / "train" / "r02.py")
    (work / "train" / "reader.py").write_text(READER)
    (work / "train" / "missing.py").write_text(MISSING)
    (work / "train" / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "tiny corpus")
    commit = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    snaps = tmp_path / "snapshots"
    (snaps / "owner+tiny").mkdir(parents=True)
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(snaps / "owner+tiny" / "repo"))
    return snaps, commit


MANIFEST = '''\
[defaults]
steps = 3
timeout = 240

[repos."owner/tiny"]
commit = "{commit}"

[[file]]
repo = "owner/tiny"
path = "train/r02.py"

[[file]]
repo = "owner/tiny"
path = "train/reader.py"
data = ["text-lines:train/data/lines.txt"]
trains = false

[[file]]
repo = "owner/tiny"
path = "train/missing.py"

[[file]]
repo = "owner/tiny"
path = "train/helpers.py"
skip = "library"
why = "imported by nothing here, but a library all the same"
'''


def test_harness_end_to_end_on_a_tiny_corpus(tmp_path):
    snaps, commit = _make_repo(tmp_path)
    plan = tmp_path / "manifest.toml"
    plan.write_text(MANIFEST.format(commit=commit))
    out_json, out_md = tmp_path / "rw.json", tmp_path / "rw.md"
    proc = run_python(ROOT / "benchmarks" / "realworld.py", plan, snaps, "-j", "2", "--json", out_json,
                      "--markdown", out_md, "--scratch", tmp_path / "scratch", timeout=900)
    assert proc.returncode == 0, tail(proc.stdout + proc.stderr, 40)
    result = json.loads(out_json.read_text())
    rows = {row["name"]: row["cells"] for row in result["rows"]}
    assert list(rows) == ["owner/train/r02.py", "owner/train/reader.py", "owner/train/missing.py"]
    status = {name: {column: cell["status"] for column, cell in cells.items()} for name, cells in rows.items()}

    # R2 runs everywhere tf1clip takes it, converts to the TF2 tier and passes parity both ways;
    # tf_upgrade_v2's output crashes on TF 2.21 (no disable_v2_behavior, placeholders in eager).
    assert status["owner/train/r02.py"] == {
        "run": "ok", "compat": "ok", "compat.run": "ok", "compat.parity": "ok",
        "tf2.tier": "tf2", "tf2.run": "ok", "tf2.parity": "ok", "tf2.parity.nodrop": "ok", "upgrade.run": "fail"}
    r02 = rows["owner/train/r02.py"]
    assert r02["compat.run"]["detail"]["updates"] == [3]          # the step cut stopped it at 3
    assert r02["run"]["detail"]["stopped"] is True                 # `tf1clip run --steps 3` said so
    assert "placeholder" in r02["upgrade.run"]["reason"] or "eager" in r02["upgrade.run"]["reason"], \
        r02["upgrade.run"]
    assert r02["upgrade.run"]["evidence"]

    # The reader found its generated data in every tree; it changes no variable: parity n/a.
    assert status["owner/train/reader.py"] == {
        "run": "ok", "compat": "ok", "compat.run": "ok", "compat.parity": "n/a",
        "tf2.tier": status["owner/train/reader.py"]["tf2.tier"], "tf2.run": "ok", "tf2.parity": "n/a",
        "tf2.parity.nodrop": "n/a", "upgrade.run": "fail"}
    assert status["owner/train/reader.py"]["tf2.tier"] in ("tf2", "compat")

    # The failing import fails every run with the same reason, grouped as one; parity is skipped.
    missing = status["owner/train/missing.py"]
    assert [missing[c] for c in ("run", "compat.run", "tf2.run", "upgrade.run")] == ["fail"] * 4
    assert missing["compat.parity"] == missing["tf2.parity"] == missing["tf2.parity.nodrop"] == "skip"
    group = next(g for g in result["failures"] if "realworld_module_that_is_not_installed" in g["reason"])
    assert group["reason"] == "ModuleNotFoundError: No module named 'realworld_module_that_is_not_installed'"
    assert sorted(column for name, column in group["cells"]) == ["compat.run", "run", "tf2.run", "upgrade.run"]
    assert "Traceback" in rows["owner/train/missing.py"]["run"]["evidence"]

    # Counts per column, and the excluded file with its reason.
    assert result["counts"]["run"]["passing"] == 2 and result["counts"]["run"]["attempted"] == 3
    assert result["counts"]["compat.parity"] == {"passing": 1, "attempted": 2, "ok": 1, "skip": 1, "n/a": 1}
    assert result["counts"]["upgrade.run"]["passing"] == 0
    assert result["excluded"] == [{"name": "owner/train/helpers.py", "skip": "library",
                                   "why": "imported by nothing here, but a library all the same"}]
    text = out_md.read_text()
    assert "| owner/train/r02.py | ok | ok | ok | ok | tf2 | ok | ok | ok | FAIL |" in text
    assert "| **passing** | **2/3** |" in text
    assert "owner/train/helpers.py | library |" in text
    assert "[3/3] owner/" in proc.stderr  # progress on stderr

    # --update: one entry re-run, every other row kept from the earlier report, the header says so.
    out2 = tmp_path / "rw2.json"
    proc = run_python(ROOT / "benchmarks" / "realworld.py", plan, snaps, "--only", "owner/train/missing.py",
                      "--update", out_json, "--json", out2, timeout=600)
    assert proc.returncode == 0, tail(proc.stdout + proc.stderr, 40)
    updated = json.loads(out2.read_text())
    assert [row["name"] for row in updated["rows"]] == list(rows)
    assert updated["rows"][0] == result["rows"][0] and updated["rows"][1] == result["rows"][1]
    assert updated["rows"][2]["cells"]["run"]["status"] == "fail"
    assert "1 entries re-run at" in updated["tf1clip"] and "owner/train/missing.py" in updated["tf1clip"]
    assert updated["counts"] == result["counts"] and updated["excluded"] == result["excluded"]


def test_only_selects_by_pattern_and_rejects_unknown_names(tmp_path):
    snaps, commit = _make_repo(tmp_path)
    plan = tmp_path / "manifest.toml"
    plan.write_text(MANIFEST.format(commit=commit))
    chosen = manifest.load(plan).select(["owner/train/r0*", "owner/train/helpers.py"])
    assert [e.name for e in chosen] == ["owner/train/r02.py", "owner/train/helpers.py"]
    with pytest.raises(manifest.ManifestError, match="matches no manifest entry"):
        manifest.load(plan).select(["owner/nothing.py"])
    proc = run_python(ROOT / "benchmarks" / "realworld.py", plan, snaps, "--only", "nope", timeout=60)
    assert proc.returncode == 2 and "realworld: error: --only 'nope' matches no manifest entry" in proc.stderr


@pytest.mark.parametrize("body, message", [
    ('[[file]]\nrepo = "o/r"\npath = "a.py"\nsteps = 2\nflavour = 1\n', "unknown key(s) flavour"),
    ('[[file]]\nrepo = "o/r"\npath = "a.py"\nskip = "library"\n', "says why"),
    ('[[file]]\nrepo = "o/r"\npath = "a.py"\nskip = "boring"\nwhy = "x"\n', "is not one of"),
    ('[[file]]\nrepo = "o/r"\npath = "a.py"\ndata = ["mnist"]\n', "not GENERATOR:PATH"),
    ('[[file]]\nrepo = "o/other"\npath = "a.py"\n', "no [repos.\"o/other\"] commit"),
])
def test_manifest_errors_name_the_entry_and_the_problem(tmp_path, body, message):
    plan = tmp_path / "m.toml"
    plan.write_text('[repos."o/r"]\ncommit = "' + "0" * 40 + '"\n' + body)
    with pytest.raises(manifest.ManifestError) as info:
        manifest.load(plan)
    assert message in str(info.value) and "a.py" in str(info.value)


def test_same_cause_groups_together_whatever_the_paths_lines_and_numbers():
    a = "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/x/scripts/a/run/data/heart.csv'"
    b = "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/y/other/data/heart.csv'"
    assert report.normalise(a) == report.normalise(b) == \
        "FileNotFoundError: [Errno N] No such file or directory: 'heart.csv'"
    one = "/tmp/s/run/train.py:12: tf.contrib.learn is not provided by tf1clip; use Keras"
    two = "/tmp/t/x/model.py:140: tf.contrib.learn is not provided by tf1clip; use Keras"
    assert report.normalise(one) == report.normalise(two) == "tf.contrib.learn is not provided by tf1clip; use Keras"
    assert report.normalise("diverged: optimizer 1: final weights differ: w, b") == \
        "diverged: optimizer N: final weights differ: …"
    assert report.normalise("No module named 'tf'") != report.normalise("No module named 'scipy'")
    # The TF2 tier's reasons name the construct; grouped loosely, the kind of refusal is the cause.
    a = "line 8: helper `init_weights` builds graph state (variables) but is not called once"
    b = "line 40: helper `conv_relu` builds graph state (an update op (.minimize), layers) but is not called once"
    assert report.normalise(a, loose=True) == report.normalise(b, loose=True) == \
        "helper `…` builds graph state (…) but is not called once"
    assert report.normalise("tf.contrib was removed in TensorFlow 2") == "tf.contrib was removed in TensorFlow 2"


def test_export_keeps_the_tree_when_the_snapshot_lacks_a_blob(tmp_path):
    snaps, commit = _make_repo(tmp_path)
    gdir = snapshots.git_dir(snaps, "owner/tiny")
    # Unpack the clone's objects loose, then delete one blob: a partial mirror.
    packs = list((gdir / "objects" / "pack").glob("*.pack"))
    for pack in packs:
        data = pack.read_bytes()
        pack.unlink()
        pack.with_suffix(".idx").unlink()
        subprocess.run(["git", "--git-dir", str(gdir), "unpack-objects", "-q"], input=data, check=True)
    sha = subprocess.run(["git", "--git-dir", str(gdir), "rev-parse", f"{commit}:train/helpers.py"],
                         capture_output=True, text=True, check=True).stdout.strip()
    (gdir / "objects" / sha[:2] / sha[2:]).unlink()
    missing = snapshots.export_tar(gdir, commit, tmp_path / "tree.tar")
    assert missing == ["train/helpers.py"]
    tree = snapshots.extract(tmp_path / "tree.tar", tmp_path / "tree")
    assert (tree / "train" / "r02.py").read_bytes() == (FIXTURES / "legacy" / "r02_clip_by_global_norm.py").read_bytes()
    assert not (tree / "train" / "helpers.py").exists()
    with pytest.raises(snapshots.SnapshotError, match="no snapshot"):
        snapshots.git_dir(snaps, "owner/absent")


def test_setup_scripts_run_seeded_so_every_tree_prepares_the_same_data(tmp_path):
    """A project's data preparation with an unseeded random split (chiphuyen's chatbot data.py)
    writes the same files in every fresh tree: the harness runs setup through seeded.py."""
    (tmp_path / "prep.py").write_text(
        "import random, sys\nimport numpy as np\n"
        "print(sys.argv[1:], random.sample(range(1000), 3), int(np.random.randint(1000)))\n")
    outs = [run_python(ROOT / "benchmarks" / "realworld" / "seeded.py", "prep.py", "--x", "1", cwd=tmp_path,
                       timeout=60) for _ in range(2)]
    assert all(o.returncode == 0 for o in outs), outs[0].stderr
    assert outs[0].stdout == outs[1].stdout and outs[0].stdout.startswith("['--x', '1'] [")

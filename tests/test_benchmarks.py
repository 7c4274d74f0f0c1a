"""benchmarks/: the smoke test CI runs, and the pieces the numbers rest on.

No timing is asserted anywhere: goals are read off the table `benchmarks/run.py` prints. What
is asserted is that every section runs and reports both sides of every row, that the tree the
codemod rows time is what it claims to be, and that peak memory is measured, not guessed.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_python, sampled, tail

sys.path.insert(0, str(ROOT / "benchmarks"))

import _common  # noqa: E402
import bench_codemod  # noqa: E402


# The sections of `run.py` (--only names) and the table sections each reports.
REPORTS = {"codemod": {"codemod throughput", "start-up"}, "steptime": {"step time"},
           "cnngap": {"CNN step, gating taken apart"}, "clipcost": {"clipping cost"}, "runtime": {"compat runtime"}}
# CI's sample (every section under TF1CLIP_FULL_PROOF=1): the codemod's, the CNN gating's (whose rows also
# assert the gated forms' gradients to the bit) and the runtime's; step time and clipping cost take four
# of the quick run's five minutes, a fresh TensorFlow process per variant.
SECTIONS = sampled(REPORTS, ["codemod", "cnngap", "runtime"])


def test_quick_run_reports_every_section_with_both_sides(tmp_path):
    out = tmp_path / "bench.json"
    md = tmp_path / "bench.md"
    proc = run_python(ROOT / "benchmarks" / "run.py", "--quick", "--json", out, "--markdown", md,
                      "--only", *SECTIONS, timeout=900)
    assert proc.returncode == 0, tail(proc.stdout + proc.stderr, 40)
    report = json.loads(out.read_text())
    assert report["quick"] is True and report["failed"] == []
    assert report["machine"]["cores"] >= 1 and report["machine"]["tensorflow"].startswith("2.21")
    rows = report["rows"]
    sections = {r["section"] for r in rows}
    assert sections == set().union(*(REPORTS[name] for name in SECTIONS))
    # The gated TF2 forms compute TF 1.x's gradients to the bit; the ungated session is the reference's own
    # graph without its gates.
    gap = {r["row"].rsplit(": ", 1)[1]: r for r in rows if r["section"] == "CNN step, gating taken apart"}
    assert set(gap) == {"session-none", "tape", "tape-gated", "gradients"}
    assert all(d == 0.0 for form in ("tape-gated", "gradients") for d in gap[form]["samples"]["max_abs_diff"].values())
    assert gap["tape"]["samples"]["max_abs_diff"] == gap["session-none"]["samples"]["max_abs_diff"]
    # Four migrate variants on the generated tree, each as files/s and as peak memory, against
    # one tf_upgrade_v2 run (no snapshot folder here: the real-shaped tree's rows are skipped).
    throughput = [r for r in rows if r["section"] == "codemod throughput"]
    labels = [f"generated: tf1clip migrate --to {to} -j {j}" for to in ("compat", "tf2") for j in (1, 2)]
    assert {(r["row"], r["metric"].split()[0]) for r in throughput} == {
        (label, m) for label in labels for m in ("files/s", "peak")}
    for r in rows:
        if r["section"] == "step time" and "(XLA)" in r["row"] and r["ours"] is None:
            assert r["note"], r  # XLA may be unavailable, but then the row says why
            continue
        assert r["baseline"] is not None and r["baseline"] > 0, r
        assert r["ours"] is not None and r["ours"] > 0, r
        assert r["ratio"] == pytest.approx(r["ours"] / r["baseline"])
        if r["target"] is not None:
            assert r["met"] == (r["ratio"] <= r["target"] if r["better"] == "lower" else r["ratio"] >= r["target"])
    # The table is printed, and the Markdown version names the machine.
    assert "== codemod throughput ==" in proc.stdout and "tf_upgrade_v2" in proc.stdout
    assert md.read_text().startswith("Measured ") and "| row | metric |" in md.read_text()


def test_generated_tree_is_big_varied_and_valid(tmp_path):
    files, lines = bench_codemod.make_tree(tmp_path, 504)
    assert files == 504 and lines >= 50_000
    texts = [p.read_text() for p in sorted(tmp_path.rglob("*.py"))]
    assert len(texts) == 504 and len(set(texts)) == 504  # no two files alike
    for text in texts[:24]:
        compile(text, "gen.py", "exec")
    # Every recipe appears, equally often (each fixture opens with its own docstring line).
    heads = [p.read_text().splitlines()[0] for p in bench_codemod.LEGACY]
    counts = [sum(head in text for text in texts) for head in heads]
    assert len(heads) == 12 and min(counts) == max(counts) == 504 * 3 // 12


def test_vary_renames_bindings_but_not_keywords_or_attributes():
    source = ("import tensorflow as tf\nloss = tf.reduce_sum(x)\nopt = tf.train.AdamOptimizer(learning_rate=0.1)\n"
              "train = opt.minimize(loss=loss)\nprint(tf.loss)\n")
    out = bench_codemod.vary(source, "tf1", "7")
    assert out == ("import tensorflow as tf1\nloss_7 = tf1.reduce_sum(x)\nopt_7 = tf1.train.AdamOptimizer(learning_rate=0.1)\n"
                   "train_7 = opt_7.minimize(loss=loss_7)\nprint(tf1.loss)\n")


def test_measure_sees_peak_memory_of_the_process_and_of_forked_workers():
    one = _common.measure([sys.executable, "-c", "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"],
                          sample_tree=False)
    assert one.returncode == 0 and one.maxrss_mb >= 300
    # Two forked workers, alive together by construction (a pool could hand both tasks to one).
    code = ("import multiprocessing as mp, time\n"
            "def work():\n    b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)\n"
            "if __name__ == '__main__':\n    ctx = mp.get_context('fork')\n"
            "    procs = [ctx.Process(target=work) for _ in range(2)]\n"
            "    [p.start() for p in procs]; [p.join() for p in procs]\n")
    two = _common.measure([sys.executable, "-c", code])
    assert two.returncode == 0
    assert two.maxrss_mb < 350 <= two.tree_rss_mb  # no single process held both; the tree did


def test_measure_is_not_charged_for_a_big_parent():
    # Linux folds the pre-exec address space into ru_maxrss; a command forked straight from a
    # big process (a pytest worker with TensorFlow loaded) would report the parent's size.
    ballast = bytearray(400 * 2**20)
    ballast[::4096] = b"x" * len(ballast[::4096])
    small = _common.measure([sys.executable, "-c", "pass"])
    assert small.returncode == 0 and small.maxrss_mb < 100 and small.tree_rss_mb < 100
    del ballast


def test_measure_reports_a_failing_command():
    with pytest.raises(RuntimeError, match="exited 3"):
        _common.measure([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"])
    result = _common.measure([sys.executable, "-c", "import time; time.sleep(5)"], timeout=0.5, check=False)
    assert result.returncode != 0 and "timeout" in result.stderr


def test_row_ratio_and_goals():
    faster = _common.row("s", "r", "files/s", "a", 10.0, "b", 25.0, better="higher", target=2.0)
    assert faster["ratio"] == 2.5 and faster["met"] is True
    slower = _common.row("s", "r", "ms", "a", 10.0, "b", 12.0, target=1.05)
    assert slower["ratio"] == pytest.approx(1.2) and slower["met"] is False
    absolute = _common.row("s", "r", "s", "a", 3.0, "b", 0.6, limit=0.5)
    assert absolute["met"] is False and absolute["ratio"] == pytest.approx(0.2)
    missing = _common.row("s", "r", "ms", "a", 10.0, "b", None, target=1.0, note="XLA n/a")
    assert missing["ratio"] is None and missing["met"] is None
    assert Path(_common.ROOT / "benchmarks" / "run.py").exists()


def test_real_shaped_tree_is_read_from_the_snapshots(tmp_path):
    """The real-shaped tree: the manifest's Python files at their pinned commit, read from a
    snapshot folder with git (a repository made here), copied round-robin."""
    import subprocess

    repo = tmp_path / "snapshots" / "someone+project" / "repo"
    repo.mkdir(parents=True)

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (repo / "a.py").write_text("import tensorflow as tf\nx = tf.placeholder(tf.float32)\n")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "b.py").write_text("print('b')\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    commit = git("rev-parse", "HEAD").strip()
    (repo / "a.py").write_text("changed after the pinned commit\n")
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(f'[repos."someone/project"]\ncommit = "{commit}"\n'
                        '[[file]]\nrepo = "someone/project"\npath = "a.py"\n'
                        '[[file]]\nrepo = "someone/project"\npath = "pkg/b.py"\nskip = "library"\nwhy = "x"\n'
                        '[[file]]\nrepo = "someone/project"\npath = "c.ipynb"\n')
    files, lines, distinct = bench_codemod.make_real_tree(tmp_path / "tree", tmp_path / "snapshots", 5, manifest)
    assert (files, lines, distinct) == (5, 8, 2)
    written = sorted(str(p.relative_to(tmp_path / "tree")) for p in (tmp_path / "tree").rglob("*.py"))
    assert written == ["copy_0/someone+project/a.py", "copy_0/someone+project/pkg/b.py",
                       "copy_1/someone+project/a.py", "copy_1/someone+project/pkg/b.py",
                       "copy_2/someone+project/a.py"]
    assert (tmp_path / "tree" / "copy_2/someone+project/a.py").read_text().startswith("import tensorflow as tf")

"""Summaries fetched by sess.run and written with add_summary: the TF2 form writes, at each step, the values
TF 1.x's FileWriter wrote (read back from both event files with TensorFlow's own summary_iterator), here
for summaries held in a fetch dict and a fetch list each bound to one name
(fixtures/tf2/constructs/summaries_in_fetch_structures.py)."""
from __future__ import annotations

import sys
from pathlib import Path

from conftest import run_python, run_tf1clip

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2 import convert  # noqa: E402

SCRIPT = ROOT / "fixtures" / "tf2" / "constructs" / "summaries_in_fetch_structures.py"
READ = """
import glob, json, sys
import tensorflow as tf
out = {}
for folder in ("dict", "list"):
    for path in sorted(glob.glob("logs/%s/events.*" % folder)):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                number = value.simple_value if value.HasField("simple_value") else float(
                    tf.make_ndarray(value.tensor))
                out.setdefault(folder, []).append([event.step, value.tag, number])
print(json.dumps(out))
"""


def _written(cwd: Path) -> dict:
    import json

    (cwd / "read_events.py").write_text(READ)
    proc = run_python(cwd / "read_events.py", cwd=cwd, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_summaries_in_structures_write_what_tf1_wrote(tmp_path):
    result = convert(SCRIPT.read_text(), SCRIPT.name)
    assert result.text is not None, result.notes
    assert 'write_scalar("loss", out["summary"]["loss"])' in result.text
    assert 'write_scalar("mean_prediction", res[0]["mean_prediction"])' in result.text
    written = {}
    for side in ("old", "new"):
        cwd = tmp_path / side
        cwd.mkdir()
        (cwd / "script.py").write_text(SCRIPT.read_text() if side == "old" else result.text)
        proc = (run_tf1clip("run", cwd / "script.py", cwd=cwd, timeout=300) if side == "old"
                else run_python(cwd / "script.py", cwd=cwd, timeout=300))
        assert proc.returncode == 0, proc.stderr[-2000:]
        written[side] = _written(cwd)
    for folder in ("dict", "list"):
        old, new = sorted(written["old"][folder]), sorted(written["new"][folder])
        assert len(old) == len(new) == 8  # 4 steps x 2 tags
        for (s1, t1, v1), (s2, t2, v2) in zip(old, new):
            assert (s1, t1) == (s2, t2) and abs(v1 - v2) <= 1e-6 * max(1.0, abs(v1)), (old, new)

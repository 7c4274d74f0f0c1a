"""Golden pairs: fixtures/legacy/X.py → fixtures/tf2_golden/X.py (or X.refused.txt), idempotence,
aliases resolved through qualified names."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "fixtures" / "tf2_golden"))

from codemods.tf2 import convert  # noqa: E402
from make_golden import expected, inputs  # noqa: E402

INPUTS = inputs()  # (TF1 script, golden directory): legacy recipes and structures
GOLDEN = ROOT / "fixtures" / "tf2_golden"
CONVERTED = sorted(GOLDEN.glob("r*.py")) + sorted((GOLDEN / "structures" / "converted").glob("*.py"))


@pytest.mark.parametrize("path, out", [pytest.param(p, o, id=p.stem) for p, o in INPUTS])
def test_golden_is_current(path, out):
    name, text = expected(path)
    assert (out / name).read_text() == text, f"run python fixtures/tf2_golden/make_golden.py ({name})"


def test_every_structure_is_listed_in_the_readme():
    readme = (GOLDEN / "README.md").read_text()
    for path, out in INPUTS:
        if out.name == "converted":
            assert f"| {path.stem} |" in readme, path.stem


@pytest.mark.parametrize("path", [p for p, _ in INPUTS], ids=lambda p: p.stem)
def test_report_lists_every_change_or_the_reason(path):
    result = convert(path.read_text(), path.name)
    if result.text is None:
        human = [n for n in result.notes if n.kind == "human"]
        assert human and all(n.line >= 1 and n.message for n in human)
    else:
        assert all(n.kind == "change" for n in result.notes)
        assert any(n.rule == "tf2" and n.line >= 1 for n in result.notes)
        assert "tf1clip" not in result.text and "compat.v1" not in result.text
        compile(result.text, path.name, "exec")


@pytest.mark.parametrize("path", CONVERTED, ids=lambda p: p.stem)
def test_converting_converted_output_changes_nothing(path):
    text = path.read_text()
    assert convert(text, path.name).text == text


def test_aliases_resolve_like_tf():
    source = (ROOT / "fixtures" / "legacy" / "r02_clip_by_global_norm.py").read_text()
    aliased = source.replace("import tensorflow as tf\n", "import tensorflow as tf1\n").replace("tf.", "tf1.")
    result = convert(aliased)
    golden = (GOLDEN / "r02_clip_by_global_norm.py").read_text()
    assert result.text == golden.replace("import tensorflow as tf\n", "import tensorflow as tf1\n").replace("tf.", "tf1.")

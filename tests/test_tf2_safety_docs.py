"""docs/tf2-safety.md shows the spec table's coverage as tools/api_spec_coverage.py computes it now."""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))

import api_spec_coverage  # noqa: E402


def test_coverage_table_in_the_docs_is_current():
    text = (ROOT / "docs" / "tf2-safety.md").read_text()
    shown = re.search(r"<!-- coverage:begin -->\n(.*?)\n<!-- coverage:end -->", text, re.S).group(1)
    assert shown == api_spec_coverage.markdown()


def test_coverage_counts_add_up():
    for kind, total, applied, refused, _ in api_spec_coverage.rows():
        assert applied + refused == total and total > 0, kind

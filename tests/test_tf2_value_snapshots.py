"""value_snapshots.still_the_same: may values computed at one statement be read again where the name bound to
them is read? Plain reaching definitions say yes when the same line defines a name at both places; the
snapshot analysis sees a definition that can run in between, around a loop too."""
from __future__ import annotations

import sys
from pathlib import Path

import libcst as cst
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codemods.tf2.lines import start_lines  # noqa: E402
from codemods.tf2.value_snapshots import still_the_same  # noqa: E402


def _answer(text: str) -> bool:
    module = cst.parse_module(text)
    where = start_lines(module)
    lines = lambda node: where.get(node, 0)  # noqa: E731
    made = next(i for i, line in enumerate(text.splitlines(), 1) if "feed = {" in line)
    return still_the_same(module, lines, frozenset(), made, "feed", {"batch"})


@pytest.mark.parametrize("text, same", [
    ("batch = 1\nfeed = {x: batch}\nrun(feed)\n", True),
    ("batch = 1\nfeed = {x: batch}\nbatch = 2\nrun(feed)\n", False),
    ("for i in r:\n    batch = i\n    feed = {x: batch}\n    run(feed)\n", True),
    # made in the first pass only: `batch = i` runs again before later runs (same line at both places)
    ("feed = None\nfor i in r:\n    batch = i\n    if i == 0:\n        feed = {x: batch}\n    run(feed)\n", False),
    ("batch = 1\nfeed = {x: batch}\nfor i in r:\n    run(feed)\n    batch = i\n", False),
    ("batch = 1\nfeed = {x: batch}\nif c:\n    batch = 2\nelse:\n    run(feed)\n", True),
    # read by a function, run whenever it is called: only a name bound once, by no loop, is sure
    ("batch = 1\nfeed = {x: batch}\ndef f():\n    return run(feed)\n", True),
    ("for i in r:\n    batch = i\nfeed = {x: batch}\ndef f():\n    return run(feed)\n", False),
    ("batch = 1\nfeed = {x: batch}\ndef f():\n    return run(feed)\nbatch = 2\n", False),
    ("batch = 1\nfeed = {x: batch}\ndef f():\n    global batch\n    batch = 3\ndef g():\n    return run(feed)\n",
     False),
], ids=["straight", "rebound", "loop-same-pass", "loop-first-pass-only", "loop-after-run", "other-branch",
        "function-once", "function-loop", "function-rebound", "function-global"])
def test_values_are_the_same_only_where_no_definition_can_run_between(text, same):
    assert _answer(text) is same

"""What each side of a parity run printed (its standard output), side by side: reported, not judged.

Under parity NEW starts from OLD's values and its dropout may draw other masks (docs/parity.md), and a
float printed with all its digits shows summation order, so two right programs can print different
text; what they printed is shown for the reader (the first line that differs), and `--json` keeps
the text (the last MAX_LINES lines of each side).
"""
from __future__ import annotations

MAX_LINES = 200


def compare(old: str, new: str) -> dict:
    """{"equal", "lines": [OLD's, NEW's], "first_difference": {"line", "old", "new"} or None, "old", "new"}."""
    a, b = old.splitlines(), new.splitlines()
    first = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    difference = None if first is None else {
        "line": first + 1, "old": a[first] if first < len(a) else None, "new": b[first] if first < len(b) else None}
    return {"equal": old == new, "lines": [len(a), len(b)], "first_difference": difference,
            "old": "\n".join(a[-MAX_LINES:]), "new": "\n".join(b[-MAX_LINES:])}


def summary(printed: dict) -> str:
    """One line of the report."""
    n_old, n_new = printed["lines"]
    if printed["equal"]:
        return f"printed (reported, not judged): {n_old} lines, the same on both sides"
    difference = printed["first_difference"]
    if difference is None:  # the same lines, other line endings
        return f"printed (reported, not judged): {n_old} lines on each side, the same lines"
    return (f"printed (reported, not judged): OLD {n_old} lines, NEW {n_new}; first difference at line "
            f"{difference['line']}: OLD {difference['old']!r}, NEW {difference['new']!r}")

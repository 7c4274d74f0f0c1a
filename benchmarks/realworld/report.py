"""The harness's output: one table (a row per script, a column per job, counts per column) and
the failures grouped by reason, as JSON (everything, with each failure's evidence) and Markdown.

Reasons are grouped after normalising away what differs between two occurrences of the same
cause: scratch paths, line numbers, numbers, addresses, the file:line prefix of tf1clip's
one-line errors, the variable names after "final weights differ".
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict

from realworld.jobs import COLUMNS, PASSING

_SYMBOL = {"ok": "ok", "fail": "FAIL", "timeout": "TIMEOUT", "skip": "–", "n/a": "n/a", "tf2": "tf2",
           "compat": "compat"}
_RULES = [
    (re.compile(r"^(?:\S.*?\.(?:py|ipynb)):\d+: "), ""),                    # tf1clip's `file.py:12: `
    (re.compile(r"(?<![\w.])/(?:[^/\s'\"():,]+/)+([^/\s'\"():,]*)"), r"\1"),  # absolute paths → basename
    (re.compile(r"\bline \d+"), "line N"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"(final weights differ|final value missing on \w+): .*"), r"\1: …"),
    (re.compile(r"(?<!TF )(?<!TensorFlow )(?<!Keras )(?<!Python )\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
]


# For the TF2 tier's reasons, which name the construct: the kind of refusal is the cause.
_LOOSE = [
    (re.compile(r"^line \d+: "), ""),
    (re.compile(r"`[^`]*`"), "`…`"),
    (re.compile(r"\((?!…\))(?:[^()]|\(…\))*\)"), "(…)"),   # not "(…)" itself: the loop below ends
]


def normalise(reason: str, loose: bool = False) -> str:
    """The cause in `reason`, with the details that differ between occurrences taken out
    (loose: also the names in backquotes and parentheses)."""
    text = reason.strip()
    for pattern, replacement in (_LOOSE if loose else []) + _RULES:
        text, count = pattern.subn(replacement, text)
        while count and replacement == "(…)":   # nested parentheses, innermost first
            text, count = pattern.subn(replacement, text)
    return text[:240]


def counts(rows: list[dict]) -> dict:
    """Per column: passing (ok, or tf2 for the tier), attempted (all but n/a), and each status."""
    out = {}
    for column in COLUMNS:
        tally = Counter(row["cells"][column]["status"] for row in rows if column in row["cells"])
        out[column] = {"passing": sum(tally.get(s, 0) for s in PASSING),
                       "attempted": sum(n for s, n in tally.items() if s != "n/a"), **tally}
    return out


def group_failures(rows: list[dict], statuses=("fail", "timeout"), loose: bool = False) -> list[dict]:
    """[{reason, example, cells: [[script, column], ...]}], most frequent first."""
    groups: dict[str, dict] = {}
    for row in rows:
        for column in COLUMNS:
            cell = row["cells"].get(column)
            if not cell or cell["status"] not in statuses:
                continue
            raw = cell["reason"] or cell["status"]
            key = normalise(raw, loose) if cell["status"] != "timeout" else "timeout: " + normalise(raw)
            group = groups.setdefault(key, {"reason": key, "example": raw, "cells": []})
            group["cells"].append([row["name"], column])
    return sorted(groups.values(), key=lambda g: (-len(g["cells"]), g["reason"]))


def build(rows: list[dict], excluded: list[dict], meta: dict) -> dict:
    return {**meta, "columns": list(COLUMNS), "counts": counts(rows), "rows": rows, "excluded": excluded,
            "failures": group_failures(rows),
            "tf2_refusals": group_failures(rows, statuses=("compat",), loose=True)}


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: dict) -> str:
    lines = [f"# Real-world proving ground: {report['date']}", ""]
    lines.append(f"{report['runnable']} runnable scripts of {report['files']} files in `{report['manifest']}`; "
                 f"step cut {report['steps']}; tf1clip {report['tf1clip']}; "
                 f"original run by `{report['run_command']}`; tf2 parity with dropout on (parity's default), "
                 f"tf2.parity.nodrop with `--no-dropout`; "
                 f"{report['seconds'] / 60:.0f} min at -j {report['jobs']}.")
    lines += ["", "| script | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for row in report["rows"]:
        cells = [_SYMBOL.get(row["cells"][c]["status"], row["cells"][c]["status"]) if c in row["cells"] else ""
                 for c in COLUMNS]
        lines.append(f"| {_md_escape(row['name'])} | " + " | ".join(cells) + " |")
    totals = []
    for column in COLUMNS:
        c = report["counts"][column]
        totals.append(f"**{c['passing']}/{c['attempted']}**")
    lines.append("| **passing** | " + " | ".join(totals) + " |")
    lines += ["", "Cells: ok = ran (or passed parity); FAIL / TIMEOUT = did not (reason below); – = not "
              "attempted because its input failed; n/a = changes no variable, nothing for parity to "
              "compare; tf2.tier: tf2 = converted to the TF2 tier, compat = fell back (why below).", ""]
    lines += _groups_md("Failures by reason", report["failures"])
    lines += _groups_md("Why the TF2 tier fell back to compat", report["tf2_refusals"])
    if report["excluded"]:
        lines += [f"## Not run ({len(report['excluded'])} files)", "", "| file | kind | why |", "|---|---|---|"]
        for item in report["excluded"]:
            lines.append(f"| {_md_escape(item['name'])} | {item['skip']} | {_md_escape(item['why'])} |")
        lines.append("")
    return "\n".join(lines)


def _groups_md(title: str, groups: list[dict]) -> list[str]:
    if not groups:
        return []
    out = [f"## {title}", ""]
    for group in groups:
        by_column = defaultdict(list)
        for name, column in group["cells"]:
            by_column[column].append(name)
        where = "; ".join(f"{column}: {', '.join(names)}" for column, names in by_column.items())
        fence = "``" if "`" in group["reason"] else "`"   # a code span that holds backquotes
        out.append(f"- **{len(group['cells'])}×** {fence} {_md_escape(group['reason'])} {fence}  \n"
                   f"  {_md_escape(where)}")
    out.append("")
    return out

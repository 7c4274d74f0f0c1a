"""The migrate report: one `FileResult` per file, a text rendering, a summary line and JSON."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

STATUSES = ("changed", "unchanged", "skipped", "error")


@dataclass
class Item:
    """A change or a place left for a human, at a line of the original file (and notebook cell)."""

    line: int
    rule: str
    message: str
    cell: Optional[int] = None
    runtime: Optional[str] = None

    def where(self, path: str) -> str:
        line = f":{self.line}" if self.line else ""
        if self.cell is not None:
            return f"{path}:cell {self.cell}{line}"
        return f"{path}{line}"

    def to_dict(self) -> dict:
        out = {"line": self.line, "rule": self.rule, "message": self.message}
        if self.cell is not None:
            out["cell"] = self.cell
        if self.runtime:
            out["runtime"] = self.runtime
        return out


@dataclass
class FileResult:
    path: str                         # as shown to the user
    kind: str                         # python | notebook | other | symlink | directory
    status: str                       # changed | unchanged | skipped | error
    reason: str = ""                  # why unchanged / skipped / error
    line: Optional[int] = None        # where the error is
    changes: list[Item] = field(default_factory=list)
    human: list[Item] = field(default_factory=list)
    runtime: list[str] = field(default_factory=list)
    written: Optional[str] = None     # where the new file went (--inplace / --outtree)
    tier: Optional[str] = None        # with --to tf2: "tf2", "compat" (fell back) or "none" (no TensorFlow)
    parity: Optional[dict] = None     # with --verify: the parity table (tf1clip.migrate.verify)
    # not serialized: the new bytes and the diff, carried from the worker to the writer
    new_bytes: Optional[bytes] = None
    old_text: Optional[str] = None
    new_text: Optional[str] = None
    imports: Optional[object] = None  # with --to tf2: what its code imports (`together.ImportFacts`), read here

    def to_dict(self) -> dict:
        out: dict = {"path": self.path, "kind": self.kind, "status": self.status}
        if self.reason:
            out["reason"] = self.reason
        if self.line is not None:
            out["line"] = self.line
        out["changes"] = [c.to_dict() for c in self.changes]
        out["left_for_human"] = [h.to_dict() for h in self.human]
        if self.runtime:
            out["runtime"] = self.runtime
        if self.written:
            out["written"] = self.written
        if self.tier:
            out["tier"] = self.tier
        if self.parity is not None:
            out["parity"] = self.parity
        return out

    def lines(self) -> list[str]:
        """The text report for this file: a status line, then one line per change / human note."""
        if self.status == "error":
            where = f"{self.path}:{self.line}" if self.line else self.path
            return [f"error      {where}: {self.reason}"]
        head = f"{self.status:<10} {self.path}"
        if self.reason and self.status != "changed":
            head += f" ({self.reason})"
        elif self.tier and self.status == "changed":
            head += {"tf2": " (TF2 tier)", "none": " (no TensorFlow: NumPy or Keras spellings only)"}.get(
                self.tier, " (compat tier: not convertible to TF2 exactly)")
        out = [head]
        for item in self.changes:
            out.append(f"  {item.where(self.path)}: [{item.rule}] {item.message}")
        for item in self.human:
            out.append(f"  {item.where(self.path)}: needs a human [{item.rule}]: {item.message}")
        if self.runtime:
            out.append(f"  {self.path}: imports the tf1clip runtime (nothing in TF 2.21 stands in): "
                       + ", ".join(self.runtime))
        if self.parity is not None:
            from tf1clip.migrate.verify import text_lines

            out += text_lines(self.path, self.parity)
        return out


def summarize(results: list[FileResult]) -> dict:
    """Counts over the files that are (or could be) Python; plain non-Python files counted apart."""
    counts = {s: 0 for s in STATUSES}
    for r in results:
        if r.kind != "other" or r.status == "error":
            counts[r.status] += 1
    return {
        "files": sum(1 for r in results if r.kind != "other" or r.status == "error"),
        **counts,
        "changes": sum(len(r.changes) for r in results),
        "left_for_human": sum(len(r.human) for r in results),
        "use_runtime": sum(1 for r in results if r.runtime),
        "runtime_names": sorted({name for r in results for name in r.runtime}),
        "other_files": sum(1 for r in results if r.kind == "other" and r.status != "error"),
        "tf2_tier": sum(1 for r in results if r.tier == "tf2" and r.status == "changed"),
        "compat_fallback": sum(1 for r in results if r.tier == "compat" and r.status == "changed"),
        "no_tensorflow": sum(1 for r in results if r.tier == "none" and r.status == "changed"),
        "verified": sum(1 for r in results if r.parity is not None and r.parity.get("passed")),
        "verify_failed": sum(1 for r in results if r.parity is not None and not r.parity.get("passed")),
    }


def summary_line(summary: dict, mode: str) -> str:
    verb = {"diff": "would change", "inplace": "changed", "outtree": "changed"}[mode]
    text = (f"tf1clip migrate: {summary['files']} files: {summary['changed']} {verb}, "
            f"{summary['unchanged']} unchanged, {summary['skipped']} skipped, {summary['error']} errors; "
            f"{summary['changes']} changes, {summary['left_for_human']} places left for a human")
    if summary["use_runtime"]:
        text += (f"; {summary['use_runtime']} files import the tf1clip runtime "
                 f"({', '.join(summary['runtime_names'])})")
    if summary["tf2_tier"] or summary["compat_fallback"]:
        text += f"; {summary['tf2_tier']} to the TF2 tier, {summary['compat_fallback']} to the compat tier"
        if summary["compat_fallback"]:
            text += " (not convertible to TF2 exactly: the places left for a human say why)"
    if summary.get("no_tensorflow"):
        text += f"; {summary['no_tensorflow']} with no TensorFlow (NumPy or Keras spellings only)"
    if summary.get("verified") or summary.get("verify_failed"):
        text += (f"; parity: {summary['verified']} TF2 outputs verified, {summary['verify_failed']} failed "
                 "(compat output written instead)")
    if summary["other_files"]:
        text += f"; {summary['other_files']} non-Python files"
    return text


def to_json(results: list[FileResult], summary: dict, options: dict) -> str:
    doc = {
        "tool": "tf1clip migrate",
        "options": options,
        "summary": summary,
        "files": [r.to_dict() for r in results],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

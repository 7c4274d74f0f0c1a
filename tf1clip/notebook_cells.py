"""Reading a Jupyter notebook's code cells: shared by `tf1clip migrate` and `tf1clip run`.

Imports nothing heavy (no TensorFlow, no libcst). A notebook is nbformat 4 JSON with a `cells`
list; a code cell's `source` is a string or a list of lines. IPython lines that are not Python
(`%magic`, `!shell`, `x = !cmd`, `x = %magic`, `?obj`, `obj?`) are told by `is_magic_line`;
a cell that starts with a cell magic (`%%time`, `%%bash`, ...) by `cell_magic`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

# `%magic`, `!cmd`, `?obj`, `x = !cmd`, `x = %magic`, and `obj?` / `obj??` (help) lines.
MAGIC_LINE = re.compile(r"^\s*(?:[%!?]|[\w.]+\s*=\s*[%!])|^[^#'\"]*\?\s*$")


class NotebookError(ValueError):
    """The file is not a notebook tf1clip can read; `line` is where (1-based)."""

    def __init__(self, message: str, line: int = 1):
        super().__init__(message)
        self.line = line


@dataclass
class CodeCell:
    index: int        # position in nb["cells"] (0-based); cells are named by index + 1
    source: str

    @property
    def number(self) -> int:
        return self.index + 1


def read_notebook(text: str) -> dict:
    """The parsed notebook; NotebookError when it is not JSON or has no 'cells' list."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a valid notebook (JSON): {exc}", exc.lineno) from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("not an nbformat 4 notebook (no 'cells' list)")
    return nb


def language(nb: dict) -> str:
    """The kernel's language ('python' when the notebook does not say)."""
    metadata = nb.get("metadata", {}) or {}
    return ((metadata.get("kernelspec", {}) or {}).get("language")
            or (metadata.get("language_info", {}) or {}).get("name") or "python")


def source_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def code_cells(nb: dict) -> list[CodeCell]:
    """The code cells, in order, with their sources (cell magics included)."""
    return [CodeCell(index, source_text(cell)) for index, cell in enumerate(nb["cells"])
            if cell.get("cell_type") == "code"]


def is_magic_line(line: str) -> bool:
    return bool(MAGIC_LINE.search(line)) and not line.lstrip().startswith("#")


def cell_magic(source: str) -> str | None:
    """The cell magic's line (`%%time`, `%%writefile x.py`) when the cell starts with one."""
    stripped = source.lstrip()
    if stripped.startswith("%%"):
        return stripped.splitlines()[0].strip()
    return None

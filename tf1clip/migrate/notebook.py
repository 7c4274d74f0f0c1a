"""Notebooks: the code cells are migrated as one module (Jupyter runs them in one namespace).

Cells are joined with a marker statement between them, IPython lines (`%magic`, `!shell`,
`x = !cmd`, `obj?`) are masked by placeholder statements and restored afterwards, and cells
that start with a cell magic (`%%time`, `%%bash`, ...) are left out. Only the `source` of
changed code cells is replaced: outputs, execution counts, metadata and every other byte of
the JSON stay as they were. The JSON is written back only if re-serializing the unchanged
notebook reproduces the file exactly (the layout nbformat and most tools use); otherwise the
notebook is left alone and reported.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from tf1clip.migrate.engine import MigrationError, Outcome, migrate, migrate_text
from tf1clip.notebook_cells import NotebookError, cell_magic, code_cells, is_magic_line, language, read_notebook
from tf1clip.notebook_cells import source_text

# A magic's placeholder is an import statement: valid wherever a statement is, left alone by
# every rule, and part of an import block, so an import a rule adds (AddImportsVisitor: after
# the first block of imports) lands after the notebook's own. Cell markers are expression
# statements, ending that block at the first cell's end; the first cell has none.
_CELL = "__tf1clip_cell__({})"
_MAGIC = "import __tf1clip_magic_{}__"
_CELL_MARK = re.compile(r"^__tf1clip_cell__\((\d+)\)$")
_MAGIC_MARK = re.compile(r"^(\s*)import __tf1clip_magic_(\d+)__$")


@dataclass
class NotebookOutcome:
    data: bytes                 # the new file (same bytes when unchanged)
    outcome: Outcome            # notes carry lines of the joined module
    where: list                 # joined-module line → (cell number, line in cell)
    cell_notes: list = None     # (cell number, message) for cells left for a human

    def __post_init__(self):
        self.cell_notes = self.cell_notes or []


def _dumps_like(original: str, nb) -> "callable | None":
    """A serializer that reproduces `original` from its parsed form, or None."""
    trailing = "\n" if original.endswith("\n") else ""
    for indent in (1, 2, 4, None, 0, 3):
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                def dump(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii):
                    return json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii) + trailing
                if dump(nb) == original:
                    return dump
    return None


def migrate_notebook(data: bytes, display: str, to: str = "compat") -> NotebookOutcome:
    """Migrate the code cells (to the compat tier, or with `to="tf2"` to the TF2 tier where the
    whole program converts: each statement stays in its cell, state and step functions go into
    the cell that first needs them)."""
    try:
        text = data.decode("utf-8")
        nb = read_notebook(text)
    except UnicodeDecodeError as exc:
        raise MigrationError(f"not a valid notebook (JSON): {exc}", 1) from None
    except NotebookError as exc:
        suffix = "; left unchanged" if "cells" in str(exc) else ""
        raise MigrationError(f"{exc}{suffix}", exc.line) from None
    kernel = language(nb)
    if kernel.lower() != "python":
        return NotebookOutcome(data, Outcome(text, reason=f"{kernel} notebook"), [])

    parts: list[str] = []
    where: list = [None]                   # index = joined line number (1-based)
    magics: list[str] = []
    cells: list[int] = []                  # indexes into nb["cells"] of the joined code cells
    skipped_magic: list[int] = []
    for cell in code_cells(nb):
        index, source = cell.index, cell.source
        if cell_magic(source):
            skipped_magic.append(index)
            continue
        k = len(cells)
        cells.append(index)
        if k:
            parts.append(_CELL.format(k) + "\n")
            where.append((index + 1, 0))
        for n, line in enumerate(source.splitlines(), start=1):
            if is_magic_line(line):
                indent = line[: len(line) - len(line.lstrip())]
                parts.append(indent + _MAGIC.format(len(magics)) + "\n")
                magics.append(line)
            else:
                parts.append(line + "\n")
            where.append((index + 1, n))
    joined = "".join(parts)
    try:
        outcome = migrate_text(joined, display) if to != "tf2" else migrate(joined, display, to="tf2")
    except MigrationError as exc:
        cell, line = where[exc.line] if 0 < exc.line < len(where) and where[exc.line] else (None, exc.line)
        raise MigrationError(f"cell {cell}: {exc}" if cell else str(exc), line) from None
    cell_notes = [(index + 1, "starts with a cell magic, so it was not migrated: check its TensorFlow code by hand")
                  for index in skipped_magic
                  if "tensorflow" in source_text(nb["cells"][index]) or "tf." in source_text(nb["cells"][index])]
    if outcome.text == joined:
        return NotebookOutcome(data, outcome, where, cell_notes)

    dump = _dumps_like(text, nb)
    if dump is None:
        raise MigrationError("the notebook's JSON layout cannot be reproduced byte for byte, so it is not "
                             "rewritten; re-save it with Jupyter (or `nbformat`) and run again", 1)
    new_sources = _split(outcome.text, len(cells))
    changed = False
    for k, index in enumerate(cells):
        cell = nb["cells"][index]
        old = source_text(cell)
        new = _unmask(new_sources[k], magics)
        # The join ended every cell with a newline, and an added import brings a blank line:
        # a cell keeps its own trailing newlines.
        new = new.rstrip("\r\n") + old[len(old.rstrip("\r\n")):]
        if new == old:
            continue
        changed = True
        cell["source"] = new.splitlines(keepends=True) if isinstance(cell.get("source"), list) else new
    if not changed:
        return NotebookOutcome(data, outcome, where, cell_notes)
    return NotebookOutcome(dump(nb).encode("utf-8"), outcome, where, cell_notes)


def _split(text: str, count: int) -> list[str]:
    """The joined module's text back into `count` cells (the first cell has no marker)."""
    out: list[list[str]] = [[] for _ in range(count)]
    current = 0
    seen: list[int] = []
    for line in text.splitlines(keepends=True):
        mark = _CELL_MARK.match(line.rstrip("\r\n"))
        if mark:
            current = int(mark.group(1))
            seen.append(current)
            continue
        out[current].append(line)
    if seen != list(range(1, count)):
        raise MigrationError("internal: cell markers were moved by a rewrite; notebook left unchanged", 0)
    return ["".join(lines) for lines in out]


def _unmask(text: str, magics: list[str]) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        mark = _MAGIC_MARK.match(body)
        if mark:
            lines.append(magics[int(mark.group(2))] + line[len(body):])
        else:
            lines.append(line)
    return "".join(lines)

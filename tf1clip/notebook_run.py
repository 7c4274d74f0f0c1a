"""`tf1clip run notebook.ipynb`: the code cells run in order in one namespace, as a kernel runs them.

Cells are read by `tf1clip.notebook_cells` (the reader `tf1clip migrate` uses). Each code cell
is compiled under the name `NOTEBOOK cell N` (N counts every cell, markdown too, as Jupyter's
cell list does), so tracebacks and tf1clip's one-line errors point at the cell and its line.
As in a kernel, the value of a cell's last expression is printed (its repr) unless it is None
or the line ends with `;`. What is not Python is skipped and named once on stderr: IPython
lines (`%matplotlib inline`, `!pip install ...`, `x = !ls`, `obj?`) and cells run by another
interpreter (`%%bash`, `%%html`, ...). `%%time`, `%%timeit` and `%%capture` cells run their
body once (no timing, output shown); `%%writefile [-a] PATH` writes its body, as IPython does.
The notebook runs in its own folder (a kernel's working directory), with no `__file__`.
"""
from __future__ import annotations

import ast
import linecache
import os
import sys
from dataclasses import dataclass, field

from tf1clip._source import SourceProblem, check_source
from tf1clip.notebook_cells import NotebookError, cell_magic, code_cells, is_magic_line, language, read_notebook

# Cell magics whose body is Python that IPython runs once in the user namespace (timing or
# capturing aside).
_RUN_BODY = ("%%time", "%%timeit", "%%capture", "%%prun")


@dataclass
class _Cell:
    filename: str
    code: object                       # the cell's statements but its last expression
    last: object = None                # the last expression statement, compiled with "eval"
    write: tuple | None = None         # (path, append, text) for %%writefile


@dataclass
class NotebookProgram:
    """The runnable form of a notebook: compiled cells and the lines skipped on the way."""

    path: str
    cells: list = field(default_factory=list)
    notes: list = field(default_factory=list)     # (where, what): lines for stderr

    def run(self, namespace: dict) -> None:
        for where, what in self.notes:
            print(f"tf1clip: {where}: {what}", file=sys.stderr)
        folder = os.path.dirname(os.path.abspath(self.path))
        saved = os.getcwd()
        os.chdir(folder)
        try:
            for cell in self.cells:
                _run_cell(cell, namespace)
        finally:
            os.chdir(saved)


def _run_cell(cell: _Cell, namespace: dict) -> None:
    if cell.write is not None:
        path, append, text = cell.write
        with open(path, "a" if append else "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"{'Appending to' if append else 'Writing'} {path}")
        return
    exec(cell.code, namespace)  # noqa: S102 - the user's notebook, as a kernel runs it
    if cell.last is not None:
        value = eval(cell.last, namespace)  # noqa: S307 - the cell's last expression
        if value is not None:
            print(repr(value))
    sys.stdout.flush()


def load_notebook(path: str, data: bytes) -> NotebookProgram | SourceProblem:
    """The notebook at `path` compiled, or the one problem that stops it before anything runs."""
    try:
        nb = read_notebook(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return SourceProblem(path, 1, f"not a valid notebook: {exc}")
    except NotebookError as exc:
        return SourceProblem(path, exc.line, str(exc))
    kernel = language(nb)
    if kernel.lower() != "python":
        return SourceProblem(path, 1, f"a {kernel} notebook: tf1clip runs Python notebooks")
    program = NotebookProgram(path)
    for cell in code_cells(nb):
        filename = f"{path} cell {cell.number}"
        source, magic = cell.source, cell_magic(cell.source)
        if magic is not None:
            source = _cell_magic_body(program, filename, magic, source)
            if source is None:
                continue
        lines = []
        for n, line in enumerate(source.splitlines(), start=1):
            if is_magic_line(line):
                program.notes.append((f"{filename}:{n}", f"skipped the IPython line {line.strip()!r} (not Python)"))
                line = line[: len(line) - len(line.lstrip())] + "pass"
            lines.append(line)
        text = "\n".join(lines) + "\n"
        problem = check_source(filename, text.encode("utf-8"))
        if problem is not None:
            return problem
        program.cells.append(_compile_cell(filename, text))
    return program


def _cell_magic_body(program: NotebookProgram, filename: str, magic: str, source: str) -> str | None:
    """The Python a cell magic's cell runs (its body), or None when nothing runs (recorded)."""
    name, _, rest = magic.partition(" ")
    body = source.lstrip().split("\n", 1)[1] if "\n" in source.lstrip() else ""
    if name in _RUN_BODY:
        program.notes.append((f"{filename}:1", f"ran the body of the {name} cell once (not timed or captured)"))
        return body
    if name in ("%%writefile", "%%file") and rest.strip():
        words = rest.split()
        append = words[0] in ("-a", "--append")
        target = " ".join(words[1:] if append else words)
        program.cells.append(_Cell(filename, None, write=(target, append, body)))
        return None
    program.notes.append((f"{filename}:1", f"skipped the {name} cell (not Python)"))
    return None


def _compile_cell(filename: str, text: str) -> _Cell:
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    tree = ast.parse(text, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not _silenced(text, tree.body[-1]):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval", dont_inherit=True)
    return _Cell(filename, compile(tree, filename, "exec", dont_inherit=True), last)


def _silenced(text: str, node: ast.Expr) -> bool:
    """IPython's rule: a trailing `;` on the last line hides the cell's value."""
    lines = text.splitlines()
    end = lines[node.end_lineno - 1][node.end_col_offset:] if node.end_lineno else ""
    return end.split("#", 1)[0].strip().startswith(";")

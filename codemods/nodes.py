"""The parts of the compat engine's file model: statements, imports, references to imported names.

`codemods.model.FileModel` makes them in one walk over Python's `ast`; the rules read them.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def split_lines(text: str) -> list[str]:
    """The lines as CPython counts them (\\r\\n, \\r or \\n ends one), each with its line ending."""
    lines, start = [], 0
    for match in _LINE_BREAK.finditer(text):
        lines.append(text[start:match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def one_string_token(source: str) -> bool:
    """One string literal (libcst's SimpleString), not several written together (a concatenation)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(tokens) == 1


def dotted(node: ast.AST) -> Optional[str]:
    """'a.b.c' for a pure Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# -- statements -----------------------------------------------------------------------------------
@dataclass(eq=False)
class Stmt:
    """A statement: where it is in its block and which lines it spans."""

    node: ast.stmt
    parent: Optional["Stmt"]          # the compound statement whose block holds it (None: module level)
    block: list                       # the list of ast statements it belongs to
    index: int                        # its index in `block`
    first: int                        # first line, decorators included (1-based)
    last: int                         # last line of its own text (a compound: of its last body line)

    @property
    def compound(self) -> bool:
        return isinstance(self.node, COMPOUND)


def blocks_of(node: ast.stmt) -> list[list]:
    """The statement lists (libcst's IndentedBlocks) of a compound statement, in source order;
    an `elif` chain is flattened (its blocks are the If's)."""
    if isinstance(node, ast.If):
        out = [node.body]
        while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            out.append(node.body)
        if node.orelse:
            out.append(node.orelse)
        return out
    if isinstance(node, ast.Match):
        return [case.body for case in node.cases]
    out = [node.body]  # def, class, for, while, with, try
    out += [h.body for h in getattr(node, "handlers", ())]
    if getattr(node, "orelse", None):
        out.append(node.orelse)
    if getattr(node, "finalbody", None):
        out.append(node.finalbody)
    return out


@dataclass(eq=False)
class ImportAlias:
    stmt: "ImportStmt"
    index: int
    name: str                          # as written: 'tensorflow.contrib.slim', 'input_data'
    asname: Optional[str]
    binding: Optional[Binding] = None

    @property
    def bound(self) -> str:
        """The name this alias binds ('a' for `import a.b`)."""
        if self.asname:
            return self.asname
        return self.name.split(".")[0] if self.stmt.is_import else self.name

    @property
    def qname(self) -> str:
        """The qualified name of what the alias binds."""
        if not self.stmt.is_import:
            return f"{self.stmt.module}.{self.name}" if self.stmt.module else self.name
        return self.name if self.asname else self.name.split(".")[0]

    @property
    def full(self) -> str:
        """The qualified name it imports ('a.b' for `import a.b`, 'm.x' for `from m import x`)."""
        return self.name if self.stmt.is_import else self.qname


@dataclass(eq=False)
class ImportStmt:
    node: ast.stmt                     # ast.Import or ast.ImportFrom
    stmt: Stmt
    scope: Scope
    aliases: list = field(default_factory=list)

    @property
    def is_import(self) -> bool:
        return isinstance(self.node, ast.Import)

    @property
    def module(self) -> Optional[str]:
        """The module of `from M import ...` (None for relative or `import`)."""
        if isinstance(self.node, ast.ImportFrom) and not self.node.level:
            return self.node.module
        return None

    @property
    def star(self) -> bool:
        return isinstance(self.node, ast.ImportFrom) and any(a.name == "*" for a in self.node.names)

    @property
    def modules(self) -> list:
        """Dotted modules it imports (`import a.b` → ['a.b'], `from a import b` → ['a'])."""
        if self.is_import:
            return [a.name for a in self.node.names]
        return [self.module] if self.module else []

    @property
    def line(self) -> int:
        return self.node.lineno


@dataclass(eq=False)
class Reference:
    """A dotted name (`tf.contrib.rnn.LSTMCell`, or a bare `rnn`) whose root is an imported name."""

    root: str
    parts: tuple
    node: ast.expr                     # the outermost link (or the root Name)
    links: list                        # links[k]: the ast node of root + parts[:k+1]
    stmt: Stmt                         # the innermost statement holding it
    scope: Scope
    bindings: list                     # import bindings the root refers to

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def pos(self) -> tuple:
        return (self.node.lineno, self.node.col_offset)

    @property
    def text(self) -> str:
        return ".".join((self.root, *self.parts))

    @property
    def qnames(self) -> set:
        return {b.qname for b in self.bindings}

    @property
    def qname(self) -> Optional[str]:
        """The root's single imported qualified name, or None when it has none or several."""
        names = self.qnames
        return next(iter(names)) if len(names) == 1 else None

    def prefix_text(self, k: int) -> str:
        return ".".join((self.root, *self.parts[:k]))

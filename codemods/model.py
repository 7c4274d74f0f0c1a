"""What the compat rules know about a module: one `ast` walk, no libcst metadata.

The rules need little: which names are bound by imports (and to what qualified name), which
are bound otherwise, every dotted reference whose root is an imported name, the statements
and their lines. `FileModel` computes exactly that in one walk over Python's own `ast` (a C
parse, ~1 ms a file), with libcst's scope rules (a function does not see class-level names, a
use sees the earlier bindings of its own scope, a comprehension is a scope, `global` and
`nonlocal` redirect). The rewrites themselves are made on libcst nodes by `codemods.engine`,
so the output keeps the file's formatting.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from codemods.model_walk import Walker, bind
from codemods.nodes import COMPOUND, Stmt, blocks_of, split_lines
from codemods.scopes import Binding, Scope


class FileModel:
    """The facts the rules read, from one walk over `ast.parse(text)`."""

    def __init__(self, text: str, filename: str = "<string>"):
        self.text = text
        self.filename = filename
        self.tree = ast.parse(text, filename)
        self.lines = split_lines(text)
        self.module_scope = Scope("module", None)
        self.stmts: dict = {}          # id(ast.stmt) -> Stmt
        self.imports: list = []        # ImportStmt, source order
        self.references: list = []     # Reference, source order
        self.unresolved_roots = 0
        self._parents: dict = {}       # id(ast.stmt) -> {id(node): (node, parent)} of its own expressions
        walker = Walker(self.tree, self.module_scope, self.stmts, self.imports, self.references)
        walker.run()
        self._stores: dict = walker.unbound_stores  # name -> [(scope, pos, stmt node)] of bindings not yet made
        self.references.sort(key=lambda r: r.pos)

    # -- names that no import binds ------------------------------------------------------------
    def lookup(self, name: str, scope: Scope) -> list:
        """Every binding of `name` a use in `scope` may see (libcst's `scope[name]`, builtins left
        out): the walk binds only the names imports bind, the others are bound here on demand."""
        pending = self._stores.pop(name, None)
        if pending:
            for where, pos, node in pending:
                bind(where, Binding(name, where, pos, stmt=node))
        return scope.lookup(name, scope)

    def parent(self, node: ast.AST, stmt: Stmt) -> Optional[ast.AST]:
        """The node directly holding `node`, an expression of statement `stmt` (not of a
        statement nested in it)."""
        found = self._own_nodes(stmt).get(id(node))
        return found[1] if found is not None else None

    def expressions(self, stmt: Stmt) -> list:
        """Every node of statement `stmt`'s own expressions (not of the statements nested in it)."""
        return [node for node, _ in self._own_nodes(stmt).values()]

    def _own_nodes(self, stmt: Stmt) -> dict:
        """id(node) -> (node, the node holding it), for the nodes of `stmt`'s own expressions."""
        own = self._parents.get(id(stmt.node))
        if own is None:
            own = self._parents[id(stmt.node)] = {}
            todo = [stmt.node]
            while todo:
                here = todo.pop()
                for child in ast.iter_child_nodes(here):
                    if not isinstance(child, ast.stmt):
                        own[id(child)] = (child, here)
                        todo.append(child)
        return own

    def source(self, node: ast.AST) -> str:
        """The text of `node` as written (without the parentheses around it)."""
        first, last = node.lineno, node.end_lineno
        if first == last:
            return self.lines[first - 1].encode("utf-8")[node.col_offset:node.end_col_offset].decode("utf-8")
        text = [self.lines[first - 1].encode("utf-8")[node.col_offset:].decode("utf-8"),
                *self.lines[first:last - 1], self.lines[last - 1].encode("utf-8")[:node.end_col_offset].decode("utf-8")]
        return "".join(text)

    def assignments(self) -> Iterator[ast.Assign]:
        """Every `=` statement of the module, nested ones too."""
        return (node for node in ast.walk(self.tree) if isinstance(node, ast.Assign))

    # -- statements --------------------------------------------------------------------------
    def stmt(self, node: ast.stmt) -> Stmt:
        return self.stmts[id(node)]

    @property
    def body(self) -> list:
        return self.tree.body

    def all_blocks(self) -> Iterator[tuple]:
        """(owner Stmt, block) for every statement list inside a compound, in libcst's leave order
        (a block after the blocks nested in it)."""
        def visit(block):
            for node in block:
                if isinstance(node, COMPOUND):
                    for inner in blocks_of(node):
                        yield from visit(inner)
                        yield self.stmt(node), inner
        yield from visit(self.tree.body)

    def leading_lines(self, stmt: Stmt) -> tuple:
        """(first, end): the 1-based line range [first, end) of the blank and comment lines libcst
        puts in front of `stmt` (its `leading_lines`). Empty for a module's first statement (they
        are libcst's module header) and for a statement sharing its line (`if x: y`, `a; b`)."""
        first = stmt.first
        if (stmt.parent is None and stmt.index == 0) or self.shares_line(stmt):
            return first, first
        start = first
        while start > 1 and _blank_or_comment(self.lines[start - 2]):
            start -= 1
        if stmt.index > 0:
            prev = self.stmt(stmt.block[stmt.index - 1])
            start = max(start, prev.last + 1)
            if prev.compound:
                start = self._after_footer(prev, start, first)
        return start, first

    def in_suite(self, stmt: Stmt) -> bool:
        """True when `stmt` is in a block written on its header's line (`try: import x`)."""
        return stmt.parent is not None and self.shares_line(self.stmt(stmt.block[0])) and stmt.block is not None

    def shares_line(self, stmt: Stmt) -> bool:
        """True when code precedes `stmt` on its first line (`if x: y`, `a; b`)."""
        node = stmt.node
        if stmt.first != node.lineno:
            return False  # a decorator starts it, alone on its line
        return bool(self.lines[node.lineno - 1].encode("utf-8")[:node.col_offset].strip())

    def _after_footer(self, prev: Stmt, start: int, end: int) -> int:
        """libcst gives the lines after `prev`'s last indented block to that block (its footer) up
        to the last comment or whitespace-only line indented at least as deep as the block's
        statements; a block on its header's line (`if x: y`) has no footer."""
        head = self.stmt(blocks_of(prev.node)[-1][0])
        if self.shares_line(head):
            return start
        deep = _indent_width(self.lines[head.first - 1])
        cut = start
        for line in range(start, end):
            raw = self.lines[line - 1]
            stripped = raw.strip(" \t\f\r\n")
            if (not stripped or stripped.startswith("#")) and _indent_width(raw.rstrip("\r\n")) >= deep:
                cut = line + 1
        return cut

    def indent_of(self, stmt: Stmt) -> str:
        raw = self.lines[stmt.first - 1]
        return raw[:len(raw) - len(raw.lstrip(" \t\f"))]

    def segment(self, first: int, end: int) -> str:
        """The text of lines [first, end)."""
        return "".join(self.lines[first - 1:end - 1])

    @property
    def newline(self) -> str:
        """The file's first line ending (libcst's default_newline)."""
        first = self.lines[0] if self.lines else ""
        return first[len(first.rstrip("\r\n")):] or "\n"


def _indent_width(raw: str) -> int:
    return len(raw) - len(raw.lstrip(" \t\f"))


def _blank_or_comment(raw: str) -> bool:
    stripped = raw.strip(" \t\f\r\n")
    return not stripped or stripped.startswith("#")

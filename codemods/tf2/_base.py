"""What the TF2-tier steps share: the result type, refusals, qualified names, small builders.

Every step is text in, text out (a libcst Module in, a Module out) and never imports
TensorFlow. A step that cannot prove its rewrite exact raises `Refuse(line, reason)`; the
driver (`codemods.tf2.convert`) then returns `text=None` with a 'human' note.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

import libcst as cst

from libcst.metadata import MetadataWrapper, ScopeProvider

from codemods._base import Note, dotted_name, walk  # noqa: F401 - re-exported for the steps
from codemods._base import imported_qualified_names
from codemods.children import children
from codemods.tf2.lines import start_lines

# Canonical prefixes: every spelling of a TF 1.x name resolves to one key of the tables.
_CANONICAL = (
    ("tensorflow.compat.v1.", "tensorflow."),
    ("tensorflow.contrib.slim.", "slim."),
    ("tf_slim.", "slim."),
)


class Refuse(Exception):
    """The file cannot be converted exactly; `line` (1-based, of the input) says where."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line = line
        self.reason = reason


@dataclass
class Result:
    """`text` is the TF2 program, or None when the file could not be converted exactly."""

    text: Optional[str]
    notes: list = field(default_factory=list)

    @property
    def converted(self) -> bool:
        return self.text is not None


def canonical(qname: str) -> str:
    for old, new in _CANONICAL:
        if qname.startswith(old):
            return new + qname[len(old):]
    return qname


class Names:
    """Qualified-name and position lookups over one module (metadata resolved once).

    `import tensorflow as tf1`, `from tensorflow import train` and `tf.compat.v1.X` all
    resolve to the same canonical name (`tensorflow.train.AdamOptimizer`).
    """

    def __init__(self, module: cst.Module, table=None):
        """`table`: the translator's import table (`names.ImportTable`); when given, a name means
        what it says (imports and aliases), so the checks of the output read names as the
        translator did."""
        self._table = table
        self._wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.module = self._wrapper.module
        self._scopes = None  # resolved when a qualified name is first asked without a table
        self._q: dict = {}
        self._pos = None  # positions are resolved when a line is first asked for (a refusal)

    def of(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        """The canonical imported name of a Name/Attribute (or a Call's func), else None."""
        if node is None:
            return None
        if isinstance(node, cst.Call):
            node = node.func
        if self._table is not None:
            return self._table.qualified(node)
        found = {canonical(q) for q in self.raw(node)}
        return next(iter(found)) if len(found) == 1 else None

    @property
    def scopes(self):
        """libcst's scope analysis of the module. Qualified names are asked of it for the nodes the
        steps look at (`imported_qualified_names`), not QualifiedNameProvider's value for every node."""
        if self._scopes is None:
            self._scopes = self._wrapper.resolve(ScopeProvider)
        return self._scopes

    def raw(self, node: cst.CSTNode) -> set:
        """The imported qualified names of `node`, as libcst gives them (not canonical)."""
        found = self._q.get(node)
        if found is None:
            found = self._q[node] = imported_qualified_names(self.scopes.get(node), node)
        return set(found)

    def is_(self, node: Optional[cst.CSTNode], *names: str) -> bool:
        q = self.of(node)
        return q is not None and q in names

    def under(self, node: Optional[cst.CSTNode], *prefixes: str) -> bool:
        q = self.of(node)
        return q is not None and any(q == p or q.startswith(p + ".") for p in prefixes)

    def line(self, node: cst.CSTNode) -> int:
        if self._pos is None:
            self._pos = start_lines(self.module)
        return self._pos.get(node, 0)


# -- small builders and readers -----------------------------------------------------------------
def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def stmt(text: str) -> cst.BaseStatement:
    return cst.parse_statement(text)


def arg(call: cst.Call, index: int, keyword: str) -> Optional[cst.BaseExpression]:
    """Argument `keyword`, given by keyword or at positional `index` (None if absent)."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if index is not None and 0 <= index < len(positional):
        return positional[index].value
    return None


def keywords(call: cst.Call) -> set[str]:
    return {a.keyword.value for a in call.args if a.keyword is not None}


def names_in(node: cst.CSTNode) -> set[str]:
    """Every bare name loaded or stored under `node` (attribute members excluded)."""
    out: set[str] = set()

    def visit(n: cst.CSTNode) -> None:
        if isinstance(n, cst.Name):
            out.add(n.value)
            return
        if isinstance(n, cst.Attribute):
            visit(n.value)
            return
        if isinstance(n, cst.Arg):
            visit(n.value)  # the keyword is not a use
            return
        for child in children(n):
            visit(child)

    visit(node)
    return out


def target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        out = []
        for el in target.elements:
            out.extend(target_names(el.value))
        return out
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def fresh(preferred: str, taken: Iterable[str]) -> str:
    taken = set(taken)
    if preferred not in taken:
        return preferred
    i = 2
    while f"{preferred}_{i}" in taken:
        i += 1
    return f"{preferred}_{i}"


class NameTransformer(cst.CSTTransformer):
    """A transformer of bare names: attribute members (`x.name`) and keyword names
    (`f(name=...)`) are not names of the scope, so `skipped(node)` tells them apart."""

    def __init__(self):
        super().__init__()
        self._skip: set = set()

    def visit_Attribute(self, node):
        self._skip.add(id(node.attr))

    def visit_Arg(self, node):
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def skipped(self, node) -> bool:
        return id(node) in self._skip

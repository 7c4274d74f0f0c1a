"""What both tiers' codemods share: notes for the report, examples, dotted names on libcst nodes.

A rule records each change and each place it leaves for a human as a `Note` (a line of the
input); run as a libcst command, its notes go to `context.scratch[NOTES_KEY]` and the places
left for a human also to `context.warnings`, which libcst prints. Imports only libcst's core
(the migrate path's start-up: `libcst.codemod` and `libcst.matchers` cost more than libcst).
"""
from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from typing import Iterable, Optional

import libcst as cst

from codemods.children import children

NOTES_KEY = "tf1clip.notes"

# Packages whose import also imports TensorFlow: the legacy-Keras switch goes before them.
TF_IMPORTING = ("tensorflow", "tf_slim", "tf1clip", "tf_keras")


def imported_qualified_names(scope, node: cst.CSTNode) -> set[str]:
    """The import-sourced names QualifiedNameProvider would give `node`, from its `scope`
    (ScopeProvider's; None outside any scope: nothing).

    QualifiedNameProvider is exactly `scope.get_qualified_names_for(node)` per node, but its
    own visit stores a lazy value for every node of the module, which costs as much as the
    scope analysis again; the rules ask about few nodes, so they ask the scope directly."""
    if scope is None:
        return set()
    from libcst.metadata import QualifiedNameSource

    return {q.name for q in scope.get_qualified_names_for(node) if q.source == QualifiedNameSource.IMPORT}


@dataclass(frozen=True)
class Note:
    """One line of the report: a change (`kind="change"`) or a place left for a human (`"human"`)."""

    line: int
    rule: str
    kind: str
    message: str
    runtime: Optional[str] = None  # the tf1clip name the output now imports, if any

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Valid:
    """Example code the codemod must leave byte-for-byte unchanged."""

    code: str


@dataclass(frozen=True)
class Invalid:
    """Example code the codemod rewrites, and what it must become."""

    code: str
    expected: str


# -- helpers on dotted names ----------------------------------------------------------------
def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """'a.b.c' for a pure Name/Attribute chain, else None (calls and subscripts break chains)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def chain_root(node: cst.CSTNode) -> Optional[cst.Name]:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def make_dotted(dotted: str) -> cst.BaseExpression:
    """The expression node for 'a.b.c'."""
    parts = dotted.split(".")
    expr: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr


def make_import_target(dotted: str) -> cst.Attribute | cst.Name:
    return make_dotted(dotted)  # type: ignore[return-value]


def import_module_names(stmt: cst.CSTNode) -> list[str]:
    """Dotted modules a small statement imports (`import a.b` → ['a.b'], `from a import b` → ['a'])."""
    if isinstance(stmt, cst.Import):
        return [dotted_name(a.name) or "" for a in stmt.names]
    if isinstance(stmt, cst.ImportFrom) and not stmt.relative and stmt.module is not None:
        return [dotted_name(stmt.module) or ""]
    return []


def imports_any(stmt: cst.CSTNode, packages: Iterable[str]) -> bool:
    """True when a statement (simple or compound, searched recursively) imports one of `packages`."""
    packages = tuple(packages)
    for node in _walk(stmt):
        for module in import_module_names(node):
            if any(module == p or module.startswith(p + ".") for p in packages):
                return True
    return False


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        below = children(n)  # a fresh list: reversed in place
        below.reverse()
        stack.extend(below)


def walk(node: cst.CSTNode):
    """Every node under `node`, in source order (including `node`)."""
    return _walk(node)


def compose_line_map(line_map: list[int], old: str, new: str) -> list[int]:
    """Map lines of `new` to original lines, through `old`'s map; inserted lines take their anchor's."""
    a, b = old.splitlines(), new.splitlines()
    mapping = [0] * (len(b) + 2)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                i = i1 + (j - j1)
            else:
                i = min(i1, max(len(a) - 1, 0)) if i1 < len(a) else max(len(a) - 1, 0)
            mapping[j + 1] = line_map[i + 1] if i + 1 < len(line_map) else line_map[-1]
    mapping[len(b) + 1] = line_map[-1]
    return mapping

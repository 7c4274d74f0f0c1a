"""What every tf1clip codemod shares: metadata, notes for the report, examples, dotted names.

A codemod records each change and each place it leaves for a human as a `Note` in
`context.scratch[NOTES_KEY]` (line numbers of the module it was given), so `tf1clip migrate`
can report them per file; run standalone (`python -m libcst.tool codemod`), the places left
for a human also go to `context.warnings`, which libcst prints.
"""
from __future__ import annotations

import difflib
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from typing import ClassVar, Iterable, Optional, Sequence

import libcst as cst
from libcst.codemod import VisitorBasedCodemodCommand
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameSource, ScopeProvider

NOTES_KEY = "tf1clip.notes"
# A MetadataWrapper a caller (tf1clip migrate) already resolved for the exact module it hands
# to `transform_module`: reused instead of deep-copying the module and resolving again.
WRAPPER_KEY = "tf1clip.wrapper"

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


class TFCommand(VisitorBasedCodemodCommand):
    """Base of the tf1clip codemods: declares the metadata they use and records notes."""

    METADATA_DEPENDENCIES = (ScopeProvider, PositionProvider)
    #: Rule id shown in reports (the module name, so a reader finds the code by it).
    RULE: ClassVar[str] = "tf1clip"
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()
    #: Text one of which a module must contain for this command to change or report anything
    #: (every name it acts on is spelled out in the source); empty: always run.
    TRIGGERS: ClassVar[Sequence[str]] = ()

    @classmethod
    def applies_to(cls, code: str) -> bool:
        """False when the command certainly leaves `code` alone and reports nothing."""
        return not cls.TRIGGERS or any(t in code for t in cls.TRIGGERS)

    @contextmanager
    def _handle_metadata_reference(self, module: cst.Module):
        shared = self.context.scratch.get(WRAPPER_KEY)
        if not (isinstance(shared, MetadataWrapper) and shared.module is module):
            with super()._handle_metadata_reference(module) as tree:
                yield tree
            return
        old = self.context.wrapper
        with self.resolve(shared):
            self.context = replace(self.context, wrapper=shared)
            try:
                yield shared.module
            finally:
                self.context = replace(self.context, wrapper=old)

    # -- notes -------------------------------------------------------------------------
    def line_of(self, node: cst.CSTNode) -> int:
        try:
            return self.get_metadata(PositionProvider, node).start.line
        except KeyError:
            return 0

    def note_change(self, node: cst.CSTNode | int, message: str, runtime: str | None = None) -> None:
        self._note(node, "change", message, runtime)

    def note_human(self, node: cst.CSTNode | int, message: str) -> None:
        line = self._note(node, "human", message, None)
        self.warn(f"line {line}: {message}")

    def _note(self, node, kind, message, runtime) -> int:
        line = node if isinstance(node, int) else self.line_of(node)
        notes = self.context.scratch.setdefault(NOTES_KEY, [])
        note = Note(line, self.RULE, kind, message, runtime)
        if note not in notes:
            notes.append(note)
        return line

    # -- names -------------------------------------------------------------------------
    def imported_names(self, node: cst.CSTNode) -> set[str]:
        """Qualified names of `node` that come from an import (locals and builtins dropped)."""
        module, memo = self.__dict__.get("_imported_names", (None, None))
        if module is not self.module:  # one memo per module this command transforms
            memo = {}
            self.__dict__["_imported_names"] = (self.module, memo)
        found = memo.get(node)
        if found is None:
            try:
                scope = self.get_metadata(ScopeProvider, node, None)
            except KeyError:
                scope = None
            found = memo[node] = imported_qualified_names(scope, node)
        return set(found)

    def imported_name(self, node: cst.CSTNode) -> Optional[str]:
        """The single imported qualified name of `node`, or None when absent or ambiguous."""
        names = self.imported_names(node)
        return next(iter(names)) if len(names) == 1 else None

    def visible_alias(self, node: cst.CSTNode, module: str) -> Optional[str]:
        """A name bound to `module` by a module-level import and visible at `node`, if any."""
        try:
            scope = self.get_metadata(ScopeProvider, node)
        except KeyError:
            return None
        if scope is None:
            return None
        for name in self._module_aliases(module):
            if name in scope and {q.name for q in scope.get_qualified_names_for(name)} == {module}:
                return name
        return None

    def _module_aliases(self, module: str) -> list[str]:
        found = []
        for stmt in self.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        dotted = dotted_name(alias.name)
                        if alias.asname is not None and dotted == module:
                            found.append(alias.asname.name.value)
                        elif alias.asname is None and dotted == module and "." not in module:
                            found.append(module)
        return found


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
    yield node
    for child in node.children:
        yield from _walk(child)


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

"""Table-driven renames of qualified names: the engine behind the contrib / slim / mnist codemods.

A reference is found through its qualified name, so `tf.contrib.rnn.BasicLSTMCell` (with
`import tensorflow as tf1`, `from tensorflow.contrib import rnn`, ...) and a from-imported
alias (`from tensorflow.contrib.estimator import clip_gradients_by_norm as clip_opt`) are all
found the same way. A reference is rewritten relative to its own root when it can be
(`tf.contrib.rnn.X` → `tf.compat.v1.nn.rnn_cell.X`), else through another module-level alias
of the target package, else as a full dotted name whose module `AddImportsVisitor` imports.
Import statements of a renamed name are rewritten where they stand (a function-local import
stays local); an import left unused by the rewrite is dropped by `RemoveImportsVisitor`.
A name in the command's family that no row covers is left and reported for a human.
"""
from __future__ import annotations

from typing import ClassVar, Optional, Sequence, Union

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from codemods._base import TFCommand, chain_root, dotted_name, make_dotted
from codemods._usage import classify
from codemods.contrib_table import Row, lookup


class TableRenameCommand(TFCommand):
    """Base for codemods that map qualified names through a table of `Row`s."""

    #: Qualified-name prefixes this command owns; unknown names under them are reported.
    FAMILY: ClassVar[Sequence[str]] = ()
    #: Prefixes inside FAMILY that another command owns.
    EXCLUDE: ClassVar[Sequence[str]] = ()
    #: Why a name of FAMILY without a row needs a human (the report's wording).
    GONE: ClassVar[str] = "tf.contrib was removed in TF 2"

    def rows_for(self, tree: cst.Module) -> dict[str, Row]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- driver --------------------------------------------------------------------------
    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        usage = classify(tree, self.imported_names, self.line_of)
        if usage.verdict not in ("tf1", "tf1-eager"):
            return tree
        self.rows = self.rows_for(tree)
        self._replacements: dict[cst.CSTNode, cst.BaseExpression] = {}
        self._seen_chains: set[int] = set()
        return tree.visit(self)

    def owns(self, qname: str) -> bool:
        def under(prefix: str) -> bool:
            return qname == prefix or qname.startswith(prefix + ".")

        return any(under(p) for p in self.FAMILY) and not any(under(p) for p in self.EXCLUDE)

    # -- references ------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) in self._seen_chains:
            return
        root = chain_root(node)
        dotted = dotted_name(node)
        if root is None or dotted is None:
            return
        # Mark the inner links of this chain: only the outermost one is looked at.
        inner = node.value
        while isinstance(inner, cst.Attribute):
            self._seen_chains.add(id(inner))
            inner = inner.value
        root_q = self.imported_name(root)
        if root_q is None or (self.owns(root_q) and lookup(self.rows, root_q) is not None):
            return  # unknown root, or bound by an import that is itself renamed (uses stay)
        parts = dotted.split(".")[1:]
        links = _links(node)  # links[k] covers root + parts[:k+1]
        for k in range(len(parts), 0, -1):
            qname = ".".join([root_q, *parts[:k]])
            if not self.owns(qname):
                continue
            hit = lookup(self.rows, qname)
            if hit is None:
                continue
            row, new_q = hit
            target = links[k - 1]
            self._replacements[target] = self._express(target, root, root_q, new_q, row)
            self.note_change(node, f"{qname} → {new_q}: {row.why}", runtime=new_q if row.runtime else None)
            return
        full = ".".join([root_q, *parts])
        if self.owns(full):
            self.note_human(node, f"{dotted} ({full}) has no known TF 2.21 replacement; "
                                  f"{self.GONE}: rewrite this by hand")

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        new = self._replacements.get(original_node)
        if new is None:
            return updated_node
        return new

    def _express(self, at: cst.CSTNode, root: cst.Name, root_q: str, new_q: str, row: Row) -> cst.BaseExpression:
        if new_q == root_q:
            return cst.Name(root.value)
        if new_q.startswith(root_q + "."):
            return make_dotted(root.value + new_q[len(root_q):])
        # Another module-level alias of the target package, longest first.
        candidates = _prefixes(new_q)
        for prefix in candidates:
            alias = self.visible_alias(at, prefix)
            if alias is not None:
                return make_dotted(alias + new_q[len(prefix):])
        AddImportsVisitor.add_needed_import(self.context, row.import_module)
        # The chain's root may now be unused (`from tensorflow.contrib import rnn`).
        if root_q.startswith(tuple(self.FAMILY)):
            RemoveImportsVisitor.remove_unused_import_by_node(self.context, root)
        return make_dotted(new_q)

    # -- imports -----------------------------------------------------------------------------
    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> Union[cst.Import, cst.RemovalSentinel]:
        names = []
        changed = False
        for alias in updated_node.names:
            dotted = dotted_name(alias.name) or ""
            hit = lookup(self.rows, dotted) if self.owns(dotted) else None
            if hit is None:
                if self.owns(dotted):
                    if alias.asname is None and "." in dotted:
                        # `import tensorflow.contrib.x` binds `tensorflow`; its uses are renamed
                        # one by one, so keep the binding without the contrib import.
                        names.append(alias.with_changes(name=cst.Name(dotted.split(".")[0])))
                        changed = True
                        continue
                    self.note_human(original_node, f"import of {dotted}: no known TF 2.21 replacement")
                names.append(alias)
                continue
            row, new_q = hit
            changed = True
            self.note_change(original_node, f"import {dotted} → import {new_q}: {row.why}",
                             runtime=new_q if row.runtime else None)
            if alias.asname is None and "." in dotted:
                # Binds the top package; its uses are renamed through the chain rewrite, and
                # the binding goes once nothing else uses it.
                top = dotted.split(".")[0]
                names.append(alias.with_changes(name=cst.Name(top)))
                RemoveImportsVisitor.remove_unused_import(self.context, top)
            else:
                names.append(alias.with_changes(name=make_dotted(new_q)))
        if not changed:
            return updated_node
        names = _dedupe(names)
        return updated_node.with_changes(names=_fix_commas(names))

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> Union[cst.SimpleStatementLine, cst.FlattenSentinel]:
        body: list[cst.BaseSmallStatement] = []
        changed = False
        for small in updated_node.body:
            new = self._rewrite_import_from(original_node, small) if isinstance(small, cst.ImportFrom) else None
            if new is None:
                body.append(small)
            else:
                body.extend(new)
                changed = True
        if not changed:
            return updated_node
        if len(updated_node.body) == 1 and len(body) > 1:
            # One import became several: one line each, the first keeps comments and blank lines.
            first = updated_node.with_changes(body=[_no_semicolon(body[0])])
            rest = [cst.SimpleStatementLine(body=[_no_semicolon(b)]) for b in body[1:]]
            return cst.FlattenSentinel([first, *rest])
        return updated_node.with_changes(body=[
            b.with_changes(semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
            if i < len(body) - 1 else _no_semicolon(b) for i, b in enumerate(body)])

    def _rewrite_import_from(
        self, line: cst.SimpleStatementLine, stmt: cst.ImportFrom
    ) -> Optional[list[cst.BaseSmallStatement]]:
        """The statements replacing `stmt`, or None to keep it."""
        if stmt.relative or stmt.module is None:
            return None
        module = dotted_name(stmt.module) or ""
        if isinstance(stmt.names, cst.ImportStar):
            if self.owns(module):
                self.note_human(line, f"from {module} import *: name the imports, then migrate")
            return None
        keep: list[cst.ImportAlias] = []
        moved: dict[str, list[cst.ImportAlias]] = {}
        for alias in stmt.names:
            name = dotted_name(alias.name) or ""
            qname = f"{module}.{name}"
            asname = alias.asname.name.value if alias.asname else None  # type: ignore[union-attr]
            bound = asname or name
            hit = lookup(self.rows, qname) if self.owns(qname) else None
            if hit is None:
                if self.owns(qname) and self._has_rows_under(qname):
                    # A contrib module whose uses are renamed one by one: dropped once unused.
                    RemoveImportsVisitor.remove_unused_import(self.context, module, name, asname)
                elif self.owns(qname):
                    self.note_human(line, f"from {module} import {name}: no known TF 2.21 replacement")
                keep.append(alias)
                continue
            row, new_q = hit
            self.note_change(line, f"from {module} import {name} → {new_q}: {row.why}",
                             runtime=new_q if row.runtime else None)
            parent, _, last = new_q.rpartition(".")
            moved.setdefault(parent, []).append(
                cst.ImportAlias(name=cst.Name(last),
                                asname=None if bound == last else cst.AsName(name=cst.Name(bound))))
        if not moved:
            return None
        out: list[cst.BaseSmallStatement] = []
        if keep:
            out.append(stmt.with_changes(names=_fix_commas(keep)))
        for parent, aliases in moved.items():
            if parent:
                out.append(cst.ImportFrom(module=make_dotted(parent), names=_fix_commas(aliases)))  # type: ignore[arg-type]
            else:  # a top-level package: `from tensorflow.contrib import slim` → `import tf_slim as slim`
                out.append(cst.Import(names=_fix_commas(
                    [cst.ImportAlias(name=a.name, asname=a.asname) for a in aliases])))
        return out

    def _has_rows_under(self, qname: str) -> bool:
        return any(key.startswith(qname + ".") for key in self.rows)


def _links(node: cst.Attribute) -> list[cst.Attribute]:
    """The Attribute links of a chain from the innermost (root.a) to `node` (root.a.b...)."""
    links = []
    cur: cst.BaseExpression = node
    while isinstance(cur, cst.Attribute):
        links.append(cur)
        cur = cur.value
    return list(reversed(links))


def _prefixes(qname: str) -> list[str]:
    parts = qname.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def _fix_commas(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    out = []
    for i, alias in enumerate(aliases):
        last = i == len(aliases) - 1
        if last:
            out.append(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        elif alias.comma == cst.MaybeSentinel.DEFAULT or alias.comma is None:
            out.append(alias.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        else:
            out.append(alias)
    return out


def _dedupe(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    seen, out = set(), []
    for alias in aliases:
        key = (dotted_name(alias.name), alias.asname.name.value if alias.asname else None)  # type: ignore[union-attr]
        if key not in seen:
            seen.add(key)
            out.append(alias)
    return out


def _no_semicolon(stmt: cst.BaseSmallStatement) -> cst.BaseSmallStatement:
    return stmt.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)

"""Table-driven renames of qualified names: the part the contrib, slim and MNIST rules share.

A reference is found through its qualified name, so `tf.contrib.rnn.BasicLSTMCell` (with
`import tensorflow as tf1`, `from tensorflow.contrib import rnn`, ...) and a from-imported
alias (`from tensorflow.contrib.estimator import clip_gradients_by_norm as clip_opt`) are all
found the same way. A reference is rewritten relative to its own root when it can be
(`tf.contrib.rnn.X` → `tf.nn.rnn_cell.X` once `tf` is `tensorflow.compat.v1`), else through
another module-level alias of the target package, else as a full dotted name whose module is
imported (AddImportsVisitor's place). Import statements of a renamed name are rewritten where
they stand (a function-local import stays local); an import left unused by the rewrite is
dropped. A name in the rule's family that no row covers is left and reported for a human.
"""
from __future__ import annotations

from typing import ClassVar, Sequence

from codemods.contrib_table import Row, lookup
from codemods.nodes import ImportStmt, Reference
from codemods.rule import Rule


class TableRenameRule(Rule):
    """Base for rules that map qualified names through a table of `Row`s."""

    #: Qualified-name prefixes this rule owns; unknown names under them are reported.
    FAMILY: ClassVar[Sequence[str]] = ()
    #: Prefixes inside FAMILY that another rule owns.
    EXCLUDE: ClassVar[Sequence[str]] = ()
    #: Why a name of FAMILY without a row needs a human (the report's wording).
    GONE: ClassVar[str] = "tf.contrib was removed in TF 2"

    def __init__(self, run):
        super().__init__(run)
        self.rows = self.rows_for()

    def rows_for(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def owns(self, qname: str) -> bool:
        def under(prefix: str) -> bool:
            return qname == prefix or qname.startswith(prefix + ".")

        return any(under(p) for p in self.FAMILY) and not any(under(p) for p in self.EXCLUDE)

    # -- imports ----------------------------------------------------------------------------------
    def visit_import(self, imp: ImportStmt) -> None:
        if imp.is_import:
            self._import(imp)
        elif not self.file.in_suite(imp.stmt):  # `try: from x import y` on one line stays
            self._import_from(imp)

    def _import(self, imp: ImportStmt) -> None:
        for alias in imp.aliases:
            dotted = alias.name
            hit = lookup(self.rows, dotted) if self.owns(dotted) else None
            if hit is None:
                if self.owns(dotted):
                    if alias.asname is None and "." in dotted:
                        # `import tensorflow.contrib.x` binds `tensorflow`; its uses are renamed
                        # one by one, so keep the binding without the contrib import.
                        self.run.rename_alias(self, alias, dotted.split(".")[0], table=True)
                        continue
                    self.unmapped_import(imp, alias, dotted)
                continue
            row, new_q = hit
            self.note_change(imp.line, f"import {dotted} → import {new_q}: {row.why}",
                             runtime=new_q if row.runtime else None)
            if alias.asname is None and "." in dotted:
                # Binds the top package; its uses are renamed through the chain rewrite, and the
                # binding goes once nothing else uses it.
                top = dotted.split(".")[0]
                self.run.rename_alias(self, alias, top, table=True)
                self.run.remove_if_unused(self, alias, name=top)
            else:
                self.run.rename_alias(self, alias, new_q, table=True)

    def _import_from(self, imp: ImportStmt) -> None:
        module = imp.module
        if module is None:
            return
        if imp.star:
            if self.owns(module):
                self.note_human(imp.line, f"from {module} import *: name the imports, then migrate")
            return
        for alias in imp.aliases:
            qname = f"{module}.{alias.name}"
            hit = lookup(self.rows, qname) if self.owns(qname) else None
            if hit is None:
                if self.owns(qname) and self._has_rows_under(qname):
                    self.run.remove_if_unused(self, alias)  # a contrib module whose uses are renamed one by one
                elif self.owns(qname):
                    self.unmapped_import(imp, alias, qname)
                continue
            row, new_q = hit
            self.note_change(imp.line, f"from {module} import {alias.name} → {new_q}: {row.why}",
                             runtime=new_q if row.runtime else None)
            parent, _, last = new_q.rpartition(".")
            self.run.move_alias(self, alias, parent, last)

    def unmapped_import(self, imp: ImportStmt, alias, qname: str) -> None:
        """An import of `qname`, in the family, that no row maps: left for a human (a rule whose
        uses of such names can be rewritten one by one drops it once they are: `unmapped_use`)."""
        self.note_human(imp.line, f"import of {qname}: no known TF 2.21 replacement")

    def unmapped_use(self, ref: Reference, full: str) -> bool:
        """`ref` reaches `full`, a name of the family that no row maps: True when the rule rewrote
        it (and reported it) itself; else it is left for a human as it is."""
        return False

    def _has_rows_under(self, qname: str) -> bool:
        return any(key.startswith(qname + ".") for key in self.rows)

    # -- references -------------------------------------------------------------------------------
    def visit_reference(self, ref: Reference) -> None:
        if not ref.parts:
            root_q = ref.qname  # a from-imported name used bare (`NASCell(4)`)
            if root_q is not None and self.owns(root_q) and lookup(self.rows, root_q) is None:
                self.unmapped_use(ref, root_q)
            return
        root_q = ref.qname
        if root_q is None or (self.owns(root_q) and lookup(self.rows, root_q) is not None):
            return  # unknown root, or bound by an import that is itself renamed (uses stay)
        parts = ref.parts
        for k in range(len(parts), 0, -1):
            qname = ".".join((root_q, *parts[:k]))
            if not self.owns(qname):
                continue
            hit = lookup(self.rows, qname)
            if hit is None:
                continue
            row, new_q = hit
            self.run.replace(self, ref, k, self._express(ref, root_q, new_q, row), qname=new_q)
            self.note_change(ref.line, f"{qname} → {new_q}: {row.why}", runtime=new_q if row.runtime else None)
            return
        full = ".".join((root_q, *parts))
        if self.owns(full) and not self.unmapped_use(ref, full):
            self.note_human(ref.line, f"{ref.text} ({full}) has no known TF 2.21 replacement; "
                                      f"{self.GONE}: rewrite this by hand")

    def _express(self, ref: Reference, root_q: str, new_q: str, row: Row) -> str:
        """`new_q` as the output spells it at `ref`: relative to the root's final binding,
        through another module-level alias, or in full with its module imported."""
        finals = {self.run.bound(b) for b in ref.bindings}
        base = finals.pop() if len(finals) == 1 else root_q
        if new_q == base:
            return ref.root
        if new_q.startswith(base + "."):
            return ref.root + new_q[len(base):]
        for prefix in _prefixes(new_q):  # another module-level alias of the target, longest first
            alias = self.run.visible_alias(ref, prefix)
            if alias is not None:
                return alias + new_q[len(prefix):]
        self.run.add_import(self, row.import_module)
        if root_q.startswith(tuple(self.FAMILY)):  # the chain's root may now be unused
            self.run.remove_unused_by_reference(self, ref)
        return new_q


def _prefixes(qname: str) -> list:
    parts = qname.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]



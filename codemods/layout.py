"""The module's statements as they will be once every rewrite is applied: what insertion rules anchor on.

`disable_v2_behavior` goes after the first group of TensorFlow imports and `legacy_keras`
before the first statement that imports TensorFlow, both judged on the *final* imports (a
`tensorflow.contrib.slim` import that becomes `tf_slim` no longer counts as TensorFlow; an
`import tf1clip` a rewrite adds does). `Layout` lists the module's statements (and, on demand,
a block's) with the shape of their imports after the edits, places the imports rules asked
for the way libcst's AddImportsVisitor places them (after the first block of import lines,
past a docstring, a blank line before what follows), and takes the insertions
(`insert_after`, `insert_before`) that `codemods.render` writes.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional

from codemods import imports as imports_mod
from codemods._usage import Usage, classify_modules, classify_qname
from codemods.nodes import COMPOUND, Stmt, blocks_of, one_string_token


@dataclass(eq=False)
class Entry:
    """A statement of a block after the edits: an original line (or a part split from one), or added."""

    stmt: Optional[Stmt]               # the original statement it is (or came from); None: added
    small: list = field(default_factory=list)   # its small statements: imports.Part or ast.stmt
    compound: bool = False
    derived: bool = False              # a line split from `stmt`'s import (rendered with it)
    text: Optional[str] = None         # an added statement's code (no indentation, no newline)
    line: int = 0                      # the input line a note about it names
    blank_before: bool = False         # AddImportsVisitor gave it a blank leading line
    lead_to: Optional["Entry"] = None  # its leading lines moved to this entry (legacy_keras)
    lead_from: Optional["Entry"] = None
    lead_prefix_from: Optional["Entry"] = None   # copies the blank lines heading that entry's lead
    inner_modules: list = field(default_factory=list)  # a compound: what the imports inside it import
    after: Optional["Entry"] = None    # an inserted statement: the one it follows

    # what the rules ask about a statement
    @property
    def simple(self) -> bool:
        return not self.compound

    def parts(self) -> list:
        return [s for s in self.small if isinstance(s, imports_mod.Part)]

    @property
    def single_import(self) -> bool:
        """libcst's `SimpleStatementLine(body=[Import() | ImportFrom()])`: one small statement, an import."""
        return self.simple and len(self.small) == 1 and isinstance(self.small[0], imports_mod.Part)

    def modules(self, deep: bool = False) -> list:
        """Dotted modules its imports import (`deep`: also the imports inside a compound statement)."""
        out = [m for part in self.parts() for m in part.modules]
        if deep and self.compound and self.stmt is not None:
            out += self.inner_modules
        return out

    def imports_any(self, packages: Iterable[str], deep: bool = True) -> bool:
        packages = tuple(packages)
        return any(m == p or m.startswith(p + ".") for m in self.modules(deep) for p in packages)

    def import_line(self, packages: Iterable[str]) -> bool:
        """A simple line holding an import, of one of `packages`."""
        return self.simple and bool(self.parts()) and self.imports_any(packages, deep=False)

    def import_aliases(self) -> Iterator[tuple]:
        """(dotted name, asname) of each `import` alias on this line."""
        for part in self.parts():
            if part.kind == "import":
                for alias in part.aliases:
                    yield alias.name, alias.asname


class Layout:
    """The module body (and blocks) after the edits, with the insertions rules ask for."""

    def __init__(self, run):
        self.run = run
        self.file = run.file
        self.removed = self._removed_aliases()
        self.shapes = {}                        # id(ImportStmt) -> [Part]
        for imp in self.file.imports:
            plans_touch = any(id(a) in run.alias_plans or id(a) in self.removed for a in imp.aliases)
            if plans_touch or id(imp) in run.from_modules:
                self.shapes[id(imp)] = imports_mod.rewrite(imp, run.alias_plans, run.from_module(imp),
                                                           self.removed)
        self._imports_by_stmt = {id(imp.node): imp for imp in self.file.imports}
        self.removed_stmts: set = set()
        self.body = self._entries(self.file.body)
        self._blocks: dict = {}
        self._final_usage: Optional[Usage] = None
        self._add_imports()

    # -- what gets removed ----------------------------------------------------------------------------
    def _removed_aliases(self) -> set:
        run = self.run
        removed = set()
        if not run.unused_keys:
            return removed
        for imp in self.file.imports:
            for alias in imp.aliases:
                plan = run.alias_plans.get(id(alias))
                if not (plan is not None and plan.kind == "move") and run.will_remove(alias):
                    removed.add(id(alias))
        return removed

    # -- entries ----------------------------------------------------------------------------------------
    def _entries(self, block: list) -> list:
        entries, i = [], 0
        while i < len(block):
            group = [block[i]]
            stmt = self.file.stmt(block[i])
            while i + len(group) < len(block) and self.file.stmt(block[i + len(group)]).first <= \
                    self.file.stmt(group[-1]).last and not isinstance(block[i + len(group)], COMPOUND):
                group.append(block[i + len(group)])
            i += len(group)
            if isinstance(group[0], COMPOUND):
                entry = Entry(stmt, [], True, line=stmt.node.lineno)
                entry.inner_modules = self._deep_modules(group[0])
                entries.append(entry)
                continue
            small = []
            for node in group:
                imp = self._imports_by_stmt.get(id(node))
                if imp is None:
                    small.append(node)
                elif id(imp) in self.shapes:
                    small.extend(self.shapes[id(imp)])
                else:
                    small.append(imports_mod.Part("import", None, [imports_mod.Alias(a.index, a.name, a.asname)
                                                                    for a in imp.aliases]) if imp.is_import else
                                 imports_mod.Part("from", imp.node.module, [imports_mod.Alias(a.index, a.name, a.asname)
                                                                            for a in imp.aliases],
                                                  relative=imp.node.level, star=imp.star))
            if not small:
                self.removed_stmts.update(id(node) for node in group)  # every import on the line removed
                continue
            if len(group) == 1 and len(small) > 1:  # one import became several lines
                entries.append(Entry(stmt, small[:1], line=stmt.node.lineno))
                entries += [Entry(stmt, [s], derived=True, line=stmt.node.lineno) for s in small[1:]]
            else:
                entries.append(Entry(stmt, small, line=stmt.node.lineno))
        return entries

    def _deep_modules(self, node: ast.stmt) -> list:
        out = []
        for block in blocks_of(node):
            for entry in self._entries(block):
                out += entry.modules(deep=True)
        return out

    def blocks(self) -> Iterator[tuple]:
        """(owner statement, entries, in a def or class body) for every indented block, in
        libcst's leave order; blocks on their header's line (`try: import x`) are not indented."""
        for owner, block in self.file.all_blocks():
            if self.file.shares_line(self.file.stmt(block[0])):
                continue
            key = id(block)
            if key not in self._blocks:
                self._blocks[key] = self._entries(block)
            in_def = isinstance(owner.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and block is owner.node.body
            yield owner, self._blocks[key], in_def

    # -- AddImportsVisitor -------------------------------------------------------------------------------
    def _add_imports(self) -> None:
        groups: dict = {}
        for order, module in self.run.added:
            groups.setdefault(order, []).append(module)
        for order in sorted(groups):  # one AddImportsVisitor run after each rule, in order
            self._add_group(sorted(set(groups[order])))

    def _add_group(self, modules: list) -> None:
        body = self.body
        start = 1 if body and self._docstring_or_strict(body[0]) else 0
        at = start
        while at < len(body) and body[at].single_import:
            at += 1
        present = {alias.name for entry in body[start:at] for part in entry.parts() if part.kind == "import"
                   for alias in part.aliases if alias.asname is None}
        new = [m for m in modules if m not in present]
        if not new:
            return
        line = self._line_before(body, at)
        added = [Entry(None, [imports_mod.Part("import", None, [imports_mod.Alias(None, m, None)], False)],
                       text=f"import {m}", line=line) for m in new]
        after = body[at:]
        if after:
            nxt = after[0]
            lead = self._lead_lines(nxt)
            if not nxt.blank_before and (not lead or lead[0].lstrip().startswith("#")):
                nxt.blank_before = True
        body[at:at] = added

    def _line_before(self, body: list, at: int) -> int:
        """The input line an added statement at `at` stands for: the removed import it takes the
        place of, else the next statement's (the line a diff of the two texts pairs it with)."""
        following = next((e.stmt for e in body[at:] if e.stmt is not None), None)
        index = following.index if following is not None else len(self.file.body)
        if index > 0 and id(self.file.body[index - 1]) in self.removed_stmts:
            return self.file.stmt(self.file.body[index - 1]).first
        if following is not None:
            return following.first
        return self.file.stmt(self.file.body[-1]).last if self.file.body else 1

    def _docstring_or_strict(self, entry: Entry) -> bool:
        """AddImportsVisitor's `_skip_first`: a docstring (one plain string) or `__strict__ = ...` first."""
        if entry.compound or entry.stmt is None or len(entry.small) != 1:
            return False
        node = entry.small[0]
        if isinstance(node, ast.Assign):
            return any(isinstance(t, ast.Name) and t.id == "__strict__" for t in node.targets) and len(node.targets) == 1
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, (str, bytes)):
            return one_string_token(self.file.segment(entry.stmt.first, entry.stmt.last + 1))
        return False

    def _lead_lines(self, entry: Entry) -> list:
        if entry.stmt is None or entry.derived:
            return []
        first, end = self.file.leading_lines(entry.stmt)
        return self.file.lines[first - 1:end - 1]

    # -- names in the output -----------------------------------------------------------------------------
    def final_usage(self) -> Usage:
        """The classification (`codemods._usage`) of the output, as a rule run after the others'
        rewrites saw it: `tf.app.flags` is TF 1 evidence, `tf.app.flags` once `tf` is
        `tensorflow.compat.v1` is not."""
        usage = Usage()
        for imp in self.file.imports:
            parts = self.shapes.get(id(imp))
            modules = [m for part in parts for m in part.modules] if parts is not None else imp.modules
            classify_modules(usage, modules, imp.line)
        classify_modules(usage, [module for _, module in self.run.added], 0)
        for line, text, qname in self.final_names():
            classify_qname(usage, qname, text, line)
        usage.tf1.sort(key=lambda t: t[0])
        usage.tf2.sort(key=lambda t: t[0])
        return usage

    def final_names(self) -> Iterator[tuple]:
        """(line, text, qualified name) of every use of an imported name in the output, in source
        order, the outermost link of a dotted name first (the order libcst's walk visits them;
        names inside import statements have no scope there, so they are not uses)."""
        run = self.run
        for ref in self.file.references:
            yield from self._reference_names(ref)

    def _reference_names(self, ref) -> Iterator[tuple]:
        edit = self.run.edit_of(ref)
        if edit is None:
            text = [ref.root, *ref.parts]
            bases = {self.run.bound(b) for b in ref.bindings} - {None}
            qnames = [[*base.split("."), *ref.parts] for base in sorted(bases)]
        else:
            text = [*edit.text.split("."), *ref.parts[edit.parts:]]
            if edit.qname is not None:
                qnames = [[*edit.qname.split("."), *ref.parts[edit.parts:]]]
            elif text[0] == ref.root:
                bases = {self.run.bound(b) for b in ref.bindings} - {None}
                qnames = [[*base.split("."), *text[1:]] for base in sorted(bases)]
            else:
                qnames = [list(text)]
        for k in range(len(text), 0, -1):
            drop = len(text) - k
            for qname in qnames:
                if len(qname) > drop:
                    yield ref.line, ".".join(text[:k]), ".".join(qname[:len(qname) - drop])

    # -- insertions ------------------------------------------------------------------------------------
    def insert_after(self, entries: list, anchor: Entry, code: str, rule: str) -> Entry:
        """A new statement `code` right after `anchor` in `entries` (a block or the module body)."""
        at = entries.index(anchor) + 1
        while at < len(entries) and entries[at].derived:
            at += 1
        entry = Entry(None, [], text=code, line=anchor.line, after=anchor)
        entries.insert(at, entry)
        self.run.inserted.append((entries, entry))
        return entry

    def insert_before(self, anchor: Entry, codes: list, rule: str) -> list:
        """New module-level statements before `anchor`, as libcst's legacy-Keras insertion did:
        before a simple statement they take its leading lines (its comments now head them);
        before a compound one they take a copy of the blank lines ahead of its first comment."""
        at = self.body.index(anchor)
        new = [Entry(None, [], text=code, line=anchor.line) for code in codes]
        if new:
            if anchor.simple:
                new[0].lead_from = anchor
                anchor.lead_to = new[0]
            else:
                new[0].lead_prefix_from = anchor
        self.body[at:at] = new
        return new

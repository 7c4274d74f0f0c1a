"""What becomes of an import statement once every rule's import edits are applied.

Rules edit imports alias by alias (`Run.rename_alias`, `move_alias`, `set_from_module`,
`remove_if_unused`), and several rules may edit different aliases of one statement.
`rewrite` applies those plans in the order libcst's codemod helpers applied them when each
rule was its own pass, so the result is the same text:

1. a table rule's renames (`import tensorflow.contrib.slim as slim` → `import tf_slim as slim`;
   duplicates dropped and commas mended), or its moves (`from tensorflow.contrib.rnn import
   LSTMStateTuple` → a new `from tensorflow.compat.v1.nn.rnn_cell import ...` line, the aliases
   without a row kept in the original statement);
2. aliases nothing uses any more, removed as `RemoveImportsVisitor` removes them (a removed
   alias' comma whitespace merged into the previous one; no alias left: no statement);
3. the compat rule's own renames and `from` module changes, and numpy2's new names for the
   names NumPy 2 removed (`retarget`).

With `small=None` it computes only the shape (modules and names, for `codemods.layout`); with
a libcst node it builds the new nodes from the statement's own ones, so what stays keeps its
commas, comments and parentheses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from codemods._base import make_dotted


@dataclass(frozen=True)
class AliasPlan:
    """One rule's decision for one alias."""

    rule: str
    kind: str                     # "rename": `import X [as Y]`, X becomes `name`; "move": into a new line;
                                  # "retarget": `from M import X [as Y]`, X becomes `name` (bound to `asname`)
    name: str                     # rename: the new dotted name; move: the parent module ("": `import last`)
    last: str = ""                # move: the name imported from `name`
    asname: Optional[str] = None  # move: the name it stays bound to
    table: bool = False           # made by a table rule (step 1) rather than the compat rule (step 3)


@dataclass
class Alias:
    index: Optional[int]          # position in the original statement (None: new)
    name: str
    asname: Optional[str]
    node: Optional[cst.ImportAlias] = None


@dataclass
class Part:
    """One statement that stands in the import's place."""

    kind: str                     # "import" or "from"
    module: Optional[str]         # for "from" (None when relative without a module)
    aliases: list = field(default_factory=list)
    original: bool = True         # the original statement (its kept aliases), else a new line
    relative: int = 0
    star: bool = False
    node: Optional[cst.CSTNode] = None

    @property
    def modules(self) -> list:
        """What the part imports, as `import_module_names` sees it."""
        if self.kind == "import":
            return [a.name for a in self.aliases]
        return [self.module] if self.module and not self.relative else []


def rewrite(imp, plans: dict, from_module: Optional[str], removed: set,
            small: Optional[cst.CSTNode] = None) -> list:
    """The Parts replacing import statement `imp` (a `codemods.nodes.ImportStmt`) under
    `plans` (id(alias) -> AliasPlan), a new `from` module and the `removed` alias ids; with
    `small` (the statement's libcst node) each part also carries its libcst node."""
    originals = list(small.names) if small is not None and not isinstance(small.names, cst.ImportStar) else None
    aliases = [Alias(a.index, a.name, a.asname, originals[a.index] if originals else None) for a in imp.aliases]
    by_index = {a.index: a for a in imp.aliases}
    if imp.is_import:
        return _rewrite_import(aliases, by_index, plans, removed, small)
    return _rewrite_from(imp, aliases, by_index, plans, from_module, removed, small)


def _rewrite_import(aliases, by_index, plans, removed, small) -> list:
    table = [(a, plans.get(id(by_index[a.index]))) for a in aliases]
    if any(plan is not None and plan.table for _, plan in table):
        out, seen = [], set()
        for alias, plan in table:
            if plan is not None and plan.table:
                alias = _renamed(alias, plan.name)
            if (alias.name, alias.asname) not in seen:  # _rename.py's _dedupe
                seen.add((alias.name, alias.asname))
                out.append(alias)
        aliases = _fix_commas(out)
    aliases = _remove(aliases, by_index, removed)
    if not aliases:
        return []
    for i, alias in enumerate(aliases):
        plan = plans.get(id(by_index[alias.index])) if alias.index is not None else None
        if plan is not None and not plan.table:
            aliases[i] = _renamed(alias, plan.name)
    part = Part("import", None, aliases)
    if small is not None:
        part.node = small.with_changes(names=[a.node for a in aliases])
    return [part]


def _rewrite_from(imp, aliases, by_index, plans, from_module, removed, small) -> list:
    node = imp.node
    module = node.module
    if imp.star:
        part = Part("from", from_module or module, [], True, node.level, star=True)
        if small is not None:
            part.node = small if from_module is None else small.with_changes(module=make_dotted(from_module))
        return [part]
    keep, moved = [], {}
    for alias in aliases:
        plan = plans.get(id(by_index[alias.index]))
        if plan is None or plan.kind != "move":
            keep.append(alias)
            continue
        bound = plan.asname or alias.asname or alias.name
        moved.setdefault(plan.name, []).append(Alias(None, plan.last, None if bound == plan.last else bound))
    lpar = None
    if moved and keep:
        keep = _fix_commas(keep)
    if keep:
        kept, lpar = _remove_from(keep, by_index, removed, small)
    else:
        kept = []
    kept = [_retargeted(a, plans.get(id(by_index[a.index]))) if a.index is not None else a for a in kept]
    parts = []
    if kept:
        part = Part("from", from_module or module, kept, True, node.level)
        if small is not None:
            changes = {"names": [a.node for a in kept]}
            if lpar is not None:
                changes["lpar"] = lpar
            if from_module is not None:
                changes["module"] = make_dotted(from_module)
            part.node = small.with_changes(**changes)
        parts.append(part)
    for parent, names in moved.items():
        if small is not None:
            for alias in names:
                alias.node = cst.ImportAlias(name=make_dotted(alias.name) if not parent else cst.Name(alias.name),
                                             asname=cst.AsName(name=cst.Name(alias.asname)) if alias.asname else None)
            names = _fix_commas(names)
        part = Part("from", parent, names, False) if parent else Part("import", None, names, False)
        if small is not None:
            nodes = [a.node for a in names]
            part.node = cst.ImportFrom(module=make_dotted(parent), names=nodes) if parent else cst.Import(names=nodes)
        parts.append(part)
    return parts


def _retargeted(alias: Alias, plan) -> Alias:
    """numpy2's `from numpy import float_` → `from numpy import float64 as float_` (step 3)."""
    if plan is None or plan.kind != "retarget":
        return alias
    node = alias.node.with_changes(name=cst.Name(plan.name), asname=cst.AsName(name=cst.Name(plan.asname))) \
        if alias.node is not None else None
    return Alias(alias.index, plan.name, plan.asname, node)


def _renamed(alias: Alias, dotted: str) -> Alias:
    node = alias.node.with_changes(name=make_dotted(dotted)) if alias.node is not None else None
    return Alias(alias.index, dotted, alias.asname, node)


def _remove(aliases, by_index, removed) -> list:
    """RemoveImportsVisitor.leave_Import: drop the removed aliases; the new last loses its comma."""
    keep = [a for a in aliases if a.index is None or id(by_index[a.index]) not in removed]
    if keep and len(keep) != len(aliases) and keep[-1] is not aliases[-1] and keep[-1].node is not None:
        keep[-1] = Alias(keep[-1].index, keep[-1].name, keep[-1].asname,
                         keep[-1].node.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return keep


def _remove_from(aliases, by_index, removed, small):
    """RemoveImportsVisitor._process_importfrom_aliases + leave_ImportFrom."""
    lpar = None
    keep = []
    for alias in aliases:
        if alias.index is None or id(by_index[alias.index]) not in removed:
            keep.append(alias)
            continue
        comma = alias.node.comma if alias.node is not None else None
        if isinstance(comma, cst.Comma):
            if keep:
                prev = keep[-1]
                if isinstance(prev.node.comma, cst.Comma):
                    node = prev.node.with_deep_changes(prev.node.comma, whitespace_after=_merge_whitespace_after(
                        prev.node.comma.whitespace_after, comma.whitespace_after))
                else:
                    node = prev.node.with_changes(comma=comma)
                keep[-1] = Alias(prev.index, prev.name, prev.asname, node)
            elif small is not None and isinstance(small.lpar, cst.LeftParen):
                lpar = small.lpar.with_changes(whitespace_after=_merge_whitespace_after(
                    small.lpar.whitespace_after, comma.whitespace_after))
    if keep and len(keep) != len(aliases) and keep[-1].index != aliases[-1].index and keep[-1].node is not None:
        keep[-1] = Alias(keep[-1].index, keep[-1].name, keep[-1].asname,
                         keep[-1].node.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return keep, lpar


def _merge_whitespace_after(left, right):
    """RemoveImportsVisitor's: a removed alias' line break keeps the comments on it."""
    if not isinstance(right, cst.ParenthesizedWhitespace):
        return left
    if not isinstance(left, cst.ParenthesizedWhitespace):
        return right
    return left.with_changes(empty_lines=tuple(line for line in right.empty_lines if line.comment is not None))


def _fix_commas(aliases: list) -> list:
    """_rename.py's: a comma and a space after every alias but the last, none after the last."""
    out = []
    for i, alias in enumerate(aliases):
        node = alias.node
        if node is not None:
            if i == len(aliases) - 1:
                node = node.with_changes(comma=cst.MaybeSentinel.DEFAULT)
            elif node.comma == cst.MaybeSentinel.DEFAULT or node.comma is None:
                node = node.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        out.append(Alias(alias.index, alias.name, alias.asname, node))
    return out

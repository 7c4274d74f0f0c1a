"""Writing the edits: libcst on the statements that change, the rest of the file as it was.

A statement that an edit touches is re-parsed with libcst on its own (with the statements
sharing its lines; a compound statement when the edit is in its header), wrapped in
`if True:` when it is indented so that its lines parse unchanged; the edits are applied to
its libcst nodes and it is printed back. Everything else is the input's own text, so the
output keeps every formatting detail, and a file costs one `ast` parse plus libcst on the few
lines that change. Module-level insertions follow `codemods.layout`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst.helpers import get_full_name_for_node

from codemods._base import make_dotted
from codemods import imports as imports_mod
from codemods.errors import EngineError
from codemods.nodes import COMPOUND, Stmt, dotted

_WRAPPER = "if True:"


@dataclass(eq=False)
class Unit:
    first: int                       # its lines, [first, last]
    last: int
    stmts: list                      # the ast statements it holds (one compound, or a line group)
    compound: bool
    edits: list = field(default_factory=list)     # ChainEdits inside
    calls: list = field(default_factory=list)     # NodeEdits inside (of calls and attributes)
    imports: list = field(default_factory=list)   # ImportStmts inside whose shape changes
    text: Optional[str] = None


def render(run, layout) -> str:
    file = run.file
    units = _units(run, layout)
    replaced: dict = {}              # first line -> (last line, text)
    dropped: set = set()             # lines dropped with a removed statement (its leading lines)
    for unit in units:
        unit.text = _render_unit(run, layout, unit)
        replaced[unit.first] = (unit.last, unit.text)
        if unit.text == "" and not unit.compound:
            first = file.stmt(unit.stmts[0])
            start, end = file.leading_lines(first)
            dropped.update(range(start, end))
    after_line: dict = {}            # nested insertions: line -> [text]
    for entries, entry in run.inserted:
        if entries is layout.body:
            continue
        anchor = entry.after
        last = _group_last(file, anchor.stmt)
        after_line.setdefault(last, []).append(file.indent_of(anchor.stmt) + entry.text + file.newline)

    def region(first: int, end: int) -> str:
        """Lines [first, end) with unit replacements and nested insertions applied."""
        out, line = [], first
        while line < end:
            if line in dropped:
                line += 1
                continue
            hit = replaced.get(line)
            if hit is not None:
                out.append(hit[1])
                last = hit[0]
                for l in range(line, last + 1):
                    out.extend(after_line.get(l, ()))
                line = last + 1
                continue
            out.append(file.lines[line - 1])
            out.extend(after_line.get(line, ()))
            line += 1
        return "".join(out)

    body = file.body
    if not body:
        return file.text
    nl = file.newline
    out = [region(1, file.stmt(body[0]).first)]  # the module header
    last_stmt = file.stmt(body[-1])
    for entry in layout.body:
        if entry.stmt is None:
            if entry.lead_from is not None:
                out.append(_lead_text(file, entry.lead_from, nl))
            if entry.lead_prefix_from is not None:
                lead = _lead_text(file, entry.lead_prefix_from, nl).splitlines(keepends=True)
                cut = next((i for i, l in enumerate(lead) if l.lstrip(" \t\f").startswith("#")), len(lead))
                out.append("".join(lead[:cut]))
            out.append(entry.text + nl)
            continue
        if entry.derived:
            continue
        stmt = entry.stmt
        if entry.lead_to is None:
            out.append(_lead_text(file, entry, nl, region))
        group_end = _group_last(file, stmt)
        if stmt.node is last_stmt.node or _in_group(file, stmt, last_stmt):
            end = group_end + 1
        else:
            nxt = file.stmt(stmt.block[stmt.block.index(_group_nodes(file, stmt)[-1]) + 1])
            end = file.leading_lines(nxt)[0]
        out.append(region(stmt.first, end))
    out.append(region(last_stmt.last + 1, len(file.lines) + 1))  # the module footer
    return "".join(out)


def _lead_text(file, entry, nl: str, region=None) -> str:
    if entry.stmt is None:
        return nl if entry.blank_before else ""
    start, end = file.leading_lines(entry.stmt)
    text = region(start, end) if region is not None else "".join(file.lines[start - 1:end - 1])
    return (nl if entry.blank_before else "") + text


def _group_nodes(file, stmt: Stmt) -> list:
    """`stmt` and the statements sharing its lines (one libcst SimpleStatementLine)."""
    block, i = stmt.block, stmt.index
    while i > 0 and not isinstance(block[i], COMPOUND) and file.stmt(block[i]).first <= file.stmt(block[i - 1]).last:
        i -= 1
    group = [block[i]]
    while i + len(group) < len(block) and not isinstance(block[i + len(group)], COMPOUND) and \
            file.stmt(block[i + len(group)]).first <= file.stmt(group[-1]).last:
        group.append(block[i + len(group)])
    return group


def _group_last(file, stmt: Stmt) -> int:
    return file.stmt(_group_nodes(file, stmt)[-1]).last


def _in_group(file, stmt: Stmt, other: Stmt) -> bool:
    return other.node in _group_nodes(file, stmt)


# -- which statements get re-parsed -------------------------------------------------------------------
def _units(run, layout) -> list:
    file = run.file
    wanted: dict = {}                # id(first ast stmt of the unit) -> Unit

    def unit_for(stmt: Stmt) -> Unit:
        while True:
            if stmt.compound:
                nodes = [stmt.node]
                break
            nodes = _group_nodes(file, stmt)
            head = file.stmt(nodes[0])
            if head.parent is not None and head.index == 0 and file.shares_line(head):
                stmt = head.parent  # `if x: y` on one line: the compound is the unit
                continue
            break
        key = id(nodes[0])
        unit = wanted.get(key)
        if unit is None:
            head = file.stmt(nodes[0])
            unit = Unit(head.first, file.stmt(nodes[-1]).last, nodes, isinstance(nodes[0], COMPOUND))
            wanted[key] = unit
        return unit

    for edit in run.chain_edits.values():
        unit_for(edit.ref.stmt).edits.append(edit)
    for edit in run.node_edits.values():
        unit_for(edit.stmt).calls.append(edit)
    for imp in file.imports:
        if id(imp) in layout.shapes and _changes(imp, layout.shapes[id(imp)]):
            unit_for(imp.stmt).imports.append(imp)
    units = sorted(wanted.values(), key=lambda u: (u.first, -u.last))
    merged: list = []
    for unit in units:  # a compound unit holds the units inside its lines
        if merged and unit.last <= merged[-1].last and merged[-1].compound:
            merged[-1].edits += unit.edits
            merged[-1].calls += unit.calls
            merged[-1].imports += unit.imports
            continue
        merged.append(unit)
    return merged


def _changes(imp, parts: list) -> bool:
    if len(parts) != 1 or not parts[0].original:
        return True
    part = parts[0]
    if part.kind == "from" and part.module != imp.node.module:
        return True
    return [(a.index, a.name, a.asname) for a in part.aliases] != [(a.index, a.name, a.asname) for a in imp.aliases]


# -- libcst on one unit -------------------------------------------------------------------------------
def _render_unit(run, layout, unit: Unit) -> str:
    file = run.file
    text = file.segment(unit.first, unit.last + 1)
    head = file.stmt(unit.stmts[0])
    indent = file.indent_of(head)
    source = (_WRAPPER + file.newline + text) if indent else text
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise EngineError(f"libcst cannot parse this statement: {exc.message}", unit.first + exc.raw_line -
                          (2 if indent else 1)) from None
    # where the edits land in the libcst tree: chains by their text and rank among the nodes
    # spelled the same (source order in both trees), imports by their rank
    targets: dict = {}
    expected: dict = {}
    for edit in unit.edits:
        text_of = edit.ref.prefix_text(edit.parts)
        if text_of not in expected:
            expected[text_of] = _ast_positions(unit.stmts, text_of)
        link = edit.ref.links[edit.parts - 1]
        targets.setdefault(text_of, {})[expected[text_of].index((link.lineno, link.col_offset))] = _expression(edit.text)
    # calls and attributes by their rank in source order among their kind (libcst visits an
    # outer node before the nodes in it)
    ranked = {kind: _ranked(unit.stmts, kind) for kind in (ast.Call, ast.Attribute)
              if any(isinstance(edit.node, kind) for edit in unit.calls)}
    calls, attributes = _by_rank(unit.calls, ranked.get(ast.Call, ())), _by_rank(unit.calls, ranked.get(ast.Attribute, ()))
    ast_imports = sorted((n for s in unit.stmts for n in ast.walk(s) if isinstance(n, (ast.Import, ast.ImportFrom))),
                         key=lambda n: (n.lineno, n.col_offset))
    by_node = {id(imp.node): imp for imp in unit.imports}
    imports = [by_node.get(id(node)) for node in ast_imports]

    def rewrite(imp, node):
        parts = imports_mod.rewrite(imp, run.alias_plans, run.from_module(imp),
                                    layout.removed, node)
        return [(p.node, p.original) for p in parts]

    apply = _Apply(targets, imports, rewrite, calls, attributes)
    new = module.visit(apply)
    if any(apply.seen.get(t, 0) != len(positions) for t, positions in expected.items()) or \
            (calls and apply.call_rank != len(ranked[ast.Call])) or \
            (attributes and apply.attribute_rank != len(ranked[ast.Attribute])):
        raise EngineError("could not place a rewrite (libcst and Python disagree on this statement); "
                          "file left unchanged, please report this", unit.first)
    if not (new.body[0].body.body if indent else new.body):
        return ""  # every statement of the unit removed (libcst would print `pass` in the wrapper)
    code = new.code
    return code[len(_WRAPPER) + len(file.newline):] if indent else code


def _ranked(stmts: list, kind) -> list:
    """The `kind` nodes of `stmts` in libcst's visiting order: source order, outer first."""
    return sorted((n for s in stmts for n in ast.walk(s) if isinstance(n, kind)),
                  key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset))


def _by_rank(edits: list, ranked: list) -> dict:
    """{rank of its node among `ranked`: NodeEdit.make} for the edits of nodes in `ranked`."""
    rank = {id(node): i for i, node in enumerate(ranked)}
    return {rank[id(edit.node)]: edit.make for edit in edits if id(edit.node) in rank}


def _expression(text: str):
    """A dotted name as libcst builds it (`make_dotted`), any other expression parsed."""
    if all(part.isidentifier() for part in text.split(".")):
        return make_dotted(text)
    return cst.parse_expression(text)


def _ast_positions(stmts: list, text: str) -> list:
    found = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and dotted(node) == text:
                found.append((node.lineno, node.col_offset))
    found.sort()
    return found


def _pure(node) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


class _Apply(cst.CSTTransformer):
    """One pass over a unit: rename the targeted dotted names, rewrite the changed imports."""

    def __init__(self, targets: dict, imports: list, rewrite, calls: dict, attributes: dict):
        super().__init__()
        self.calls = calls                         # rank among the unit's calls -> NodeEdit.make
        self.call_rank = 0
        self.attributes = attributes               # rank among the unit's attributes -> NodeEdit.make
        self.attribute_rank = 0
        self.node_makes: dict = {}                 # libcst Call / Attribute -> NodeEdit.make
        self.targets = targets                     # text -> {rank: new expression}
        self.lasts = {t.rpartition(".")[2] for t in targets}
        self.seen: dict = {}                       # text -> how many nodes spell it
        self.attrs: dict = {}                      # libcst node -> new expression
        self.import_plans = imports                # per import in source order: ImportStmt or None
        self.imports: dict = {}                    # libcst small statement -> [(node, original)]
        self.rank = 0
        self.rewrite = rewrite

    def visit_Attribute(self, node) -> None:
        if self.attributes:
            make = self.attributes.get(self.attribute_rank)
            if make is not None:
                self.node_makes[node] = make
            self.attribute_rank += 1
        if node.attr.value in self.lasts:
            name = get_full_name_for_node(node)
            wanted = self.targets.get(name)
            if wanted is not None and _pure(node):
                rank = self.seen.get(name, 0)
                self.seen[name] = rank + 1
                if rank in wanted:
                    self.attrs[node] = wanted[rank]

    def leave_Attribute(self, original_node, updated_node):
        make = self.node_makes.get(original_node)
        updated_node = self.attrs.get(original_node, updated_node)
        return updated_node if make is None else make(updated_node)

    def visit_Call(self, node) -> None:
        if self.calls:
            make = self.calls.get(self.call_rank)
            if make is not None:
                self.node_makes[node] = make
            self.call_rank += 1

    def leave_Call(self, original_node, updated_node):
        make = self.node_makes.get(original_node)
        return updated_node if make is None else make(updated_node)

    def _import(self, node) -> bool:
        imp = self.import_plans[self.rank] if self.rank < len(self.import_plans) else None
        self.rank += 1
        if imp is not None:
            self.imports[node] = self.rewrite(imp, node)
        return False

    def visit_Import(self, node) -> bool:
        return self._import(node)

    def visit_ImportFrom(self, node) -> bool:
        return self._import(node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not any(s in self.imports for s in original_node.body):
            return updated_node
        body, moved = [], False
        for old, new in zip(original_node.body, updated_node.body):
            replacement = self.imports.get(old)
            if replacement is None:
                body.append(new)
                continue
            body.extend(node for node, _ in replacement)
            moved = moved or any(not original for _, original in replacement)
        if not body:
            return cst.RemoveFromParent()
        if len(original_node.body) == 1 and len(body) > 1:
            # one import became several: one line each, the first keeps comments and blank lines
            first = updated_node.with_changes(body=[_no_semicolon(body[0])])
            return cst.FlattenSentinel([first, *(cst.SimpleStatementLine(body=[_no_semicolon(b)]) for b in body[1:])])
        if moved:  # the table rules' rewrite of a line: "; " between its statements, none after the last
            body = [b.with_changes(semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
                    if i < len(body) - 1 else _no_semicolon(b) for i, b in enumerate(body)]
        return updated_node.with_changes(body=body)

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        if not any(s in self.imports for s in original_node.body):
            return updated_node
        body = []
        for old, new in zip(original_node.body, updated_node.body):
            body.extend([node for node, _ in self.imports[old]] if old in self.imports else [new])
        if not body:
            return updated_node.with_changes(body=[cst.Pass()])
        return updated_node.with_changes(body=body)


def _no_semicolon(stmt):
    return stmt.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)

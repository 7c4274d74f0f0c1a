"""The syntax of the script: names, targets and statements, read off libcst nodes.

What the readers of the program ask of the code itself, before any meaning: the names an
expression uses (`names_of`, `name_counts`), the names an assignment or loop binds
(`target_names`, `bound_names`), the statements under a node (`walk_statements`,
`assignments`), what a statement changes in place (`changed_names`, `values_put_into`), a
function's locals, the names generated code must not take, and names replaced by expressions
(`replace_names`). Nothing here knows TensorFlow or the model.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.children import children
from codemods.tf2._base import NameTransformer, code
from codemods.tf2._base import walk as _walk


def walk_nodes(node):
    """Every node under `node`, itself first."""
    return _walk(node)


def names_of(node) -> set:
    """Every name of the scope used under `node` (attribute members and keywords are not names)."""
    return set(name_counts(node))


def name_nodes(node) -> list:
    """The Name nodes of the scope under `node` (attribute members and keywords are not), as `name_counts`
    counts them."""
    out: list = []
    stack = [node]
    while stack:
        n = stack.pop()
        kind = type(n)  # these three classes have no subclasses: `is` instead of libcst's abstract isinstance
        if kind is cst.Name:
            out.append(n)
        elif kind is cst.Attribute or kind is cst.Arg:
            stack.append(n.value)  # an attribute's member is not a name, nor is a keyword
        else:
            stack.extend(children(n))
    return out


def name_counts(node) -> dict:
    """How many times each name of the scope is used under `node`."""
    out: dict = {}
    for n in name_nodes(node):
        out[n.value] = out.get(n.value, 0) + 1
    return out


def target_names(target) -> list:
    """The names an assignment or `for` target binds, in order (`a, (b, *c)` → a, b, c)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in target_names(el.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def _target_names(target) -> set:
    return set(target_names(target))


def walk_statements(node):
    """Every statement under `node` (compound ones and their blocks included), in source order.
    Only the nodes that can hold a statement are entered: no expression can (a lambda's body is
    an expression), so the walk skips the bulk of a tree."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            yield n
            if type(n) is cst.SimpleStatementLine:  # its small statements hold none
                continue
        below = [c for c in children(n) if isinstance(c, _HOLDS_STATEMENTS)]
        below.reverse()
        stack.extend(below)


# the nodes a statement can be found under: blocks, clauses, statements (`else:`, `except:`, `case`)
_HOLDS_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else,
                     cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase, cst.Module)


def assignments(st):
    """(target, value) of the assignments a simple statement line makes (for targets of `for`: value None)."""
    if isinstance(st, cst.SimpleStatementLine):
        for small in st.body:
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    yield t.target, small.value
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                yield small.target, None
    elif isinstance(st, cst.For):
        yield st.target, None


def bound_names(node) -> set:
    """Names a statement binds (assignment, for, with ... as, augmented assignment targets)."""
    out = set()
    for n in _walk(node):
        field = BINDING_FIELD.get(type(n))
        if field is not None:
            out |= _target_names(getattr(n, field))
    return out


# node class → its field that binds names (classes without subclasses: looked up by type, which a
# walk over every node does much faster than isinstance against libcst's abstract classes)
BINDING_FIELD = {cst.AssignTarget: "target", cst.AugAssign: "target", cst.AnnAssign: "target",
                  cst.For: "target", cst.AsName: "name", cst.NamedExpr: "target"}


# methods that change a list, dict or set in place
MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "add",
                      "discard", "sort", "reverse"})


def changed_names(node) -> set:
    """Names whose object a statement changes (`x.append(...)`, `x[i] = ...`, `x.a = ...`,
    `del x[i]`), and names it grows from their value before (`x += ...`, `x = x + [...]`)."""
    out = set()
    for n in _walk(node):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in MUTATORS \
                and isinstance(n.func.value, cst.Name):
            out.add(n.func.value.value)
        elif isinstance(n, cst.Assign):  # `x = x + [...]`: x grows from its value before
            out |= {t.target.value for t in n.targets if isinstance(t.target, cst.Name)} & names_of(n.value)
            for t in n.targets:
                target = t.target
                while isinstance(target, (cst.Attribute, cst.Subscript)):
                    target = target.value
                if isinstance(target, cst.Name) and target is not t.target:
                    out.add(target.value)
        elif isinstance(n, (cst.AugAssign, cst.Del)):
            target = n.target
            while isinstance(target, (cst.Attribute, cst.Subscript)):
                target = target.value
            if isinstance(target, cst.Name) and (target is not n.target or isinstance(n, cst.AugAssign)):
                out.add(target.value)
    return out


def values_put_into(node, name: str) -> list:
    """The argument nodes of every `name.<mutator>(...)` call under `node`, and values stored by
    `name[...] = value`."""
    out = []
    for n in _walk(node):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in MUTATORS \
                and isinstance(n.func.value, cst.Name) and n.func.value.value == name:
            out += [a.value for a in n.args]
        elif isinstance(n, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == name
                or isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name)
                and t.target.value.value == name for t in n.targets):
            out.append(n.value)
    return out


def new_literal(node, env: dict) -> bool:
    """`node` makes a new value that depends on nothing: a number, string, bool or None, or an empty
    list, tuple, dict or set (`[]`, `list()`)."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    if isinstance(node, (cst.List, cst.Tuple, cst.Dict)):
        return not node.elements
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and not node.args \
        and node.func.value in ("list", "dict", "set", "tuple") and node.func.value not in env


def parameter_names(params: cst.Parameters) -> set:
    """The names a function's or lambda's parameters bind (`*args` and `**kwargs` included)."""
    names = {p.name.value for p in [*params.params, *params.kwonly_params, *params.posonly_params]}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def function_locals(fn: cst.FunctionDef) -> set:
    params = parameter_names(fn.params)
    declared = set()
    for n in _walk(fn.body):
        if type(n) is cst.Global or type(n) is cst.Nonlocal:
            declared |= {a.name.value for a in n.names}
    return (params | bound_names(fn.body)) - declared


def taken_names(module: cst.Module) -> set:
    """Names generated code must not take: every name used outside the functions' own locals."""
    taken = set()
    for st in module.body:
        if isinstance(st, cst.FunctionDef):
            taken.add(st.name.value)
            taken |= names_of(st) - function_locals(st)
        else:
            taken |= names_of(st)
    return taken | {"tf", "np", "tape", "self"}


def is_literal(node: cst.BaseExpression) -> bool:
    """A plain constant: a number (negative too), a string, True, False or None."""
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString))


def is_main_guard(st: cst.If) -> bool:
    test = st.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    sides = {code(left), code(right)}
    return isinstance(test.comparisons[0].operator, cst.Equal) and "__name__" in sides and (
        "'__main__'" in sides or '"__main__"' in sides)


def comments_of(lines) -> list:
    """The comment lines of a statement's leading lines (its blank lines left out)."""
    return [line for line in lines if line.comment is not None]


def root_name(target) -> Optional[str]:
    """`a` of `a.b.c` / `a[0].b` (None for anything else)."""
    while isinstance(target, (cst.Attribute, cst.Subscript)):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


class Replace(NameTransformer):
    """Name `old` → `new` (loads and stores; attribute members and keywords are not names)."""

    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def leave_Name(self, original, updated):
        if self.skipped(original) or original.value not in self.mapping:
            return updated
        return self.mapping[original.value]


def replace_names(node, mapping: dict):
    return node.visit(Replace(mapping)) if mapping else node


def closed_under_calls(defs: dict, reaches) -> frozenset:
    """The names of `defs` (name → function or class node) whose body `reaches(body, found)` says yes
    for, where `found` is what is known so far: to a fixed point, so a function calling one of them is
    one too (`unroll`: functions that make state; `hoist`: functions that use TensorFlow)."""
    found: set = set()
    while True:
        more = {name for name, st in defs.items() if name not in found and reaches(st.body, found)}
        if not more:
            return frozenset(found)
        found |= more


def replace_statements(node, mapping: dict):
    """`node` with each statement that is a key of `mapping` (in any block under it) replaced by its value.
    Only the blocks and statements that hold a replaced one are new objects: every other node is the same
    object, so what is known of it by identity (its line) still holds."""
    if node in mapping:
        return mapping[node]
    changes = {}
    for name in ("body", "orelse", "finalbody", "handlers"):
        child = getattr(node, name, None)
        if isinstance(child, (list, tuple)):  # a module's body, a try's handlers
            new = [replace_statements(c, mapping) for c in child]
            if any(a is not b for a, b in zip(new, child)):
                changes[name] = new
        elif isinstance(child, cst.CSTNode):
            new = replace_statements(child, mapping)
            if new is not child:
                changes[name] = new
    return node.with_changes(**changes) if changes else node


def names_only(target) -> bool:
    """Is an assignment target names only (`a`, `a, (b, c)`)?"""
    if isinstance(target, cst.Name):
        return True
    return isinstance(target, (cst.Tuple, cst.List)) and all(names_only(e.value) for e in target.elements)


def plain_assign(st) -> bool:
    """Is `st` one plain assignment to names only (`W = ...`, `a, b = ...`)?"""
    return isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign) \
        and all(names_only(t.target) for t in st.body[0].targets)

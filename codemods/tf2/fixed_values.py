"""Values fixed in the file: what a name or an expression holds wherever the program reads it.

`unroll` asks which values a `for` binds, in order, when the file alone decides them: a list or tuple
literal of constants, a name bound exactly once (CPython's symbol tables count every binding, in
every scope) to such a list and only read (iterated, indexed, or given to `len`, `enumerate` or
`zip`: nothing can change it), and `range`, `len`, `enumerate`, `zip`, slices with fixed bounds
(`dims[1:]`, `dims[::-1]`) and `+ - *` of those. Never
imports TensorFlow.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst

from codemods.children import children
from codemods.tf2.syntax import assignments, is_literal, walk_nodes, walk_statements

MAX_PASSES = 64


@dataclass
class Fixed:
    """The file: its tree, each name's binding sites, the value of each name's first assignment."""
    module: cst.Module
    sites: dict
    values: dict
    reads: dict = field(default_factory=dict)  # name -> read only as an iterable, index or argument of a reader
    # calls known to change no argument, besides `len`, `enumerate` and `zip` (TensorFlow's: `tf.placeholder(
    # tf.float32, shape)` only reads `shape`); None: those three only
    reader: Optional[Callable] = None


def first_values(tree: cst.Module) -> dict:
    """name → the value of its first assignment in `tree` (what `once` reads)."""
    values: dict = {}
    for st in walk_statements(tree):
        for target, value in assignments(st):
            if isinstance(target, cst.Name) and value is not None:
                values.setdefault(target.value, value)
    return values


def once(fixed: Fixed, name: str):
    """The value of `name` when the file binds it exactly once, by an assignment; else None."""
    sites = fixed.sites.get(name, ())
    return fixed.values.get(name) if len(sites) == 1 and not sites[0].is_import else None


def constant(fixed: Fixed, node) -> bool:
    """A plain constant, or a name the file binds once to a number, or a tuple of those."""
    if is_literal(node):
        return True
    if isinstance(node, cst.Name):
        return isinstance(once(fixed, node.value), (cst.Integer, cst.Float))
    return isinstance(node, cst.Tuple) and all(constant(fixed, e.value) for e in node.elements)


def passes(fixed: Fixed, node) -> Optional[list]:
    """The values a `for` over `node` binds, in order, as expressions; None when not fixed in the fixed."""
    if isinstance(node, (cst.List, cst.Tuple)):
        if any(isinstance(e, (cst.StarredElement,)) or not constant(fixed, e.value) for e in node.elements):
            return None
        return [e.value for e in node.elements]
    if isinstance(node, cst.Name):
        bound = once(fixed, node.value)
        if not isinstance(bound, (cst.List, cst.Tuple)) or not _read_only(fixed, node.value):
            return None
        return passes(fixed, bound)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
        return _sliced(fixed, passes(fixed, node.value), node.slice[0].slice)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and _builtin(fixed, node.func.value) and \
            not any(a.keyword is not None or a.star for a in node.args):
        args = [a.value for a in node.args]
        if node.func.value == "range" and 1 <= len(args) <= 3:
            numbers = [number(fixed, a) for a in args]
            if None in numbers:
                return None
            return [cst.Integer(str(i)) for i in range(*numbers)] if len(range(*numbers)) <= MAX_PASSES else None
        if node.func.value == "enumerate" and len(args) == 1:
            inner = passes(fixed, args[0])
            return None if inner is None else [
                cst.Tuple([cst.Element(cst.Integer(str(i))), cst.Element(v)]) for i, v in enumerate(inner)]
        if node.func.value == "zip" and args:
            inners = [passes(fixed, a) for a in args]
            if any(i is None for i in inners):
                return None
            return [cst.Tuple([cst.Element(v) for v in vs]) for vs in zip(*inners)]
    return None


def _sliced(fixed: Fixed, values: Optional[list], part: cst.Slice) -> Optional[list]:
    """`values[lower:upper:step]` when each bound given is a number fixed in the file."""
    bounds = [None if b is None else number(fixed, b) for b in (part.lower, part.upper, part.step)]
    if values is None or any(b is None and given is not None for b, given in
                             zip(bounds, (part.lower, part.upper, part.step))) or bounds[2] == 0:
        return None
    return values[slice(*bounds)]


def number(fixed: Fixed, node) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, cst.Integer):
        return -int(node.expression.evaluated_value)
    if isinstance(node, cst.Name) and isinstance(once(fixed, node.value), cst.Integer):
        return int(once(fixed, node.value).evaluated_value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" and \
            _builtin(fixed, "len") and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
        inner = passes(fixed, node.args[0].value)
        return None if inner is None else len(inner)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        left, right = number(fixed, node.left), number(fixed, node.right)
        if left is None or right is None:
            return None
        return left + right if isinstance(node.operator, cst.Add) else (
            left - right if isinstance(node.operator, cst.Subtract) else left * right)
    return None


def literal_sequence(node) -> bool:
    """A list or tuple literal of plain constants (`[None, 784]`, `(3, 3)`)."""
    return isinstance(node, (cst.List, cst.Tuple)) and all(
        isinstance(e, cst.Element) and is_literal(e.value) for e in node.elements)


def read_only_in(body: list, name: str, reader=None) -> bool:
    """`name` is only read in the statements `body` (iterated, indexed, given to `len`, `enumerate` or
    `zip`, or to a call whose function `reader(func)` says changes no argument): nothing there can change
    what it holds."""
    return _read_only(Fixed(cst.Module(body=body), {}, {}, reader=reader), name)


def fixed_sequence(fixed: Fixed, node) -> Optional[cst.BaseExpression]:
    """The list or tuple literal of constants `node` holds wherever it is read: itself, or what a name the
    file binds once, by an assignment, and only reads, is bound to; else None."""
    if literal_sequence(node):
        return node
    if isinstance(node, cst.Name):
        bound = once(fixed, node.value)
        if literal_sequence(bound) and _read_only(fixed, node.value):
            return bound
    return None


def _read_only(fixed: Fixed, name: str) -> bool:
    """`name` is read nowhere in the file but as a loop's iterable, an indexed value, or an argument of
    `len`, `enumerate` or `zip` (or of a call whose function `fixed.reader` accepts)."""
    if name not in fixed.reads:
        parents: dict = {}
        stores: set = set()
        for n in walk_nodes(fixed.module):
            for child in children(n):
                parents[id(child)] = n
            if isinstance(n, (cst.AssignTarget, cst.AugAssign, cst.Del)):
                stores |= {id(m) for m in walk_nodes(n.target)}
        fixed.reads[name] = all(_read_only_use(n, parents, stores, fixed.sites, fixed.reader)
                                for n in walk_nodes(fixed.module) if isinstance(n, cst.Name) and n.value == name)
    return fixed.reads[name]


_READERS = ("len", "enumerate", "zip")  # builtins that read a list and change nothing


def _read_only_use(n: cst.Name, parents: dict, stores: set, sites: dict, reader=None) -> bool:
    parent = parents.get(id(n))
    if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is n):
        return True
    if isinstance(parent, cst.Subscript) and parent.value is n and id(parent) not in stores:
        return True
    call = parents.get(id(parent))
    if not (isinstance(parent, cst.Arg) and isinstance(call, cst.Call)):
        return False
    if reader is not None and reader(call.func):
        return True
    return isinstance(call.func, cst.Name) and call.func.value in _READERS and call.func.value not in sites


def _builtin(fixed: Fixed, name: str) -> bool:
    """`name` is Python's builtin here: nothing in the file binds or imports it."""
    return name not in fixed.sites

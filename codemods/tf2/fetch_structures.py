"""A `sess.run` fetch's structure: lists, tuples and dicts as written, nested or not, leaves in order.

`sess.run` returned its fetch's structure, with `None` for an op. A flat list unpacked into names
(`_` for each op) keeps the short form, a step returning the values alone; every other structure
becomes a step returning the structure itself, `None` in place of each op (`FetchShape`), and the
call site maps `.numpy()` over it (docs/migrate-tf2.md, "What a fetch gives back").
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2.interfaces import FetchKind

if TYPE_CHECKING:
    from codemods.tf2.program import Program


class Structure(enum.Enum):
    """The structure of a fetch, as `session` reads it from the fetch expression."""

    LEAF = "leaf"    # one Fetch
    LIST = "list"    # a list of parts
    TUPLE = "tuple"  # a tuple of parts
    DICT = "dict"    # a dict: (key node, part) pairs


def leaves(structure) -> list:
    kind, parts = structure
    if kind == Structure.LEAF:
        return [parts]
    if kind == Structure.DICT:
        return [l for _, p in parts for l in leaves(p)]
    return [l for p in parts for l in leaves(p)]


def gives_nothing(tr: "Program", fetch) -> bool:
    """An update op whose run gave None (`minimize`, `apply_gradients`, a group), not a value, or whose value
    the run drops (`session.Fetch.value`)."""
    if fetch.kind != FetchKind.TRAIN or fetch.value:
        return False
    comp = next((c for c in reversed(tr.comps) if fetch.name in c.defs), None)
    return comp is None or comp.returns is None


def whole_structure(tr: "Program", structure, targets) -> bool:
    """The step returns the fetch's whole structure (None where an op is), and the call site maps
    `.numpy()` over it: a dict, a nested structure, or a list whose None for an op is kept (the
    result bound to one name, or the None bound to a name). A flat list unpacked into names, `_` for
    each op, keeps the shorter form: the step returns the values only."""
    kind, parts = structure
    if kind == Structure.LEAF:
        return False
    if kind == Structure.DICT:
        for key, _ in parts:
            if not isinstance(key, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)):
                tr.refuse(f"a fetch dict whose key `{emit.code(key)}` is not a literal is not converted")
        return True
    if any(p[0] != Structure.LEAF for p in parts):
        return True
    nones = [gives_nothing(tr, p[1]) for p in parts]
    if not any(nones) or targets is None and all(nones):
        return False
    unpacked = isinstance(targets, (cst.Tuple, cst.List)) and len(targets.elements) == len(parts) and not any(
        isinstance(e, cst.StarredElement) for e in targets.elements)
    return not unpacked or any(none and not (isinstance(el.value, cst.Name) and el.value.value == "_")
                               for el, none in zip(targets.elements, nones))


class FetchShape:
    """A fetch structure as a step returns it: lists, tuples and dicts as written, each leaf in its place."""

    def __init__(self, structure):
        self.structure = structure

    def expression(self, nodes: list) -> cst.BaseExpression:
        it = iter(nodes)
        return rebuild(self.structure, lambda _: or_none(next(it)))


def or_none(node):
    return cst.Name("None") if node is None else node


def rebuild(structure, leaf_fn):
    kind, parts = structure
    if kind == Structure.LEAF:
        return leaf_fn(parts)
    if kind == Structure.DICT:
        return cst.Dict([cst.DictElement(k, rebuild(p, leaf_fn)) for k, p in parts])
    elements = [cst.Element(rebuild(p, leaf_fn)) for p in parts]
    return cst.List(elements) if kind == Structure.LIST else cst.Tuple(elements)

"""Statements that run once while TF 1.x builds the graph and act on graph objects themselves.

A `print(X)` of a placeholder printed TF 1.x's description of it, `Tensor("X:0", shape=(?, 3),
dtype=float32)`: the translator knows its name (under the name scopes, made unique), shape and
dtype, so the output prints the same text (the dimensions given by names are filled in when it
runs). Any other tensor printed at build time is refused (its TF 1.x name depends on every op
of the graph).

The other one kept: a `print` of gradient types (`isinstance(g, tf.IndexedSlices)` over a
`tf.gradients` list, nothing else of the tensors). TF 1.x printed it once, at that line; the
types come from the same gradient functions in TF 2 (a gather's gradient is an IndexedSlices
in both), so the print goes into a function computing those gradients, traced once there.
Printing anything else of a tensor would show graph-specific names: refused by the caller.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.children import children

if TYPE_CHECKING:
    from codemods.tf2.program import Program


def _walk(node):
    yield node
    for child in children(node):
        yield from _walk(child)


def is_gradient_type_print(tr: "Program", call: cst.BaseExpression, graph: set) -> bool:
    """`print(...)` reading only the types of the gradients of `tf.gradients` lists."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "print"):
        return False
    if "print" in tr.env and tr.env["print"].__class__.__name__ == "Func":
        return False
    if not graph <= tr.gradient_lists:
        return False
    loop_vars, allowed = set(), 0
    for n in _walk(call):
        if isinstance(n, cst.CompFor) and isinstance(n.iter, cst.Name) and n.iter.value in graph:
            if not isinstance(n.target, cst.Name) or n.target.value in tr.env:
                return False
            loop_vars.add(n.target.value)
            allowed += 2
    for n in _walk(call):
        if (isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "isinstance"
                and len(n.args) == 2 and isinstance(n.args[0].value, cst.Name) and n.args[0].value.value in loop_vars
                and tr.names.qualified(n.args[1].value) == "tensorflow.IndexedSlices"):
            allowed += 1
    total = sum(1 for n in _walk(call) if isinstance(n, cst.Name) and n.value in graph | loop_vars)
    return total == allowed


DTYPES = {"float": "float32", "double": "float64", "half": "float16"}


def _dtype_name(tr: "Program", node) -> str | None:
    if isinstance(node, cst.SimpleString):
        name = node.evaluated_value
        return DTYPES.get(name, name)
    q = tr.names.qualified(node)
    if q is not None and q.startswith("tensorflow."):
        return q.rsplit(".", 1)[1]
    return None


def describe(tr: "Program", ph) -> cst.BaseExpression | None:
    """TF 1.x's `str()` of a placeholder, as an expression (an f-string when a dimension is a name)."""
    dtype = _dtype_name(tr, ph.dtype)
    if dtype is None or ph.tf1_name is None or (ph.shape is not None and ph.dims is None):
        return None
    parts = [f'Tensor("{ph.tf1_name}"']
    holes = []
    if ph.dims is not None:
        dims = []
        for d in ph.dims:
            if d is None:
                dims.append("?")
            elif isinstance(d, cst.Integer):
                dims.append(d.value)
            elif isinstance(d, cst.Name):
                dims.append("{" + d.value + "}")
                holes.append(d)
            else:
                return None
        shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
        parts.append(f", shape={shape}")
    parts.append(f", dtype={dtype})")
    text = "".join(parts)
    if holes:
        return cst.parse_expression("f" + repr(text))
    return cst.SimpleString(repr(text))


class _Describe(cst.CSTTransformer):
    def __init__(self, tr: "Program", graph: set):
        super().__init__()
        self.tr, self.graph, self.failed = tr, graph, False
        self._skip: set = set()

    def visit_Attribute(self, node):
        self._skip.add(id(node.attr))

    def leave_Name(self, original, updated):
        if id(original) in self._skip or original.value not in self.graph:
            return updated
        av = self.tr.env.get(original.value)
        text = describe(self.tr, av.placeholder) if hasattr(av, "placeholder") else None
        if text is None:
            self.failed = True
            return updated
        return text


def placeholder_print(tr: "Program", small: cst.Expr, graph: set):
    """`print(X, ...)` of placeholders → the same print of their TF 1.x descriptions, or None."""
    call = small.value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "print"):
        return None
    describer = _Describe(tr, graph)
    new = call.visit(describer)
    if describer.failed:
        return None
    return small.with_changes(value=new)

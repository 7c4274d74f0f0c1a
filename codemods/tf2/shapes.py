"""Static widths of graph tensors, enough to build Keras layers in TF1's creation order.

`tf.layers.dense(x, 16)` created its kernel when the graph was built, from `x`'s static
shape. The TF2 form builds the Keras layer up front (`layer.build((None, 8))`) so its
variables exist, in the same order, before the first step. A shape is a list of dimension
expressions (source code) or None when unknown; an unknown input width means refusal.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.tf2._base import Names, arg, code

Shape = Optional[list]

ELEMENTWISE = frozenset({
    "tensorflow.nn.tanh", "tensorflow.tanh", "tensorflow.nn.relu", "tensorflow.nn.sigmoid",
    "tensorflow.sigmoid", "tensorflow.nn.relu6", "tensorflow.nn.elu", "tensorflow.nn.softmax",
    "tensorflow.identity", "tensorflow.nn.dropout", "tensorflow.stop_gradient",
})
REDUCTIONS = frozenset({"tensorflow.reduce_mean", "tensorflow.reduce_sum", "tensorflow.reduce_max"})


def from_literal(node: Optional[cst.BaseExpression]) -> Shape:
    """[None, 8] → [None, '8']; anything but a list/tuple literal → None (unknown)."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    dims = []
    for el in node.elements:
        v = el.value
        dims.append(None if isinstance(v, cst.Name) and v.value == "None" else code(v))
    return dims


def _int(node: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def infer(node: cst.BaseExpression, shapes: dict, names: Names) -> Shape:
    """The static shape of `node` from the known shapes of the names it uses, else None."""
    if isinstance(node, cst.Name):
        return shapes.get(node.value)
    if not isinstance(node, cst.Call):
        return None
    q = names.of(node)
    first = node.args[0].value if node.args else None
    if q in ELEMENTWISE and first is not None:
        return infer(first, shapes, names)
    if q == "tensorflow.nn.embedding_lookup":
        table, ids = arg(node, 0, "params"), arg(node, 1, "ids")
        t, i = infer(table, shapes, names), infer(ids, shapes, names)
        return None if t is None or i is None else i + t[1:]
    if q in REDUCTIONS and first is not None:
        s = infer(first, shapes, names)
        axis = _int(arg(node, 1, "axis"))
        if s is None or axis is None or arg(node, 2, "keepdims") is not None:
            return None
        axis = axis % len(s)
        return s[:axis] + s[axis + 1:]
    if q == "tensorflow.concat":
        values, axis = arg(node, 0, "values"), _int(arg(node, 1, "axis"))
        if not isinstance(values, (cst.List, cst.Tuple)) or axis is None:
            return None
        parts = [infer(el.value, shapes, names) for el in values.elements]
        if not parts or any(p is None for p in parts) or len({len(p) for p in parts}) != 1:
            return None
        axis = axis % len(parts[0])
        dims = [p[axis] for p in parts]
        out = list(parts[0])
        out[axis] = None if any(d is None for d in dims) else (
            f"{len(dims)} * {dims[0]}" if len(set(dims)) == 1 and len(dims) > 1 else " + ".join(dims))
        return out
    return None

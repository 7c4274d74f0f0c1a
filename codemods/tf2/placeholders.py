"""Placeholders (TF 1.x) → the arguments of the step functions.

* `tf.placeholder(dtype, shape)` → an argument of each step that is fed it, `tf.TensorSpec(shape, dtype)`;
* `tf.placeholder_with_default(1.0, [])` (a float, int or bool literal) → the same, or in a step not fed
  it the constant TF 1.x made of the literal (float32, int32, bool);
* `tf.placeholder_with_default(cell.zero_state(batch, tf.float32), [None, n])`, a default computed by
  the graph → the same, or, in a step not fed it, the default computed there as TF 1.x computed it
  (its dtype is the one the default's call names).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, fixed_values
from codemods.tf2 import shapes as shp
from codemods.tf2.model import Placeholder, Tensor
from codemods.tf2.call_args import literal_str
from codemods.tf2.scopes import join as scope_join

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite


def placeholder(site: "CallSite"):
    site.only({"dtype", "shape", "name"}, 3)
    dtype, _ = site.arg(0, "dtype")
    shape, _ = site.arg(1, "shape")
    return _input(site, dtype, shape, None)


def placeholder_with_default(site: "CallSite"):
    site.only({"input", "shape", "name"}, 3)
    default, av = site.arg(0, "input")
    shape, _ = site.arg(1, "shape")
    if av.graph:
        return _computed_default(site, default, av, shape)
    dtype = _literal_dtype(default)
    if dtype is None:
        site.refuse(f"placeholder_with_default of `{emit.code(default)}`: neither a number or bool literal nor a "
                    "graph value tf1clip follows (one made in a comprehension or a loop, for instance): not converted")
    # not fed, a step computes with the default as the tensor TF 1.x made of it (its dtype, not a Python value)
    return _input(site, site.tr.tf(dtype), shape, emit.call(site.tr.tf("tensorflow.constant"), default,
                                                             site.tr.tf(dtype)))


def _literal_dtype(node) -> Optional[str]:
    """The dtype TF 1.x gave a literal default: a float → float32, an int → int32, a bool → bool."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Float):
        return "tensorflow.float32"
    if isinstance(node, cst.Integer):
        return "tensorflow.int32"
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return "tensorflow.bool"
    return None


def _computed_default(site: "CallSite", default, av, shape):
    """`tf.placeholder_with_default(cell.zero_state(batch, tf.float32), [None, n])`: an argument of
    the steps that feed it; in a step that does not, the default, computed there as TF 1.x did."""
    if not (isinstance(av, Tensor) and av.single):
        site.refuse("placeholder_with_default of a structure of graph values is not converted")
    if shape is None:
        site.refuse("placeholder_with_default of a graph value without its shape is not converted")
    dtype = _dtype_given(site, default)
    if dtype is None:
        site.refuse("placeholder_with_default of a graph value whose dtype is not written in its call "
                    "(`dtype=` or a tf dtype argument) is not converted")
    value, node = _input(site, dtype, shape, None, computed=True)
    tr = site.tr
    tr.add_comp([emit.assign(value.placeholder.name, default)], {value.placeholder.name}, site.ev.uses,
                default_of=value.placeholder.name)
    tr.note(f"placeholder_with_default `{value.placeholder.name}`: an argument of the steps that feed it; the "
            "others compute its default")
    return value, node


DTYPES = frozenset(f"tensorflow.{t}" for t in ("float16", "float32", "float64", "bfloat16", "int8", "int16", "int32",
                                               "int64", "uint8", "bool", "complex64", "complex128", "string"))


def _dtype_given(site: "CallSite", default) -> Optional[cst.BaseExpression]:
    """The dtype the default's own call names (`dtype=tf.int32`, or a tf dtype given by position)."""
    if not isinstance(default, cst.Call):
        return None
    for a in default.args:
        if a.keyword is not None and a.keyword.value == "dtype" or a.keyword is None and isinstance(
                a.value, cst.Attribute) and site.tr.names.qualified(a.value) in DTYPES:
            return a.value
    return None


def _input(site, dtype, shape, default, computed: bool = False):
    tr = site.tr
    if dtype is None:
        site.refuse("tf.placeholder without a dtype")
    if site.target is None or site.original is not site.ev.top:
        site.refuse("a placeholder not bound to a name is not converted")
    name_node, _ = site.arg(None, "name") if default is None and not computed else site.arg(2, "name")
    op_name = tr.scopes.unique_name(scope_join(tr.scopes.top.name_path, literal_str(name_node) or (
        "Placeholder" if default is None and not computed else "PlaceholderWithDefault")))
    # a name the file binds once to a list of constants, and only reads, holds that list: its dimensions
    known = fixed_values.fixed_sequence(tr.fixed(), shape) if isinstance(shape, cst.Name) else None
    dims = shp.from_literal(known or shape) if shape is not None else None
    if dims is None and shape is not None:  # `x.shape` of a NumPy array the script made: its dimensions
        array = tr.host_shapes().dims_of(shape)
        dims = None if array is None else [shp.integer(d) for d in array]
        if dims is not None:
            tr.note(f"placeholder `{site.target}`: `{emit.code(shape)}` is {tuple(array)}, the shape of the array "
                    "the script made (TF 1.x's static shape)")
    ph = Placeholder(site.target, dtype, shape, dims, tr.line, len(tr.placeholders), default,
                     tf1_name=op_name + ":0", computed=computed, at=tuple(tr.reading))
    tr.note(f"placeholder `{site.target}` → an argument of the step functions (tf.TensorSpec)")
    return tr.placeholder(ph), site.node


CALLS = {
    "tensorflow.placeholder": placeholder,
    "tensorflow.placeholder_with_default": placeholder_with_default,
}
CREATORS = {"tensorflow.placeholder", "tensorflow.placeholder_with_default"}

"""Regularizers of TF 1.x layers and the REGULARIZATION_LOSSES collection → the same terms in the steps.

TF 1.x: `tf.layers.dense(x, 8, kernel_regularizer=tf.contrib.layers.l2_regularizer(0.01))` made the
kernel and added `0.01 * tf.nn.l2_loss(kernel)` to the graph's REGULARIZATION_LOSSES collection,
once, where it made the variable (a layer reused by its scope adds nothing: the variable exists).
slim's and contrib's layers (`weights_regularizer=`) did the same through get_variable. The
collection is read where it is read: `tf.losses.get_regularization_loss()` is the add_n of its
terms made so far (tf.constant(0.0) when there is none), `get_regularization_losses()` and
`tf.get_collection(REGULARIZATION_LOSSES)` the list, and `tf.losses.get_total_loss()` the add_n of
the LOSSES collection and then of this one.

TF 2: each term is TF 1.x's own formula (l2_regularizer: `scale * tf.nn.l2_loss(w)`, l1_regularizer:
`scale * tf.reduce_sum(tf.abs(w))`), a value of the steps that reads the Keras layer's variable, and
the collection's reads are the same sums of those values. The Keras layer is built without a
regularizer: Keras' own L2 computes `l * sum(w**2)`, which is not TF 1.x's kernel. A statement binding
the regularizer is dropped (the terms say what it computed); where the object stays (a dict's value)
it is the function TF 1.x's was, `lambda weights: scale * tf.nn.l2_loss(weights)`. Nothing else can add
to the collection in a program this tier converts (`tf.add_to_collection`, `get_variable(regularizer=)`
and `variable_scope(regularizer=)` are refused), so the terms made here are the whole collection.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2.call_args import literal_str, number_literal, number_value
from codemods.tf2.model import Other, OtherKind, Seq, SeqKind, Tensor
from codemods.tf2.names import short

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite
    from codemods.tf2.model import State

# TF 1.x regularizer → the formula of its term (`{s}`: the scale, `{w}`: the variable)
REGULARIZERS = {
    "tensorflow.contrib.layers.l2_regularizer": "{s} * {tf}.nn.l2_loss({w})",
    "slim.l2_regularizer": "{s} * {tf}.nn.l2_loss({w})",
    "tensorflow.contrib.layers.l1_regularizer": "{s} * {tf}.reduce_sum({tf}.abs({w}))",
    "slim.l1_regularizer": "{s} * {tf}.reduce_sum({tf}.abs({w}))",
}
# a layer's regularizer arguments → the Keras attribute of the variable each one regularizes
ARGUMENTS = {"kernel_regularizer": "kernel", "bias_regularizer": "bias",
             "weights_regularizer": "kernel", "biases_regularizer": "bias"}


@dataclass(frozen=True)
class Regularizer:
    """What a regularizer object computes: `formula` (REGULARIZERS) at `scale` (its number literal)."""
    formula: str
    scale: cst.BaseExpression
    none: bool  # a scale of 0.0: TF 1.x's function returned None, no term
    call: str   # how the input wrote it, for notes


def regularizer(site: "CallSite"):
    """`tf.contrib.layers.l2_regularizer(scale)`: a regularizer object, known by its formula and scale."""
    site.only({"scale", "scope"}, 2)
    scale, _ = site.arg(0, "scale")
    scope, _ = site.arg(1, "scope")
    call = f"{short(site.qname)}({emit.code(scale) if scale is not None else ''})"
    if scope is not None and literal_str(scope) is None and not (isinstance(scope, cst.Name) and scope.value == "None"):
        site.refuse(f"`{call}` with a scope that is not a string literal is not converted")
    literal = number_literal(scale, site.tr.host_literal) if scale is not None else None
    if literal is None:
        site.refuse(f"`{call}`: a scale that is not a number literal (or a name bound once to one) is not converted")
    if isinstance(literal, cst.Integer) or isinstance(literal, cst.UnaryOperation) and \
            isinstance(literal.expression, cst.Integer):
        site.refuse(f"`{call}`: an integer scale (TF 1.x raised ValueError)")
    value = number_value(literal, site.tr.host_literal)
    if value < 0:
        site.refuse(f"`{call}`: a negative scale (TF 1.x raised ValueError)")
    reg = Regularizer(REGULARIZERS[site.qname], literal, value == 0.0, call)
    info = {"drop": True, "what": "the regularizer (its terms are computed in the steps)", "regularizer": reg}
    # where the object stays (a dict's value), the function TF 1.x's was: weights → the term (None for 0.0)
    term = cst.Name("None") if reg.none else \
        emit.expr(reg.formula, tf=cst.Name(site.tr.alias), s=literal, w=cst.Name("weights"))
    return Other(OtherKind.REGULARIZER, info), cst.parse_expression(f"lambda weights: {emit.code(term)}")


def add_terms(site: "CallSite", state: "State", given: dict, variables: dict) -> None:
    """The terms TF 1.x added to REGULARIZATION_LOSSES when the layer `state` made its variables, in the
    order it made them. `given`: the layer call's TF 1.x arguments; `variables`: Keras attribute → the
    TF 1.x variable name, in creation order."""
    tr = site.tr
    wanted = {}
    for keyword, attr in ARGUMENTS.items():
        node = given.get(keyword)
        if node is None or isinstance(node, cst.Name) and node.value == "None":
            continue
        av = site.ev.value_of(node)
        if not (isinstance(av, Other) and av.kind == OtherKind.REGULARIZER):
            site.refuse(f"`{short(site.qname)}({keyword}={emit.code(node)})`: tf1clip does not know this value as "
                        "one of the regularizers it converts (tf.contrib.layers' or slim's l1_regularizer and "
                        "l2_regularizer, made in the file)")
        wanted[attr] = av.info["regularizer"]
    for attr, tf1 in variables.items():
        reg = wanted.get(attr)
        if reg is None:
            continue
        if reg.none:  # TF 1.x's regularizer of scale 0.0 returned None: no term
            tr.note(f"{reg.call} of `{tf1}` adds nothing (TF 1.x: a scale of 0.0 is no regularizer)")
            continue
        name = tr.namer.fresh(tf1.replace("/", "_") + "_regularization")
        value = emit.expr(reg.formula, tf=cst.Name(tr.alias), s=reg.scale,
                          w=cst.Attribute(state.expr(), cst.Name(attr)))
        statement = emit.with_comment(emit.assign(name, value),
                                      f"TF 1.x's {reg.call} of {tf1} (REGULARIZATION_LOSSES)")
        tr.add_comp([statement], {name}, set())
        tr.env[name] = Tensor([])
        tr.regularization.append(name)
        tr.note(f"{reg.call} of `{tf1}` → its TF 1.x term `{name}`, computed in the steps")


def _terms_list(tr) -> cst.List:
    return cst.List([cst.Element(cst.Name(n)) for n in tr.regularization])


def regularization_loss(site: "CallSite"):
    """tf.losses.get_regularization_loss(): add_n of the terms made so far, 0.0 when there is none."""
    site.only({"name"}, 0)
    tr = site.tr
    tr.note(f"tf.losses.get_regularization_loss() → add_n of the {len(tr.regularization)} regularization "
            "terms made so far, as TF 1.x summed its collection")
    if not tr.regularization:
        return Tensor([]), emit.call(tr.tf("tensorflow.constant"), cst.Float("0.0"))
    if len(tr.regularization) == 1:
        return Tensor([]), cst.Name(tr.regularization[0])
    return Tensor([]), emit.call(tr.tf("tensorflow.add_n"), _terms_list(tr))


def regularization_losses(site: "CallSite"):
    """tf.losses.get_regularization_losses(): the terms made so far, a list."""
    site.only(set(), 0)
    return terms(site.tr)


def terms(tr) -> tuple:
    """(abstract value, node) of the REGULARIZATION_LOSSES collection as it stands: a list of the terms."""
    return Seq([Tensor([]) for _ in tr.regularization], SeqKind.LIST), _terms_list(tr)


def total(tr) -> list:
    """The names TF 1.x's get_total_loss() summed: the LOSSES collection, then the regularization terms."""
    return [*tr.losses, *tr.regularization]


# read where they are called (a helper calling one is read at its calls, as TF 1.x ran it there)
CREATORS = {"tensorflow.losses.get_regularization_loss", "tensorflow.losses.get_regularization_losses"}
CALLS = {
    **{q: regularizer for q in REGULARIZERS},
    "tensorflow.losses.get_regularization_loss": regularization_loss,
    "tensorflow.losses.get_regularization_losses": regularization_losses,
}

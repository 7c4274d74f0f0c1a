"""`tf.losses.*` (TF 1.x) → TF 1.x's own formula in TF 2 ops, and the LOSSES collection.

A `tf.losses` function computes a loss per element, then reduces it with
`compute_weighted_loss(weights=1.0, reduction=SUM_BY_NONZERO_WEIGHTS)`: the sum of the losses
divided (`div_no_nan`) by the number of elements with a nonzero weight, all of them (in a
graph the weight is a tensor, so `_num_present` sums the 1.0 broadcast to the losses' shape):
the mean for a nonempty batch, 0 for an empty one. It also adds the loss to the LOSSES
collection, which `tf.losses.get_total_loss()` sums (`add_n`) with the regularization losses
(the terms of `regularization`, made so far). The output spells
the formula (`reduction=SUM`: the sum, not divided; MEAN and SUM_OVER_BATCH_SIZE divide as the
default does with weights 1.0); weights that are a number or a scalar graph value are TF 1.x's
`compute_weighted_loss` spelled out, label smoothing (a number) TF 1.x's smoothing of the labels;
other weights and reduction NONE are refused. A `scope` only named TF 1.x's ops (the LOSSES collection is
read here by `get_total_loss()` alone, never by scope: `get_total_loss(scope=)` and `get_collection(LOSSES)`
are refused), so it is dropped.
Static shapes decide nothing else: where TF 1.x checked labels and predictions compatible, a pair
known here to be incompatible is refused (TF 1.x raised), and any other pair gets the same formula
(TF 1.x broadcast them at run time as TF 2 does). `sparse_softmax_cross_entropy` first squeezed a
trailing dimension of 1 (`remove_squeezable_dimensions`): decided here from known ranks, else by
its twin in the step, where the traced ranks are the ones TF 1.x knew (a feed has its
placeholder's rank).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
from libcst.helpers import parse_template_module

from codemods.tf2 import emit, names, regularization
from codemods.tf2.call_args import is_false, number_value
from codemods.tf2 import shapes as shp
from codemods.tf2.syntax import names_of
from codemods.tf2.model import GraphOp, Op, OpKind, Tensor

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

# TF 1.x loss → (its (labels, predictions) parameter names, the per-element template, whether TF 1.x
# checked the static shapes compatible when it built the graph: it raised ValueError when they were not;
# when they were, it broadcast at run time as the same template does in TF 2)
LOSSES = {
    "tensorflow.losses.mean_squared_error": (
        ("labels", "predictions"),
        "{tf}.math.squared_difference({tf}.cast({p}, {tf}.float32), {tf}.cast({l}, {tf}.float32))", True),
    "tensorflow.losses.absolute_difference": (
        ("labels", "predictions"), "{tf}.abs({tf}.cast({p}, {tf}.float32) - {tf}.cast({l}, {tf}.float32))", True),
    "tensorflow.losses.sparse_softmax_cross_entropy": (
        ("labels", "logits"), "{tf}.nn.sparse_softmax_cross_entropy_with_logits(labels={l}, logits={p})", False),
    "tensorflow.losses.softmax_cross_entropy": (
        ("onehot_labels", "logits"),
        "{tf}.nn.softmax_cross_entropy_with_logits(labels={tf}.stop_gradient({tf}.cast({l}, {p}.dtype)), logits={p})",
        True),
    "tensorflow.losses.sigmoid_cross_entropy": (
        ("multi_class_labels", "logits"),
        "{tf}.nn.sigmoid_cross_entropy_with_logits(labels={tf}.cast({l}, {p}.dtype), logits={p})", True),
}
# tf.contrib.losses (`slim.losses`), what tf.losses replaced: the same formulas (compute_weighted_loss divided by
# the number of elements with a nonzero weight, `_safe_div`: 0 for none; also into LOSSES), the predictions or
# logits first. Its name → the tf.losses function of the same formula. Its sparse_softmax_cross_entropy reshaped
# the labels to [batch] (`tf.reshape(labels, [tf.shape(labels)[0]])`) instead of squeezing them.
CONTRIB = {f"{module}.{name}": f"tensorflow.losses.{name}"
           for module in ("tensorflow.contrib.losses", "slim.losses")
           for name in ("mean_squared_error", "absolute_difference", "sparse_softmax_cross_entropy",
                        "softmax_cross_entropy", "sigmoid_cross_entropy")}
TOTAL = ("tensorflow.losses.get_total_loss", "tensorflow.contrib.losses.get_total_loss", "slim.losses.get_total_loss")
# each also added its loss to the graph's LOSSES collection (`tf.losses.get_total_loss` reads it): a
# helper calling one is read at its calls, where TF 1.x ran it, as for the calls that make state
CREATORS = set(LOSSES) | set(CONTRIB) | set(TOTAL)  # (get_total_loss reads the collections where it is called)
WHY = ("TF 1.x's {name}: the loss per element, summed, divided by the number of elements (weights=1.0, "
       "SUM_BY_NONZERO_WEIGHTS, div_no_nan: 0 for an empty batch); also in the LOSSES collection")
WHY_WEIGHTED = ("TF 1.x's {name}: the loss per element times the weights, summed, divided as compute_weighted_loss "
                "divided for {reduction} (div_no_nan); also in the LOSSES collection")
WHY_SUM = ("TF 1.x's {name} with reduction=SUM: the loss per element (times the weights, if given), summed; also in "
           "the LOSSES collection")


# The losses whose TF 1.x function takes label_smoothing (a Python number: `if label_smoothing > 0`), and
# how it smoothed the labels (cast to the logits' dtype first, then this, then stop_gradient).
SMOOTHING = {
    "tensorflow.losses.softmax_cross_entropy": "{l} * (1 - {s}) + {s} / {tf}.cast({tf}.shape({l})[-1], {p}.dtype)",
    "tensorflow.losses.sigmoid_cross_entropy": "{l} * (1 - {s}) + 0.5 * {s}",
}


def loss(site: "CallSite"):
    contrib = site.qname in CONTRIB
    q = CONTRIB.get(site.qname, site.qname)
    params, template, same_shape = LOSSES[q]
    smoothing = q in SMOOTHING
    site.only(set(params) | ({"weights", "scope"} if contrib else {"reduction", "weights", "scope"})
              | ({"label_smoothing"} if smoothing else set()), 4 if smoothing else 3)
    tr = site.tr
    reduction = _reduction(site)
    labels, labels_av = site.arg(1 if contrib else 0, params[0])  # contrib's: the predictions (or logits) first
    preds, preds_av = site.arg(0 if contrib else 1, params[1])
    if labels is None or preds is None:
        site.refuse(f"`{site.qname.replace('tensorflow.', 'tf.')}` without labels and predictions")
    short, shown = q.rsplit(".", 1)[1], names.short(site.qname)
    if same_shape and not shp.compatible(shp.of(labels_av), shp.of(preds_av)):
        site.refuse(f"{shown}: the static shapes of labels and predictions are incompatible "
                    "(TF 1.x raised ValueError when it built the graph)")
    # an expression given (`tf.matmul(h, V)`): bound to a name first, built once as TF 1.x built it
    labels, preds = (_named(tr, node, av, what) for node, av, what in
                     ((labels, labels_av, "labels"), (preds, preds_av, "predictions")))
    uses = (names_of(labels) | names_of(preds)) & tr.graph_names()
    if contrib and short == "sparse_softmax_cross_entropy":  # contrib's reshape of the labels to [batch]
        labels = emit.expr("{tf}.reshape({l}, [{tf}.shape({l})[0]])", tf=tr.alias, l=labels)
    elif short == "sparse_softmax_cross_entropy":
        labels, preds = _squeezed(tr, labels, labels_av, preds, preds_av, uses)
        uses |= names_of(labels) | names_of(preds)
    if smoothing:
        template = _smoothed(site, q, template)
    weights = _weights(site, shown)
    if weights is not None and isinstance(weights, cst.Name):
        uses |= names_of(weights) & tr.graph_names()
    per = tr.namer.fresh("losses" if short != "mean_squared_error" else "squared_error")
    why = WHY_SUM if reduction == "SUM" else WHY if weights is None else WHY_WEIGHTED
    first = emit.with_comment(emit.assign(per, emit.expr(template, tf=tr.alias, l=labels, p=preds)),
                              why.format(name=shown, reduction=reduction))
    tr.add_comp([first], {per}, uses)
    tr.env[per] = Tensor()  # a value the loss reads (so each step that computes the loss computes it first)
    value = _reduced(tr, per, weights, reduction, scaled_after=contrib)
    if site.target is None:  # a statement (the loss only goes to the collection), or part of an expression
        name = tr.namer.fresh(short)
        tr.add_comp([emit.assign(name, value)], {name}, {per})
        tr.env[name] = Tensor([])
        tr.losses.append(name)
        tr.note(f"{shown} → its TF 1.x formula, `{name}` (the LOSSES collection's entry)")
        if site.original is not site.ev.top:
            return Tensor([]), cst.Name(name)
        return Op(GraphOp(OpKind.COLLECTED, name)), site.node
    tr.losses.append(site.target)
    tr.note(f"{shown} → its TF 1.x formula (compute_weighted_loss, {reduction})")
    return Tensor([]), value


def _named(tr, node, av, what: str) -> cst.Name:
    """`node` when it is a name; else a fresh name bound to it by a value statement of its own."""
    if isinstance(node, cst.Name):
        return node
    name = tr.namer.fresh(what)
    tr.add_comp([emit.assign(name, node)], {name}, names_of(node) & tr.graph_names())
    tr.env[name] = av
    return cst.Name(name)


def _smoothed(site: "CallSite", q: str, template: str) -> str:
    """The per-element template with TF 1.x's label smoothing, decided as TF 1.x decided it (`> 0`)."""
    node, _ = site.arg(3, "label_smoothing")
    if node is None:
        return template
    value = number_value(node, site.tr.host_literal)
    if value is None:
        site.refuse(f"`{site.qname.replace('tensorflow.', 'tf.')}(label_smoothing=...)` that is not a number: TF 1.x decided "
                    "`label_smoothing > 0` in Python while it built the graph")
    if value <= 0:
        return template
    rule = SMOOTHING[q].replace("{s}", emit.code(node).replace("{", "{{").replace("}", "}}"))
    cast = "{tf}.cast({l}, {p}.dtype)"
    assert cast in template
    return template.replace(cast, "(" + rule.replace("{l}", cast) + ")")


def _weights(site: "CallSite", short_name: str):
    """The loss's weights: None (1.0, the default), a number's node, or the name of a scalar graph value.
    TF 1.x checked them broadcastable to the losses; any other is refused (TF 2 broadcasts more)."""
    node, av = site.arg(2, "weights")
    if node is None:
        return None
    value = number_value(node, site.tr.host_literal)
    if value == 1.0:
        return None
    if value is not None:
        return cst.Float(repr(value)) if value != 0 else cst.Float("0.0")
    if isinstance(node, cst.Name) and getattr(av, "graph", False) and shp.of(av) == []:
        return node
    site.refuse(f"{short_name}(weights={emit.code(node)}): only a number or a name of a scalar graph "
                "value is converted (TF 1.x required weights broadcastable to the losses, which TF 2 does not check)")


def _reduced(tr, per: str, weights, reduction: str, scaled_after: bool = False) -> cst.BaseExpression:
    """TF 1.x's compute_weighted_loss of the losses `per`: the weighted sum, divided (div_no_nan) as the
    reduction says: SUM_BY_NONZERO_WEIGHTS by the number of elements whose weight is not 0, MEAN by the
    sum of the weights over the elements, SUM_OVER_BATCH_SIZE by the number of elements, SUM not at all."""
    if weights is None:  # weights=1.0: every divisor is the number of elements
        if reduction == "SUM":
            return emit.expr("{tf}.reduce_sum({x})", tf=tr.alias, x=per)
        return emit.expr("{tf}.math.divide_no_nan({tf}.reduce_sum({x}), {tf}.reduce_sum({tf}.ones_like({x})))",
                         tf=tr.alias, x=per)
    number = isinstance(weights, cst.Float)  # converted to float32 as TF 1.x's cast did
    w = weights if number else emit.expr("{tf}.cast({w}, {tf}.float32)", tf=tr.alias, w=weights)
    # contrib's _scale_losses summed the losses first, then scaled the sum by the (scalar) weight
    total = emit.expr("{tf}.reduce_sum({x}) * {w}" if scaled_after else "{tf}.reduce_sum({x} * {w})", tf=tr.alias,
                      x=per, w=w)
    if reduction == "SUM":
        return total
    if reduction == "MEAN":
        divisor = emit.expr("{tf}.reduce_sum({tf}.ones_like({x}) * {w})", tf=tr.alias, x=per, w=w)
    elif reduction == "SUM_OVER_BATCH_SIZE":
        divisor = emit.expr("{tf}.reduce_sum({tf}.ones_like({x}))", tf=tr.alias, x=per)
    elif number:  # _num_present of a number: the number of elements, or none when it is 0
        divisor = emit.expr("{tf}.reduce_sum({tf}.ones_like({x}))", tf=tr.alias, x=per) \
            if float(weights.value) != 0 else cst.Float("0.0")
    else:  # _num_present: where(weights == 0, 0, 1), broadcast to the losses, summed
        divisor = emit.expr("{tf}.reduce_sum({tf}.where({tf}.equal({w}, 0.0), 0.0, 1.0) * {tf}.ones_like({x}))",
                            tf=tr.alias, x=per, w=w)
    return emit.expr("{tf}.math.divide_no_nan({t}, {d})", tf=tr.alias, t=total, d=divisor)


SQUEEZE = '''

def {name}(labels, predictions, expected_rank_diff):
    """TF 1.x's confusion_matrix.remove_squeezable_dimensions, as tf.losses.sparse_softmax_cross_entropy applied
    it: the last dimension of `predictions` or `labels` squeezed when their ranks differ from `expected_rank_diff`
    by one and that dimension may be 1 (static ranks, known when the step is traced; else decided at run time)."""
    labels, predictions = {tf}.convert_to_tensor(labels), {tf}.convert_to_tensor(predictions)
    labels_rank, predictions_rank = labels.shape.rank, predictions.shape.rank
    if labels_rank is not None and predictions_rank is not None:
        rank_diff = predictions_rank - labels_rank
        if rank_diff == expected_rank_diff + 1 and predictions.shape[-1] in (None, 1):
            predictions = {tf}.squeeze(predictions, [-1])
        elif rank_diff == expected_rank_diff - 1 and labels.shape[-1] in (None, 1):
            labels = {tf}.squeeze(labels, [-1])
        return labels, predictions
    rank_diff = {tf}.rank(predictions) - {tf}.rank(labels)
    if predictions_rank is None or predictions.shape[-1] in (None, 1):
        squeeze = {tf}.equal(expected_rank_diff + 1, rank_diff)
        predictions = {tf}.cond(squeeze, lambda: {tf}.squeeze(predictions, [-1]), lambda: predictions)
    if labels_rank is None or labels.shape[-1] in (None, 1):
        squeeze = {tf}.equal(expected_rank_diff - 1, rank_diff)
        labels = {tf}.cond(squeeze, lambda: {tf}.squeeze(labels, [-1]), lambda: labels)
    return labels, predictions
'''


def _squeezed(tr, labels, labels_av, logits, logits_av, uses: set):
    """tf.losses.sparse_softmax_cross_entropy's labels and logits after TF 1.x's remove_squeezable_dimensions
    (expected rank difference 1): decided here when both static ranks are known, else by its twin in the step."""
    sl, sp = shp.of(labels_av), shp.of(logits_av)
    if sl is not None and sp is not None:
        diff = len(sp) - len(sl)
        if diff == 2 and shp.may_be_one(sp[-1]):
            return labels, emit.expr("{tf}.squeeze({x}, [-1])", tf=tr.alias, x=logits)
        if diff == 0 and sl and shp.may_be_one(sl[-1]):
            return emit.expr("{tf}.squeeze({x}, [-1])", tf=tr.alias, x=labels), logits
        if diff != 1:
            tr.refuse(f"tf.losses.sparse_softmax_cross_entropy: labels of rank {len(sl)} and logits of rank {len(sp)} "
                      "(TF 1.x raised ValueError when it built the graph)")
        return labels, logits
    helper = tr.preamble_function("remove_squeezable_dimensions", lambda n: list(parse_template_module(
        SQUEEZE, name=cst.Name(n), tf=cst.Name(tr.alias)).body), "remove_squeezable_dimensions")
    names = (tr.namer.fresh(f"{labels.value}_squeezed"), tr.namer.fresh(f"{logits.value}_squeezed"))
    call = emit.call(cst.Name(helper), labels, logits, cst.Integer("1"))
    target = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
    why = ("TF 1.x's tf.losses.sparse_softmax_cross_entropy first removed a trailing dimension of 1 where the ranks "
           "called for it (remove_squeezable_dimensions)")
    first = emit.with_comment(emit.assign(target, call), why)
    tr.add_comp([first], set(names), uses)
    for n in names:
        tr.env[n] = Tensor()
    return cst.Name(names[0]), cst.Name(names[1])


# With weights=1.0, MEAN, SUM_OVER_BATCH_SIZE and SUM_BY_NONZERO_WEIGHTS all divide the sum by the
# number of elements (div_no_nan); SUM does not divide; NONE (no reduction) is refused.
REDUCTIONS = {f"tensorflow.losses.Reduction.{r}": r for r in (
    "SUM", "MEAN", "SUM_OVER_BATCH_SIZE", "SUM_BY_NONZERO_WEIGHTS", "SUM_OVER_NONZERO_WEIGHTS")}


def _reduction(site: "CallSite") -> str:
    node, av = site.arg(None, "reduction")
    if node is None:
        return "SUM_BY_NONZERO_WEIGHTS"
    q = getattr(av, "qname", None)
    if q not in REDUCTIONS:
        site.refuse(f"`{site.qname.replace('tensorflow.', 'tf.')}(reduction={emit.code(node)})` is not converted")
    return REDUCTIONS[q]


def total_loss(site: "CallSite"):
    site.only({"add_regularization_losses", "name"}, 2)
    tr = site.tr
    add, _ = site.arg(0, "add_regularization_losses")
    if add is not None and not (isinstance(add, cst.Name) and add.value in ("True", "False")):
        site.refuse(f"tf.losses.get_total_loss(add_regularization_losses={emit.code(add)}) is not converted")
    summed = tr.losses if is_false(add) else regularization.total(tr)
    if not summed:
        site.refuse("tf.losses.get_total_loss() with empty LOSSES and REGULARIZATION_LOSSES collections "
                    "(TF 1.x raised)")
    tr.note(f"tf.losses.get_total_loss() → add_n of the LOSSES collection ({len(tr.losses)})"
            + ("" if is_false(add) else f" and the regularization terms ({len(tr.regularization)})"))
    if len(summed) == 1:
        return Tensor([]), cst.Name(summed[0])
    return Tensor([]), emit.call(tr.tf("tensorflow.add_n"), cst.List([cst.Element(cst.Name(n)) for n in summed]))


CALLS = {
    **{q: loss for q in LOSSES},
    **{q: loss for q in CONTRIB},
    **{q: total_loss for q in TOTAL},
}

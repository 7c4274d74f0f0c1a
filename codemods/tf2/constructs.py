"""Which construct module knows a TensorFlow call, method or attribute: the registry.

`CALLS` maps a canonical qualified name (`tensorflow.layers.dense`) to its handler; `METHODS`
maps (kind of the receiver, method name) to its handler (`(StateKind.OPTIMIZER, "minimize")`);
`CREATORS` lists the calls that create state (a helper containing one is read at its calls).
A handler gets a `CallSite` and returns (abstract value, TF 2 node).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import (batch_norm, checkpoints, contrib_training, data, flags, initializers, keras_layers, layers, losses, ops,
                          optimizers, placeholders, regularization, rnn, rnn_cells, session, summaries, tf_logging,
                          training, variables)
from codemods.tf2.model import (AV, HOST, AVKind, Mapping, Op, OpKind, Other, OtherKind, Seq, SeqKind, Session,
                                StateKind, StateRef, Tensor, TFSymbol, kind_of)
from codemods.tf2.names import short

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite, Evaluation

CALLS = {
    **placeholders.CALLS,
    **variables.CALLS,
    **initializers.CALLS,
    **layers.CALLS,
    **batch_norm.CALLS,
    **keras_layers.CALLS,
    **rnn_cells.CALLS,
    **rnn.CALLS,
    **optimizers.CALLS,
    **training.CALLS,
    **contrib_training.CALLS,
    **losses.CALLS,
    **regularization.CALLS,
    **data.CALLS,
    **summaries.CALLS,
    **flags.CALLS,
    **checkpoints.CALLS,
    **tf_logging.CALLS,
    "tensorflow.assign": lambda site: _assign_function(site),
    "tensorflow.assign_add": lambda site: _assign_function(site),
    "tensorflow.assign_sub": lambda site: _assign_function(site),
    "tensorflow.clip_by_average_norm": ops.clip_by_average_norm,
    "tensorflow.cond": ops.cond,
    "tensorflow.Session": lambda site: (Session(), site.node),
    "tensorflow.InteractiveSession": lambda site: (Session(), site.node),
    "tensorflow.ConfigProto": lambda site: (Other(OtherKind.CONFIG, {"drop": True, "what": "the session config"}),
                                            site.node),
    "tensorflow.GPUOptions": lambda site: (Other(OtherKind.CONFIG, {"drop": True, "what": "the session config"}),
                                           site.node),
    "tensorflow.Graph": lambda site: (Other(OtherKind.GRAPH, {"drop": True, "what": "the graph"}), site.node),
    "tensorflow.get_default_graph": lambda site: (Other(OtherKind.GRAPH, {"drop": True, "what": "the graph"}),
                                                  site.node),
    "tensorflow.reset_default_graph": lambda site: (Other(OtherKind.GRAPH_RESET, {"drop": True, "what": "the graph"}),
                                                    site.node),
}
# call → the keyword arguments its converter reads itself, where TF 1.x used them (`expressions` does not read them)
DEFERRED = {**contrib_training.DEFERRED}
CREATORS = (placeholders.CREATORS | variables.CREATORS | layers.CREATORS | batch_norm.CREATORS | keras_layers.CREATORS | rnn_cells.CREATORS
            | rnn.CREATORS | optimizers.CREATORS | training.CREATORS | contrib_training.CREATORS | summaries.CREATORS
            | checkpoints.CREATORS | data.CREATORS | losses.CREATORS | regularization.CREATORS
            | variables.COLLECTION_READS)
# calls whose result is itself state the steps read by name (a variable, a layer or cell object, an optimizer,
# an iterator, a list of variables), not a value computed from it (`versions`)
STATE_OBJECTS = (variables.CREATORS | variables.COLLECTION_READS | optimizers.CREATORS | rnn_cells.CREATORS
                 | keras_layers.CREATORS | data.CREATORS)
METHODS = {
    **variables.METHODS,
    **rnn_cells.METHODS,
    **optimizers.METHODS,
    **training.METHODS,
    **session.METHODS,
    **summaries.METHODS,
    **checkpoints.METHODS,
    **data.METHODS,
    (OtherKind.GRAPH, "as_default"): lambda site: (Other(OtherKind.SCOPE, {"enter": None, "leave": None}), site.node),
}
# `tensor.shape`, `variable.dtype`: what they denote.
ATTRIBUTE_KINDS = {"shape": OtherKind.SHAPE, "dtype": OtherKind.DTYPE}
# Uncalled TensorFlow symbols a construct reads (kept as written; a leftover is caught at the end).
REFERENCES = {q: (lambda ev, av, node: node) for q in (
    "tensorflow.GraphKeys.TRAINABLE_VARIABLES", "tensorflow.GraphKeys.GLOBAL_VARIABLES",
    "tensorflow.GraphKeys.UPDATE_OPS", "tensorflow.GraphKeys.LOSSES", "tensorflow.AUTO_REUSE",
    "tensorflow.GraphKeys.REGULARIZATION_LOSSES", *optimizers.OPTIMIZERS, *losses.REDUCTIONS,
)} | tf_logging.REFERENCES | training.REFERENCES


def tf_call(site: "CallSite"):
    return ops.tf_call(site)


def attribute(ev: "Evaluation", base: AV, attr: str, node: cst.Attribute) -> tuple:
    """`base.attr` (not a TensorFlow module member): a method to call later, or what it denotes."""
    kind = kind_of(base)
    if kind == AVKind.HOST:
        return HOST, node
    if isinstance(base, Seq) and attr in base.fields:  # a namedtuple's field (an LSTM state's `.h`)
        return base.items[base.fields.index(attr)], node
    if kind == OtherKind.CELL and attr in ("state_size", "output_size"):  # sizes: Python values, as in TF 1.x
        return HOST, node
    if kind == AVKind.SESSION and attr == "graph":
        return Other(OtherKind.GRAPH, {"drop": True, "what": "the graph"}), node
    if kind in (AVKind.TENSOR, StateKind.VARIABLE) and attr in ATTRIBUTE_KINDS:
        return Other(ATTRIBUTE_KINDS[attr], {"of": base}), node
    if kind in (AVKind.TENSOR, StateKind.VARIABLE) and attr in ("name", "op", "graph", "device"):
        ev.tr.refuse(f"`{ev.tr.code(node)}`: TF 1.x graph names and ops have no TF 2 counterpart in a step")
    if kind == StateKind.VARIABLE and attr == "initializer":
        return Op(variables.GraphOp(OpKind.INIT, info={"of": base})), node
    if kind == OtherKind.SCOPE and attr in ("name", "original_name_scope"):  # `name=scope.name`: the scope's name
        path = base.path + ("/" if attr == "original_name_scope" else "")
        return HOST, cst.SimpleString(repr(path))
    if kind == StateKind.ITERATOR and attr == "initializer":
        return data.iterator_initializer(ev.tr, base.state, base.state.info["dataset"]), node
    if kind == OtherKind.DATASET and attr in ("output_types", "output_shapes", "output_classes"):
        return Other(OtherKind.DATASET_STRUCTURE), node
    return Other(OtherKind.MEMBER, {"of": base, "attr": attr}), node


def method(site: "CallSite"):
    """`obj.attr(...)`: the construct for the receiver's kind, or a Python method of a host object."""
    receiver = site.receiver
    attr = site.qname[2:]
    kind = kind_of(receiver)
    handler = METHODS.get((kind, attr))
    if handler is not None:
        return handler(site)
    if kind == AVKind.INSTANCE:
        return site.tr.classes.call_method(site)
    if kind in (AVKind.TENSOR, StateKind.VARIABLE) and attr == "get_shape" and not site.node.args:
        return Other(OtherKind.SHAPE, {"of": receiver}), site.node
    if kind == OtherKind.SHAPE and attr == "as_list" and "of" in receiver.info:
        # a list of the same dimensions: indexed as the shape is
        return Other(OtherKind.SHAPE, {"of": receiver.info["of"], "as_list": True}), site.node
    if kind == StateKind.VARIABLE and attr in ("assign", "assign_add", "assign_sub"):
        return _assign(site)
    if isinstance(receiver, Mapping) and attr in ("values", "keys", "items") and not site.node.args:
        return (Seq(list(receiver.items), SeqKind.LIST) if attr == "values" else HOST), site.node
    if kind in (AVKind.HOST, AVKind.STRUCTURE, OtherKind.MEMBER):
        if any(site.ev.value_of(a.value).graph for a in site.node.args):
            return Tensor(single=False), site.node
        return (Tensor(single=False) if receiver.graph else HOST), site.node
    site.refuse(f"`.{attr}(...)` of {kind.value} `{site.tr.code(site.original.func)}` is not converted")


def _assign(site: "CallSite"):
    """`v.assign(value)`: an op with an effect, run in the steps that fetch it (same method in TF 2)."""
    name = site.ev.target
    if name is None or site.original is not site.ev.top:
        if any(site.ev.value_of(a.value).graph for a in site.node.args):
            site.refuse("an assign op of a graph value, not bound to a name, is not converted")
        # `sess.run(w.assign(100))`: TF 2 assigns eagerly, there, and the variable holds the value
        return Op(variables.GraphOp(OpKind.ASSIGN, info={"direct": site.node})), site.node
    body = [cst.SimpleStatementLine([cst.Expr(site.node)])]
    # sess.run of an assign op gave the variable's value after the assignment (`GraphOp.info["gives"]`)
    return Op(variables.GraphOp(OpKind.ASSIGN, info={"body": body, "gives": True})), site.node


def _assign_function(site: "CallSite"):
    """`tf.assign(ref, value)` (and `_add`, `_sub`), TF 1.x's function form → `ref.assign(value)`, the method
    TF 2 kept (`name=` dropped; TF 1.x's defaults of `use_locking` and `validate_shape` only)."""
    method = site.qname.rsplit(".", 1)[1]
    ref, ref_av = site.arg(0, "ref")
    value, _ = site.arg(1, "value")
    defaults = {"use_locking": ("None", "False"), "validate_shape": ("True",)}
    for key in site.keywords() - {"ref", "value", "name"}:
        given, _ = site.arg(None, key)
        if key not in defaults or site.tr.code(given) not in defaults[key]:
            site.refuse(f"tf.{method}({key}={site.tr.code(given)}) is not converted")
    if ref is None or value is None or len([a for a in site.node.args if a.keyword is None]) > 2:
        site.refuse(f"tf.{method} with arguments other than ref, value and name is not converted")
    if kind_of(ref_av) != StateKind.VARIABLE:
        site.refuse(f"tf.{method} of `{site.tr.code(ref)}`, not a variable made here, is not converted")
    node = cst.Call(cst.Attribute(ref, cst.Name(method)), [cst.Arg(value)])
    return _assign(dataclasses.replace(site, qname=f"*.{method}", node=node, receiver=ref_av))


def call_state(site: "CallSite"):
    receiver = site.receiver
    if isinstance(receiver, StateRef) and receiver.state.kind == StateKind.SCHEDULE:
        return Tensor([]), site.node
    if isinstance(receiver, StateRef) and receiver.state.kind == StateKind.LAYER and receiver.state.info.get("keras"):
        return keras_layers.call_keras_layer(site)
    site.refuse(f"calling `{site.tr.code(site.original.func)}` ({kind_of(receiver).value}) is not converted")


__all__ = ["CALLS", "CREATORS", "DEFERRED", "METHODS", "REFERENCES", "attribute", "method", "call_state", "tf_call",
           "TFSymbol", "short"]

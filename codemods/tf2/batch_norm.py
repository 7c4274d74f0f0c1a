"""`tf.layers.batch_normalization` → the `LayersBatchNorm` twin, and TF 1.x's UPDATE_OPS as ops of the steps.

TF 1.x's layer is two things besides its variables: its output, and (unless `training` is False) the
update of its moving averages, an op it put in the UPDATE_OPS collection. That op ran only in the
`Session.run`s that reached it: the ones whose update was made under
`tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))`, or that ran `optimize_loss` or
`create_train_op` (which read the collection themselves). A script that never wires it in trains with the
moving averages where they started. So the TF 2 form keeps them apart too:

- the layer is made and built where TF 1.x made its variables (`layers.layer_state`: its name, scope and
  reuse as for every layer), and its output is a value of the steps (`bn(h, training=t)`);
- its update is a value statement of its own, `bn_update = bn.update_moving_averages(h, training=t)`, an
  op of kind UPDATE that the UPDATE_OPS collection lists; `tf.control_dependencies(...)` of such ops makes
  them dependencies (`Comp.deps`) of what is built inside it, so a step runs an update exactly where its
  TF 1.x run did.

A layer whose update two ops of one run would apply (a GAN's discriminator called on real and fake data,
both wired in) is refused by `one_update_per_layer`: TF 1.x ran them in an order it left open.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2.call_args import literal_str
from codemods.tf2.layers import Arg, LayerRow, given_args, layer_state
from codemods.tf2.model import (HOST, GraphOp, Input, Op, OpKind, Other, OtherKind, Seq, SeqKind, State, StateKind,
                                Tensor)
from codemods.tf2.names import short
from codemods.tf2.syntax import names_of
from codemods.tf2.twin_classes import UNKNOWN, literal, twin_class
from codemods.tf2.twins import layers_batch_norm

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite
    from codemods.tf2.program import Program

@dataclass(frozen=True)
class Kind:
    """What differs between TF 1.x's two batch norms (tf.layers' and tf-slim's / tf.contrib.layers')."""

    row: LayerRow
    momentum: str            # its keyword: momentum / decay
    momentum_default: str
    scale_default: bool
    switch: str              # its keyword: training / is_training
    switch_default: bool     # TF 1.x's default: tf.layers' False, slim's True


LAYERS_ROW = LayerRow(
    ("tensorflow.layers.batch_normalization",), layers_batch_norm.CLASS, "batch_normalization",
    (Arg("inputs", 0, None), Arg("axis", 1, None), Arg("momentum", 2, "momentum"), Arg("epsilon", 3, "epsilon"),
     Arg("center", 4, "center"), Arg("scale", 5, "scale"), Arg("training", None, None),
     Arg("trainable", None, None, "True"), Arg("name", None, None), Arg("reuse", None, None),
     Arg("renorm", None, None, "False"), Arg("fused", None, None), Arg("virtual_batch_size", None, None, "None"),
     Arg("adjustment", None, None, "None")),
    ("gamma", "beta"), ("gamma", "beta"), lambda s, a: s)
SLIM_ROW = LayerRow(
    ("slim.batch_norm", "slim.layers.batch_norm", "tensorflow.contrib.layers.batch_norm"), layers_batch_norm.CLASS,
    "BatchNorm",
    (Arg("inputs", 0, None), Arg("decay", 1, "momentum"), Arg("center", 2, "center"), Arg("scale", 3, "scale"),
     Arg("epsilon", 4, "epsilon"), Arg("activation_fn", 5, None), Arg("param_initializers", None, None, "None"),
     Arg("param_regularizers", None, None, "None"), Arg("updates_collections", None, None),
     Arg("is_training", None, None), Arg("reuse", None, None), Arg("variables_collections", None, None, "None"),
     Arg("outputs_collections", None, None, "None"), Arg("trainable", None, None, "True"),
     Arg("batch_weights", None, None, "None"), Arg("fused", None, None), Arg("data_format", None, None, "'NHWC'"),
     Arg("zero_debias_moving_mean", None, None, "False"), Arg("scope", None, None),
     Arg("renorm", None, None, "False"), Arg("adjustment", None, None, "None")),
    ("gamma", "beta"), ("gamma", "beta"), lambda s, a: s)
KINDS = {**{n: Kind(LAYERS_ROW, "momentum", "0.99", True, "training", False) for n in LAYERS_ROW.names},
         **{n: Kind(SLIM_ROW, "decay", "0.999", False, "is_training", True) for n in SLIM_ROW.names}}


def batch_normalization(site: "CallSite"):
    tr = site.tr
    kind = KINDS[site.qname]
    given = given_args(site, kind.row)
    state, shape = layer_state(site, kind.row, given, lambda *a: _create(kind, *a))
    inputs = given["inputs"]
    training = given.get(kind.switch)
    switch = kind.switch_default if training is None else _switch(site, training)
    forced = kind.row is SLIM_ROW and _forced_updates(site, given)
    if switch is False:
        return Tensor(shape), _activated(given, emit.call(state.expr(), inputs))
    training = training if training is not None else cst.Name("True")
    if forced:  # slim's updates_collections=None: the update runs with the output, in place
        call = emit.call(cst.Attribute(state.expr(), cst.Name("normalize_and_update")), inputs, training=training)
        tr.note(f"`{short(site.qname)}(updates_collections=None)`: its moving averages move wherever its output is "
                "computed, as TF 1.x forced them")
        return Tensor(shape), _activated(given, call)
    # the output and the update read the input as it is here: a name of its own (the script may bind the
    # input's name again, `h = tf.layers.batch_normalization(h, ...)`)
    held = tr.namer.fresh(f"{state.name}_input")
    tr.add_comp([emit.assign(held, inputs)], {held}, names_of(inputs) & (tr.graph_names() | site.ev.uses))
    tr.env[held] = Tensor(shape)
    args = [cst.Arg(cst.Name(held)), emit.keyword("training", training)]
    _update_op(site, state, args)
    return Tensor(shape), _activated(given, emit.with_args(emit.call(state.expr()), args))


def _activated(given: dict, output: cst.BaseExpression) -> cst.BaseExpression:
    """slim's `activation_fn` applied to the output, as slim did after normalizing."""
    fn = given.get("activation_fn")
    return output if fn is None or (isinstance(fn, cst.Name) and fn.value == "None") else emit.call(fn, output)


def _forced_updates(site: "CallSite", given: dict) -> bool:
    """slim's `updates_collections`: UPDATE_OPS (the default: the update ops go there), or None (forced)."""
    node = given.get("updates_collections")
    if node is None:
        return False
    if isinstance(node, cst.Name) and node.value == "None":
        return True
    if getattr(site.ev.value_of(node), "qname", None) == "tensorflow.GraphKeys.UPDATE_OPS":
        return False
    site.refuse(f"`{short(site.qname)}(updates_collections={emit.code(node)})`: a collection other than UPDATE_OPS "
                "or None is not converted")


def _switch(site: "CallSite", training) -> object:
    """What the training switch is where TF 1.x built the layer: False, True, or None for a value known only when
    it runs (a fed switch, a Python value)."""
    value = literal(site.tr, training)
    if value in (True, False):
        return value
    av = site.ev.value_of(training)
    if isinstance(av, Input) or av is HOST:
        return None
    site.refuse(f"`{short(site.qname)}` with a training switch `{emit.code(training)}` that is neither a literal, a "
                "Python value nor a fed placeholder is not converted")


def _create(kind: Kind, site: "CallSite", row: LayerRow, given: dict, tf1: str, shape) -> State:
    tr = site.tr
    what = short(site.qname)
    if shape is None or shape[-1] is None or len(shape) < 2:
        site.refuse(f"the input of `{what}` has no known rank and static channel count: the layer could not be "
                    "built where TF 1.x created its variables")
    axis = given.get("axis")
    if axis is not None and emit.code(axis) not in ("-1", str(len(shape) - 1)):
        site.refuse(f"`{what}(axis={emit.code(axis)})`: only the last axis is converted")
    flags = {}
    for key, default in (("center", True), ("scale", kind.scale_default)):
        value = default if given.get(key) is None else literal(tr, given[key])
        if value not in (True, False):
            site.refuse(f"`{what}({key}={emit.code(given[key])})` other than a literal is not converted")
        flags[key] = value
    fused = None if given.get("fused") is None else literal(tr, given["fused"])
    if row is SLIM_ROW:
        # tf-slim: a 2-D input goes to its own fused batch norm (reshaped to 4-D; beta made before gamma), a 4-D
        # one to the core layer (fused); its unfused paths move the moving variance by the biased variance
        if len(shape) not in (2, 4) or fused is False or fused is UNKNOWN:
            site.refuse(f"`{what}` of a {len(shape)}-D input{' with fused=False' if fused is False else ''} (tf-slim's "
                        "unfused path) is not converted")
        fused, beta_first = True, len(shape) == 2
    else:
        if fused is UNKNOWN or (fused is True and len(shape) != 4):
            site.refuse(f"`{what}(fused={emit.code(given['fused'])})` is not converted here")
        if len(shape) == 5 and fused is not False:
            site.refuse(f"`{what}` of a 5-D input (TF 1.x's fused NDHWC kernel) is not converted")
        fused, beta_first = len(shape) == 4 and fused is not False, False  # TF 1.x: the fused kernel for 4-D
    args = []
    for keyword, keras in ((kind.momentum, "momentum"), ("epsilon", "epsilon"), ("center", "center"),
                           ("scale", "scale")):
        if keyword in given:
            if keyword in (kind.momentum, "epsilon") and site.ev.value_of(given[keyword]).graph:
                site.refuse(f"`{what}({keyword}=...)` of a graph value is not converted")
            args.append(emit.keyword(keras, given[keyword]))
    if kind.momentum != "momentum" and kind.momentum not in given:
        args.append(emit.keyword("momentum", cst.parse_expression(kind.momentum_default)))
    if "scale" not in given and not kind.scale_default:
        args.append(emit.keyword("scale", cst.Name("False")))
    if fused:
        args.append(emit.keyword("fused", cst.Name("True")))
    if beta_first:
        args.append(emit.keyword("beta_first", cst.Name("True")))
        # tf-slim's own fused path took its decay as a Python float (the core layer's as a float32 tensor)
        args.append(emit.keyword("float32_decay", cst.Name("False")))
    name = tr.namer.fresh(tf1.replace("/", "_"))
    ctor = emit.with_args(emit.call(cst.Name(twin_class(tr, layers_batch_norm))), args)
    build = cst.Tuple([cst.Element(cst.Name("None"))] * (len(shape) - 1) + [cst.Element(shape[-1])])
    state = State(StateKind.LAYER, name, tf1, tr.line, trainable=True,
                  variables=emit.expr("{layer}.trainable_variables", layer=name))
    state.info["row"] = row
    order = ("beta", "gamma") if beta_first else ("gamma", "beta")
    state.info["vars"] = [(f"{tf1}/{v}", emit.expr(f"{name}.{v}")) for v in order
                          if flags["scale" if v == "gamma" else "center"]]
    state.info["other_vars"] = [(f"{tf1}/{v}", emit.expr(f"{name}.{v}")) for v in ("moving_mean", "moving_variance")]
    tr.add_state(state, [emit.assign(name, ctor), emit.stmt("{layer}.build({shape})", layer=name, shape=build)])
    tr.note(f"`{what}` → `{layers_batch_norm.CLASS}` `{name}`, an exact twin built here "
            f"(the variables of `{tf1}`, as TF 1.x made them{_FUSED if fused else ''})")
    return state


_FUSED = "; TF 1.x's fused kernel, which moves the moving variance toward the unbiased batch variance"


def _update_op(site: "CallSite", state: State, args: list) -> None:
    """The layer's UPDATE_OPS entry: a value statement of its own that the steps run where TF 1.x ran it."""
    tr = site.tr
    name = tr.namer.fresh(f"{state.name}_update")
    call = emit.with_args(emit.call(cst.Attribute(state.expr(), cst.Name("update_moving_averages"))), args)
    tr.add_comp([emit.assign(name, call)], {name}, set(), deps=list(tr.control), update_of=state.tf1_name)
    op = GraphOp(OpKind.UPDATE, name=name, info={"layer": state.tf1_name, "where": tr.scopes.top.name_path})
    tr.env[name] = Op(op)
    tr.update_ops.append(op)


def collection(site: "CallSite", scope) -> tuple:
    """`tf.get_collection(tf.GraphKeys.UPDATE_OPS[, scope])`: the update ops made so far, as a list of them."""
    tr = site.tr
    ops = list(tr.update_ops)
    if scope is not None:
        pattern = literal_str(scope)
        if pattern is None:
            site.refuse("tf.get_collection(UPDATE_OPS, scope=<expression>) is not converted")
        ops = [op for op in ops if re.match(pattern, f"{op.info['where']}/" if op.info["where"] else "")
               or re.match(pattern, op.info["layer"])]
    tr.note(f"tf.get_collection(UPDATE_OPS) → the {len(ops)} batch normalization update(s) made so far")
    return Seq([Op(op) for op in ops], SeqKind.LIST), cst.List([cst.Element(cst.Name(op.name)) for op in ops])


def control_dependencies(site: "CallSite"):
    """`with tf.control_dependencies(update_ops):` over UPDATE_OPS (or an empty list): what is built inside
    depends on those updates, so a step that runs it runs them."""
    site.only({"control_inputs"}, 1)
    node, av = site.arg(0, "control_inputs")
    if not (isinstance(av, Seq) and all(isinstance(i, Op) and i.op.kind == OpKind.UPDATE for i in av.items)):
        site.refuse(f"tf.control_dependencies({emit.code(node)}): only the UPDATE_OPS collection (batch "
                    "normalization's moving averages) is converted as a dependency")
    names = [i.op.name for i in av.items]

    def enter(tr: "Program", item):
        tr.control.extend(names)

    def leave(tr: "Program"):
        del tr.control[len(tr.control) - len(names):]
    return Other(OtherKind.SCOPE, {"enter": enter, "leave": leave}), site.node


def one_update_per_layer(comps: list, what: str, refuse) -> None:
    """Refuse a step whose value statements apply one layer's moving-average update twice."""
    seen = set()
    for c in comps:
        if c.update_of is None:
            continue
        if c.update_of in seen:
            refuse(f"the run of {what} would update the moving averages of batch normalization layer `{c.update_of}` "
                   "twice (the layer is called twice, with a training switch not known here to be False, and both "
                   "updates are wired in): TF 1.x ran the two update ops in an order it left open, so the result is "
                   "not defined: not converted")
        seen.add(c.update_of)


def fetched(av) -> bool:
    """`av` is, or holds, an update op of UPDATE_OPS (which `sess.run` of it would fetch)."""
    if isinstance(av, Op):
        return av.op.kind == OpKind.UPDATE
    return isinstance(av, Seq) and any(fetched(i) for i in av.items)


CALLS = {**{n: batch_normalization for n in KINDS}, "tensorflow.control_dependencies": control_dependencies}
CREATORS = set(KINDS)

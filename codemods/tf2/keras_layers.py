"""Keras layer objects in TF 1.x graph code → the same object, built where TF 1.x created its variables.

`dense = tf.keras.layers.Dense(16)` then `h = dense(x)`: TF 1.x made the layer's variables at its
first call, from `x`'s static shape, named after the layer under the scopes. The TF 2 form makes
the object where the script did and builds it at that first call (`dense.build((None, 8))`: the
same variables in the same order); the call itself is a value of the steps. `KERAS_LAYERS` lists
the classes tf1clip knows (their TF 1.x names, variables and output shapes); any other is refused.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit, step_reads
from codemods.tf2 import shapes as shp
from codemods.tf2.layers import conv_shape, is_false
from codemods.tf2.model import State, StateKind, StateRef, Tensor

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite


KERAS_LAYERS = {  # tf.keras class → (TF 1.x base name, variables, output shape from (input shape, ctor args))
    "Dense": ("dense", ("kernel", "bias"), lambda s, a: None if s is None else s[:-1] + [a.get(0, a.get("units"))]),
    "Embedding": ("embedding", ("embeddings",), lambda s, a: None if s is None else s + [a.get(1, a.get("output_dim"))]),
    "Conv2D": ("conv2d", ("kernel", "bias"), lambda s, a: conv_shape(s, {
        "filters": a.get(0, a.get("filters")), "kernel_size": a.get(1, a.get("kernel_size")),
        "strides": a.get(2, a.get("strides")), "padding": a.get(3, a.get("padding")), "_padding": "VALID"})),
}


def keras_layer(site: "CallSite"):
    """`tf.keras.layers.Dense(...)`: a Keras layer object, created here, built at its first call
    (where TF 1.x created its variables)."""
    tr = site.tr
    cls = site.qname.rsplit(".", 1)[1]
    if cls not in KERAS_LAYERS or site.starred():
        site.refuse(f"`tf.keras.layers.{cls}` in graph code is not in tf1clip's table")
    base, variables, rule = KERAS_LAYERS[cls]
    given = {}
    for i, a in enumerate(site.node.args):
        given[a.keyword.value if a.keyword is not None else i] = a.value
    name_node = given.get("name")
    name = name_node.evaluated_value if isinstance(name_node, cst.SimpleString) else None
    if name_node is not None and name is None:
        site.refuse("a Keras layer with a name that is not a string literal is not converted")
    tf1 = tr.scopes.layer_name(base, name)
    top = site.ev.top
    if site.target is not None:
        py = site.target
    elif isinstance(top, cst.Call) and top.func is site.original and site.ev.target and "/" not in tf1:
        py = tr.namer.fresh(f"{site.ev.target}_layer")  # `hidden = tf.keras.layers.Dense(16)(x)`
    else:
        py = tr.namer.fresh(tf1.replace("/", "_"))
    state = State(StateKind.LAYER, py, tf1, tr.line, trainable=not is_false(given.get("trainable")),
                  variables=emit.expr("{layer}.trainable_variables", layer=py))
    state.info.update(keras=cls, rule=rule, args=given, built=False,
                      vars=[(f"{tf1}/{v}", emit.expr("{layer}." + v, layer=py)) for v in variables])
    node = site.node.with_changes(func=tr.tf(site.qname))
    tr.add_state(state, [emit.assign(py, node)])
    return StateRef(state), cst.Name(py)


def call_keras_layer(site: "CallSite"):
    state = site.receiver.state
    tr = site.tr
    if len(site.node.args) != 1 or site.node.args[0].keyword is not None:
        site.refuse("a Keras layer called with more than its input is not converted")
    inputs = site.node.args[0].value
    shape = shp.of(site.ev.value_of(inputs))
    if not state.info["built"]:
        if shape is None or shape[-1] is None:
            site.refuse(f"the input of Keras layer `{state.name}` has no known static width: it could not be built "
                        "where TF 1.x created its variables")
        step_reads.check_dims(tr, [shape[-1]], tr.line, f"the build of Keras layer `{state.name}`")
        dims = [None] * (len(shape) - 1) + [shape[-1]]
        if state.info["keras"] == "Embedding":
            dims = [None] * len(shape)
        tr.pending.append(emit.stmt("{layer}.build({shape})", layer=state.expr(),
                                    shape=cst.Tuple([cst.Element(d if d is not None else cst.Name("None"))
                                                     for d in dims])))
        state.info["built"] = True
    return Tensor(state.info["rule"](shape, state.info["args"])), site.node


CALLS = {f"tensorflow.keras.layers.{c}": keras_layer for c in KERAS_LAYERS}
CREATORS = set(CALLS)

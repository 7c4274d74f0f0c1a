"""TF 1.x layers in graph code → Keras 3 layers created once, or the plain op they compute.

A layer call like `tf.layers.dense(x, 16)` is two things in TF 1.x: state (a kernel and a bias,
created at that line from `x`'s static shape, named `dense/kernel` under the scopes) and a
value (its output). The TF 2 form keeps both apart: the Keras layer is created and built there
(`dense = tf.keras.layers.Dense(16)`, `dense.build((None, 8))`: the same variables in the same
order), and the value statement calls it inside the steps (`h = dense(x)`). Where the scope
reuses the layer (`reuse=True`, a GAN's second `discriminator(...)`) the same object is used.

Each construct is one row of `LAYERS` (TF 1.x names → Keras class, arguments, defaults, the
TF 1.x variable names, the output shape): an exact twin of a layer Keras computes differently
is one more row whose `keras` is the twin's class. Layers without variables become the op
(`max_pooling2d` → `tf.nn.max_pool2d`, `flatten` → `tf.reshape`, `dropout` → `tf.nn.dropout`
where TF 1.x trained with it, the input itself where it did not).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from codemods.tf2 import emit, regularization, step_reads
from codemods.tf2.constants import folded_str
from codemods.tf2 import shapes as shp
from codemods.tf2.model import HOST, Input, Other, State, StateKind, StateRef, Tensor
from codemods.tf2.scopes import UNKNOWN, reuse_flag

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite


@dataclass(frozen=True)
class Arg:
    tf1: str                        # TF 1.x keyword
    position: Optional[int]         # TF 1.x positional index
    keras: Optional[str]            # Keras keyword; None: only TF 1.x's default value is accepted
    default: Optional[str] = None   # that default (source), for keras=None


@dataclass(frozen=True)
class LayerRow:
    names: tuple                    # canonical TF 1.x names
    keras: str                      # the Keras 3 class (or an exact twin)
    base: str                       # TF 1.x's default layer (scope) name
    args: tuple                     # Arg rows; any other argument is refused
    variables: tuple                # TF 1.x variable names under the layer, in creation order
    keras_variables: tuple          # the Keras attributes holding them, same order
    shape: Callable                 # (input shape, {tf1 keyword: node}) → output shape
    extra: tuple = ()               # Keras keywords TF 1.x's defaults need: (keyword, tf1 arg, source)
    why: str = ""


def _dense_shape(s, a):
    return None if s is None else s[:-1] + [a.get("units") if a.get("units") is not None else a.get("num_outputs")]


def conv_shape(s, a):
    if s is None or len(s) != 4:
        return None
    k = shp.pair(a.get("kernel_size"), 1)
    st = shp.pair(a.get("strides", a.get("stride")), 1)
    pad = shp.padding_of(a.get("padding"), a["_padding"])
    if k is None or st is None or pad is None:
        return None
    filters = a.get("filters") if a.get("filters") is not None else a.get("num_outputs")
    return [s[0], shp.conv_output(s[1], k[0], st[0], pad), shp.conv_output(s[2], k[1], st[1], pad), filters]


def _one(node, default: int):
    """A 1-D kernel size or stride: an int, or a one-element tuple or list."""
    if node is None:
        return shp.integer(default)
    if isinstance(node, (cst.List, cst.Tuple)):
        return node.elements[0].value if len(node.elements) == 1 else None
    return node


def conv1d_shape(s, a):
    if s is None or len(s) != 3:
        return None
    k, st = _one(a.get("kernel_size"), 1), _one(a.get("strides"), 1)
    pad = shp.padding_of(a.get("padding"), "VALID")
    if k is None or st is None or pad is None:
        return None
    return [s[0], shp.conv_output(s[1], k, st, pad), a.get("filters")]


def conv_transpose_shape(s, a):
    """tf.layers.conv2d_transpose's output, as TF 1.x's layer (Keras' own `deconv_output_length`, no
    output padding) computed it: `size * stride`, plus `max(kernel - stride, 0)` when VALID."""
    if s is None or len(s) != 4:
        return None
    k, st = shp.pair(a.get("kernel_size"), 1), shp.pair(a.get("strides"), 1)
    pad = shp.padding_of(a.get("padding"), "VALID")
    if k is None or st is None or pad is None:
        return None
    sizes = []
    for size, kernel, stride in zip(s[1:3], k, st):
        grown = shp.mul(size, stride)
        if pad == "VALID":
            extra = None if shp.literal(kernel) is None or shp.literal(stride) is None else \
                shp.integer(max(shp.literal(kernel) - shp.literal(stride), 0))
            grown = shp.add(grown, extra)
        sizes.append(grown)
    return [s[0], *sizes, a.get("filters")]


_INIT = (Arg("kernel_initializer", None, "kernel_initializer"), Arg("bias_initializer", None, "bias_initializer"),
         Arg("trainable", None, "trainable"), Arg("name", None, None), Arg("reuse", None, None),
         Arg("kernel_regularizer", None, None), Arg("bias_regularizer", None, None))  # their terms: `regularization`
_SLIM = (Arg("weights_initializer", None, "kernel_initializer"),
         Arg("biases_initializer", None, "bias_initializer"), Arg("scope", None, None), Arg("reuse", None, None),
         Arg("weights_regularizer", None, None), Arg("biases_regularizer", None, None),
         Arg("trainable", None, "trainable"), Arg("normalizer_fn", None, None, "None"))
_RELU = (("activation", "activation_fn", "tf.nn.relu"),)

LAYERS = [
    LayerRow(("tensorflow.layers.dense",), "tensorflow.keras.layers.Dense", "dense",
             (Arg("inputs", 0, None), Arg("units", 1, "units"), Arg("activation", 2, "activation"),
              Arg("use_bias", 3, "use_bias"), *_INIT),
             ("kernel", "bias"), ("kernel", "bias"), _dense_shape),
    LayerRow(("slim.fully_connected", "slim.layers.fully_connected", "tensorflow.contrib.layers.fully_connected"),
             "tensorflow.keras.layers.Dense", "fully_connected",
             (Arg("inputs", 0, None), Arg("num_outputs", 1, "units"), Arg("activation_fn", 2, "activation"), *_SLIM),
             ("weights", "biases"), ("kernel", "bias"), _dense_shape, _RELU,
             "slim's activation_fn defaults to relu"),
    LayerRow(("tensorflow.layers.conv2d",), "tensorflow.keras.layers.Conv2D", "conv2d",
             (Arg("inputs", 0, None), Arg("filters", 1, "filters"), Arg("kernel_size", 2, "kernel_size"),
              Arg("strides", 3, "strides"), Arg("padding", 4, "padding"),
              Arg("data_format", 5, None, "'channels_last'"), Arg("dilation_rate", 6, None, "(1, 1)"),
              Arg("activation", 7, "activation"), Arg("use_bias", 8, "use_bias"), *_INIT),
             ("kernel", "bias"), ("kernel", "bias"), lambda s, a: conv_shape(s, {**a, "_padding": "VALID"})),
    LayerRow(("tensorflow.layers.conv1d",), "tensorflow.keras.layers.Conv1D", "conv1d",
             (Arg("inputs", 0, None), Arg("filters", 1, "filters"), Arg("kernel_size", 2, "kernel_size"),
              Arg("strides", 3, "strides"), Arg("padding", 4, "padding"),
              Arg("data_format", 5, None, "'channels_last'"), Arg("dilation_rate", 6, None, "1"),
              Arg("activation", 7, "activation"), Arg("use_bias", 8, "use_bias"), *_INIT),
             ("kernel", "bias"), ("kernel", "bias"), conv1d_shape),
    LayerRow(("tensorflow.layers.conv2d_transpose",), "tensorflow.keras.layers.Conv2DTranspose", "conv2d_transpose",
             (Arg("inputs", 0, None), Arg("filters", 1, "filters"), Arg("kernel_size", 2, "kernel_size"),
              Arg("strides", 3, "strides"), Arg("padding", 4, "padding"),
              Arg("data_format", 5, None, "'channels_last'"), Arg("activation", 6, "activation"),
              Arg("use_bias", 7, "use_bias"), *_INIT),
             ("kernel", "bias"), ("kernel", "bias"), conv_transpose_shape),
    LayerRow(("slim.conv2d", "slim.layers.conv2d", "tensorflow.contrib.layers.conv2d"),
             "tensorflow.keras.layers.Conv2D", "Conv",
             (Arg("inputs", 0, None), Arg("num_outputs", 1, "filters"), Arg("kernel_size", 2, "kernel_size"),
              Arg("stride", 3, "strides"), Arg("padding", 4, "padding"), Arg("activation_fn", None, "activation"),
              *_SLIM),
             ("weights", "biases"), ("kernel", "bias"), lambda s, a: conv_shape(s, {**a, "_padding": "SAME"}),
             (*_RELU, ("padding", "padding", "'same'")), "slim's conv2d pads SAME and applies relu by default"),
]
BY_NAME = {n: row for row in LAYERS for n in row.names}


def given_args(site: "CallSite", row: LayerRow) -> dict:
    """TF 1.x keyword → node, for every argument given; refuses any the row does not know."""
    known = {a.tf1: a for a in row.args}
    by_pos = {a.position: a for a in row.args if a.position is not None}
    out = {}
    pos = 0
    for a in site.node.args:
        if a.star:
            site.refuse(f"`{site.qname}` with *args/**kwargs is not converted")
        if a.keyword is None:
            spec = by_pos.get(pos)
            pos += 1
        else:
            spec = known.get(a.keyword.value)
        if spec is None:
            what = a.keyword.value if a.keyword is not None else f"positional argument {pos}"
            site.refuse(f"`{_short(site.qname)}` argument `{what}` is not mapped to Keras")
        out[spec.tf1] = a.value
    for spec in row.args:
        if spec.keras is None and spec.default is not None and spec.tf1 in out:
            if emit.code(out[spec.tf1]).replace('"', "'") != spec.default:
                site.refuse(f"`{_short(site.qname)}({spec.tf1}={emit.code(out[spec.tf1])})` is not mapped to Keras")
    return out


def _short(q: str) -> str:
    return q.replace("tensorflow.", "tf.")


def layer(site: "CallSite"):
    row = BY_NAME[site.qname]
    given = given_args(site, row)
    state, shape = layer_state(site, row, given, _create)
    out_shape = row.shape(shape, given)
    return Tensor(out_shape), emit.call(state.expr(), given["inputs"])


def layer_state(site: "CallSite", row: LayerRow, given: dict, create: Callable) -> tuple:
    """(the layer's State, its input's static shape): the layer TF 1.x's scopes and `reuse` name here, made by
    `create(site, row, given, tf1 name, shape)` where TF 1.x made its variables, or the one it reuses."""
    tr = site.tr
    inputs = given.get("inputs")
    if inputs is None:
        site.refuse(f"`{_short(site.qname)}` without its input")
    in_av = site.ev.value_of(inputs)
    shape = shp.of(in_av)
    name_node = given.get("name", given.get("scope"))
    name = folded_str(name_node)
    if name_node is not None and name is None:
        site.refuse(f"`{_short(site.qname)}` with a name that is not a string of constants is not converted")
    reuse_arg = given.get("reuse")
    asked = reuse_flag(reuse_arg, getattr(site.ev.value_of(reuse_arg), "qname", None) if reuse_arg else None)
    if asked is UNKNOWN:
        site.refuse(f"`{_short(site.qname)}(reuse={emit.code(reuse_arg)})`: a reuse that is not True, False, None "
                    "or tf.AUTO_REUSE is not converted")
    if asked is not None and name is None:  # TF 1.x opens the base name itself then, not its next free one
        site.refuse(f"`{_short(site.qname)}(reuse={emit.code(reuse_arg)})` without a name is not converted")
    tf1 = tr.scopes.layer_name(row.base, name)
    existing = next((s for s in tr.states if s.kind == StateKind.LAYER and s.tf1_name == tf1), None)
    reuse = asked or tr.scopes.reuse()  # the layer's own reuse opens its scope: True or AUTO_REUSE wins
    if existing is not None:
        if not reuse:
            site.refuse(f"layer `{tf1}` exists already and is not reused here (TF 1.x raised ValueError)")
        if existing.info["row"] is not row:
            site.refuse(f"layer `{tf1}` is reused by a different kind of layer")
        tr.note(f"`{_short(site.qname)}` reuses layer `{tf1}` (line {existing.line}): the same Keras layer")
        return existing, shape
    if reuse is True:
        site.refuse(f"layer `{tf1}` does not exist yet and its scope has reuse=True (TF 1.x raised ValueError)")
    return create(site, row, given, tf1, shape), shape


# TF 1.x initializer arguments whose default is None: the variable is made by get_variable with no
# initializer, so inside variable_scope(initializer=...) it gets the scope's (the others default to
# an initializer of their own: tf.layers' bias zeros, slim's xavier weights and zero biases).
NONE_DEFAULT_INITIALIZERS = frozenset({"kernel_initializer"})


def _scope_initializer(site: "CallSite", row: LayerRow, given: dict, args: list) -> list:
    """`args` with the variable_scope's initializer given to each variable TF 1.x made without one."""
    for spec in row.args:
        if not spec.tf1.endswith("_initializer") or spec.tf1 == "biases_initializer":  # slim: None is no biases
            continue
        value = given.get(spec.tf1)
        none = isinstance(value, cst.Name) and value.value == "None"
        if none or (value is None and spec.tf1 in NONE_DEFAULT_INITIALIZERS):
            args = [a for a in args if not (a.keyword is not None and a.keyword.value == spec.keras)]
            args.append(emit.keyword(spec.keras, site.tr.scopes.initializer()))
            site.tr.note(f"`{_short(site.qname)}`'s {spec.tf1}: the variable_scope's initializer, as in TF 1.x "
                         "(its variable was made with none of its own)")
    return args


def _create(site: "CallSite", row: LayerRow, given: dict, tf1: str, shape) -> State:
    tr = site.tr
    if shape is None or shape[-1] is None:
        site.refuse(f"the input of `{_short(site.qname)}` has no known static width: the Keras layer could not "
                    "be built where TF 1.x created its variables")
    step_reads.check_dims(tr, [shape[-1]], tr.line, f"the build of `{_short(site.qname)}`'s Keras layer")
    args = []
    for spec in row.args:
        if spec.keras is None or spec.tf1 not in given:
            continue
        value = given[spec.tf1]
        if spec.position is not None and spec.position <= 1 and spec.tf1 not in ("inputs",):
            args.append(cst.Arg(value))
        else:
            args.append(emit.keyword(spec.keras, value))
    defaulted = False
    for keras, tf1_arg, source in row.extra:
        if tf1_arg not in given:
            defaulted = True
            args.append(emit.keyword(keras, emit.expr(source.replace("tf.", "{tf}."), tf=cst.Name(tr.alias))
                                     if "tf." in source else cst.parse_expression(source)))
    for i, a in enumerate(args):
        if a.keyword is not None and a.keyword.value == "activation" and isinstance(a.value, cst.Name) \
                and a.value.value == "None":
            args[i] = None
    args = [a for a in args if a is not None]
    if tr.scopes.initializer() is not None:
        args = _scope_initializer(site, row, given, args)
    if "biases_initializer" in given and isinstance(given["biases_initializer"], cst.Name) \
            and given["biases_initializer"].value == "None":
        args = [a for a in args if not (a.keyword and a.keyword.value == "bias_initializer")]
        args.append(emit.keyword("use_bias", cst.Name("False")))
    if "/" not in tf1 and "name" not in given and "scope" not in given and site.ev.target is not None and \
            site.original is site.ev.top:
        name = tr.namer.fresh(f"{site.ev.target}_layer")  # `hidden = tf.layers.dense(...)`: `hidden_layer`
    else:
        name = tr.namer.fresh(tf1.replace("/", "_"))
    ctor = emit.with_args(emit.call(tr.tf(row.keras)), args)
    build_shape = cst.Tuple([cst.Element(d if d is not None else cst.Name("None"))
                             for d in [None] * (len(shape) - 1) + [shape[-1]]])
    build = emit.stmt("{layer}.build({shape})", layer=name, shape=build_shape)
    first = emit.with_comment(emit.assign(name, ctor), row.why if defaulted else None)
    state = State(StateKind.LAYER, name, tf1, tr.line, trainable=not is_false(given.get("trainable")),
                  variables=emit.expr("{layer}.trainable_variables", layer=name))
    state.info["row"] = row
    state.info["vars"] = [(f"{tf1}/{v}", emit.expr("{layer}." + k, layer=name))
                          for v, k in zip(row.variables, row.keras_variables)
                          if not (k == "bias" and any(a.keyword and a.keyword.value == "use_bias"
                                                      and isinstance(a.value, cst.Name) and a.value.value == "False"
                                                      for a in args))]
    tr.add_state(state, [first, build])
    made = {tf1_name for tf1_name, _ in state.info["vars"]}
    regularization.add_terms(site, state, given, {k: f"{tf1}/{v}" for v, k in zip(row.variables, row.keras_variables)
                                                  if f"{tf1}/{v}" in made})
    tr.note(f"`{_short(site.qname)}` → Keras layer `{name}`, built here ({', '.join(row.variables)} of `{tf1}`, "
            "created as TF 1.x created them)")
    return state


def is_false(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


# -- layers without variables ---------------------------------------------------------------------------
POOLS = {
    "tensorflow.layers.max_pooling2d": ("tensorflow.nn.max_pool2d", ("inputs", "pool_size", "strides", "padding"),
                                        "VALID"),
    "tensorflow.layers.average_pooling2d": ("tensorflow.nn.avg_pool2d", ("inputs", "pool_size", "strides", "padding"),
                                            "VALID"),
    "slim.max_pool2d": ("tensorflow.nn.max_pool2d", ("inputs", "kernel_size", "stride", "padding"), "VALID"),
    "tensorflow.contrib.layers.max_pool2d": ("tensorflow.nn.max_pool2d", ("inputs", "kernel_size", "stride",
                                                                          "padding"), "VALID"),
    "slim.avg_pool2d": ("tensorflow.nn.avg_pool2d", ("inputs", "kernel_size", "stride", "padding"), "VALID"),
}


def pool(site: "CallSite"):
    tf2, params, default_padding = POOLS[site.qname]
    site.only(set(params) | {"name", "scope", "data_format"}, len(params))
    given = {p: site.arg(i, p)[0] for i, p in enumerate(params)}
    data_format, _ = site.arg(None, "data_format")
    if data_format is not None and emit.code(data_format).strip("'\"").lower() not in ("channels_last", "nhwc"):
        site.refuse(f"`{_short(site.qname)}` with data_format={emit.code(data_format)} is not converted")
    inputs, size, stride = given[params[0]], given[params[1]], given[params[2]]
    if stride is None and site.qname.startswith("slim.") or stride is None and "contrib" in site.qname:
        stride = cst.Integer("2")
    if size is None or stride is None:
        site.refuse(f"`{_short(site.qname)}` without its pool size and strides")
    pad = shp.padding_of(given[params[3]], default_padding)
    if pad is None:
        site.refuse(f"`{_short(site.qname)}` padding is not a string literal")
    shape = shp.of(site.ev.value_of(inputs))
    k, s = shp.pair(size, 1), shp.pair(stride, 1)
    out = None
    if shape is not None and len(shape) == 4 and k is not None and s is not None:
        out = [shape[0], shp.conv_output(shape[1], k[0], s[0], pad), shp.conv_output(shape[2], k[1], s[1], pad),
               shape[3]]
    node = emit.call(site.tr.tf(tf2), inputs, ksize=size, strides=stride, padding=cst.SimpleString(f'"{pad}"'))
    return Tensor(out), node


def flatten(site: "CallSite"):
    site.only({"inputs", "name", "scope", "outputs_collections", "data_format"}, 1)
    inputs, av = site.arg(0, "inputs")
    shape = shp.of(av)
    size = None
    if shape is not None and len(shape) >= 2:
        size = shape[1]
        for d in shape[2:]:
            size = shp.mul(size, d)
    tr = site.tr
    if size is not None:
        node = emit.call(tr.tf("tensorflow.reshape"), inputs, cst.List([cst.Element(shp.integer(-1)),
                                                                         cst.Element(size)]))
        return Tensor([shape[0], size]), node
    node = emit.expr("{tf}.reshape({x}, [{tf}.shape({x})[0], -1])", tf=cst.Name(tr.alias), x=inputs)
    return Tensor(None if shape is None else [shape[0], None]), node


def dropout(site: "CallSite"):
    """tf.layers.dropout(x, rate, noise_shape, seed, training=False) and slim's
    dropout(x, keep_prob=0.5, noise_shape, is_training=True): dropout only where TF 1.x's
    training switch was on (a placeholder switch: chosen in the step)."""
    tr = site.tr
    slim = site.qname.startswith("slim.") or "contrib" in site.qname
    params = ("inputs", "keep_prob", "noise_shape", "is_training") if slim else \
        ("inputs", "rate", "noise_shape", "seed", "training")
    site.only(set(params) | {"name", "scope", "outputs_collections"}, len(params))
    given = {p: site.arg(i, p) for i, p in enumerate(params)}
    inputs, in_av = given["inputs"]
    if slim:
        keep = given["keep_prob"][0] or cst.Float("0.5")
        rate = cst.BinaryOperation(cst.Integer("1"), cst.Subtract(), emit.paren(keep))
        training, training_av = given["is_training"]
        default_on = True
    else:
        rate = given["rate"][0] or cst.Float("0.5")
        training, training_av = given["training"]
        default_on = False
    on = default_on if training is None else None
    if isinstance(training, cst.Name) and training.value in ("True", "False"):
        on = training.value == "True"
    shape = shp.of(in_av)
    if on is False:
        tr.note(f"`{_short(site.qname)}` with training off is the identity in TF 1.x: its input is used")
        return Tensor(shape), inputs
    if given["noise_shape"][0] is not None and not _none(given["noise_shape"][0]):
        site.refuse(f"`{_short(site.qname)}` with a noise_shape is not converted")
    args = {"rate": rate}
    seed = given.get("seed", (None, None))[0]
    if seed is not None and not _none(seed):
        args["seed"] = seed
    drop = emit.call(tr.tf("tensorflow.nn.dropout"), inputs, **args)
    if on is True:
        return Tensor(shape), drop
    if isinstance(training_av, Input) or training_av is HOST or training_av.graph:
        tr.note(f"`{_short(site.qname)}`: dropout where `{emit.code(training)}` is true, the input where it is "
                "false, as TF 1.x's training switch did")
        return Tensor(shape), cst.IfExp(test=training, body=drop, orelse=inputs)
    site.refuse(f"`{_short(site.qname)}` with training={emit.code(training)} is not converted")


def one_hot_encoding(site: "CallSite"):
    """slim's `one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0)`: TF 1.15's
    `tf.one_hot(labels, num_classes, on_value=on_value, off_value=off_value)` (float32, from its float
    on and off values), no variables."""
    site.only({"labels", "num_classes", "on_value", "off_value", "outputs_collections", "scope"}, 4)
    labels, av = site.arg(0, "labels")
    depth, _ = site.arg(1, "num_classes")
    if labels is None or depth is None:
        site.refuse(f"`{_short(site.qname)}` without its labels and number of classes")
    on, off = site.arg(2, "on_value")[0] or cst.Float("1.0"), site.arg(3, "off_value")[0] or cst.Float("0.0")
    if site.arg(None, "outputs_collections")[0] is not None and not _none(site.arg(None, "outputs_collections")[0]):
        site.refuse(f"`{_short(site.qname)}(outputs_collections=...)`: graph collections are not converted")
    shape = shp.of(av)
    node = emit.call(site.tr.tf("tensorflow.one_hot"), labels, depth, on_value=on, off_value=off)
    return Tensor(None if shape is None else shape + [depth]), node


def _none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"



FLATTEN = ("tensorflow.layers.flatten", "tensorflow.contrib.layers.flatten", "slim.flatten", "slim.layers.flatten")
DROPOUT = ("tensorflow.layers.dropout", "slim.dropout", "tensorflow.contrib.layers.dropout")

CALLS = {
    **{n: layer for n in BY_NAME},
    **{n: pool for n in POOLS},
    **{n: flatten for n in FLATTEN},
    **{n: dropout for n in DROPOUT},
    **{n: one_hot_encoding for n in ("slim.one_hot_encoding", "tensorflow.contrib.layers.one_hot_encoding")},
}
CREATORS = set(BY_NAME)
__all__ = ["CALLS", "CREATORS", "LAYERS", "Other", "StateRef"]

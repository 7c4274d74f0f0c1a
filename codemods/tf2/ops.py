"""Plain TensorFlow calls: an op computing a value, or a host utility; and their static shapes.

Every call that is not a construct with state goes through `api_changes.to_tf2`, which keeps its
meaning in TF 2 (argument renames and reorders, `keep_prob` → `rate`, ...) or refuses. A call
under a module whose constructs create variables or belong to the session machinery, but with
no row in tf1clip's tables, is refused by name rather than passed on.
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit, flags
from codemods.tf2 import shapes as shp
from codemods.tf2.model import HOST, Other, OtherKind, Seq, SeqKind, StateRef, Tensor, one_tensor
from codemods.tf2.names import HOST_CALLS, short
from codemods.tf2.api_changes import NoTF2Mapping, to_tf2

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

# Modules whose calls create variables, sessions or graph machinery: refused unless a construct knows them.
UNMAPPED = ("tensorflow.contrib.", "tensorflow.nn.rnn_cell.", "tensorflow.layers.", "slim.", "tensorflow.keras.",
            "tensorflow.make_template", "tensorflow.nn.dynamic_rnn", "tensorflow.nn.static_rnn",
            "tensorflow.nn.bidirectional_dynamic_rnn", "tensorflow.get_local_variable", "tensorflow.train.",
            "tensorflow.summary.", "tensorflow.data.", "tensorflow.losses.", "tensorflow.metrics.",
            "tensorflow.estimator", "tensorflow.Session", "tensorflow.InteractiveSession", "tensorflow.Graph",
            "tensorflow.get_default_graph", "tensorflow.add_to_collection", "tensorflow.get_collection",
            "tensorflow.global_variables", "tensorflow.local_variables", "tensorflow.variables_initializer",
            "tensorflow.local_variables_initializer", "tensorflow.tables_initializer", "tensorflow.assign",
            "tensorflow.group", "tensorflow.control_dependencies", "tensorflow.py_func", "tensorflow.Print",
            "tensorflow.while_loop", "tensorflow.scatter_", "tensorflow.image.",
            "tensorflow.io.", "tensorflow.decode_", "tensorflow.parse_", "tensorflow.FIFOQueue",
            "tensorflow.examples.")
SPARSE_READS = ("tensorflow.nn.embedding_lookup", "tensorflow.gather")
SAMPLED_LOSSES = ("tensorflow.nn.nce_loss", "tensorflow.nn.sampled_softmax_loss")  # they gather their weights


def _arg(site: "CallSite", i, kw):
    return site.arg(i, kw)


def _first_shape(site):
    node, av = site.arg(0, "x")
    if node is None:
        node, av = site.arg(0, "features") if site.arg(0, "features")[0] is not None else site.arg(0, "input")
    return shp.of(av) if av is not None else None


def _literal_shape(site, index, keyword):
    """A shape argument: a list literal, or `tf.shape(t)` (t's static shape, as TF 1.x's shape inference read
    it)."""
    node, _ = site.arg(index, keyword)
    if isinstance(node, cst.Call) and site.tr.names.qualified(node.func) == "tensorflow.shape" and \
            len(node.args) == 1 and node.args[0].keyword is None:
        return shp.of(site.ev.value_of(node.args[0].value))
    dims = shp.from_literal(node) if node is not None else None
    site.tr.mark_dims(dims)
    return dims


def _bool(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def shape_of(site: "CallSite"):
    """The static shape of a plain op's result, where the rule is known; else None."""
    q = site.qname
    if q in shp.BINARY:
        (a, a_av), (b, b_av) = site.arg(0, "x"), site.arg(1, "y")
        if a is None or b is None:
            return None
        return shp.broadcast(shp.operand(a_av, a), shp.operand(b_av, b))
    if q in shp.ELEMENTWISE:
        first = site.node.args[0].value if site.node.args else None
        return shp.of(site.ev.value_of(first)) if first is not None else None
    if q in ("tensorflow.matmul", "tensorflow.linalg.matmul"):
        a, b = site.arg(0, "a")[1], site.arg(1, "b")[1]
        return shp.matmul(shp.of(a), shp.of(b), _bool(site.arg(2, "transpose_a")[0]),
                          _bool(site.arg(3, "transpose_b")[0]))
    if q == "tensorflow.reshape":
        return shp.reshape(shp.of(site.arg(0, "tensor")[1]), _literal_shape(site, 1, "shape"))
    if q in shp.REDUCTIONS:
        axis = site.arg(1, "axis")[0]
        if axis is None:
            axis = site.arg(None, "reduction_indices")[0]
        if q.endswith(("argmax", "argmin", "arg_max")):
            axis = axis if axis is not None else cst.Integer("0")
        keep = site.arg(None, "keepdims")[0] or site.arg(None, "keep_dims")[0]
        return shp.reduce(shp.of(site.arg(0, "input_tensor")[1]), axis, _bool(keep))
    if q == "tensorflow.concat":
        values, av = site.arg(0, "values")
        axis = shp.literal(site.arg(1, "axis")[0])
        if not isinstance(values, (cst.List, cst.Tuple)):
            return None
        return shp.concat([shp.of(site.ev.value_of(e.value)) for e in values.elements], axis)
    if q == "tensorflow.transpose":
        s, perm = shp.of(site.arg(0, "a")[1]), site.arg(1, "perm")[0]
        if s is None or not isinstance(perm, (cst.List, cst.Tuple)):
            return None
        idx = [shp.literal(e.value) for e in perm.elements]
        return None if any(i is None for i in idx) or len(idx) != len(s) else [s[i] for i in idx]
    if q in ("tensorflow.nn.conv2d", "tensorflow.nn.max_pool", "tensorflow.nn.avg_pool", "tensorflow.nn.max_pool2d",
             "tensorflow.nn.avg_pool2d"):
        s = shp.of(site.arg(0, "input")[1] if q == "tensorflow.nn.conv2d" else site.arg(0, "value")[1])
        if q == "tensorflow.nn.conv2d":
            f = shp.of(site.arg(1, "filter")[1] if site.arg(1, "filter")[0] is not None else site.arg(1, "filters")[1])
            k, st, pad = (f[:2] if f is not None else None), site.arg(2, "strides")[0], site.arg(3, "padding")[0]
            out_c = f[3] if f is not None and len(f) == 4 else None
        else:
            k, st, pad = shp.pair(site.arg(1, "ksize")[0], 1), site.arg(2, "strides")[0], site.arg(3, "padding")[0]
            out_c = s[3] if s is not None and len(s) == 4 else None
        st, pad = shp.pair(st, 1), shp.padding_of(pad, "")
        if s is None or len(s) != 4 or k is None or st is None or pad is None:
            return None
        return [s[0], shp.conv_output(s[1], k[0], st[0], pad), shp.conv_output(s[2], k[1], st[1], pad), out_c]
    if q in SPARSE_READS:
        params, ids = shp.of(site.arg(0, "params")[1]), shp.of(site.arg(1, "ids" if "embedding" in q else
                                                                         "indices")[1])
        return None if params is None or ids is None else ids + params[1:]
    if q in ("tensorflow.random_normal", "tensorflow.random_uniform", "tensorflow.truncated_normal",
             "tensorflow.zeros", "tensorflow.ones", "tensorflow.random.normal", "tensorflow.random.uniform",
             "tensorflow.random.truncated_normal"):
        return _literal_shape(site, 0, "shape")
    if q == "tensorflow.constant":  # `tf.constant(0.1, shape=[n_hidden])`: its shape; a number alone: a scalar
        given = _literal_shape(site, 2, "shape")
        value, _ = site.arg(0, "value")
        return given if given is not None else [] if isinstance(value, (cst.Integer, cst.Float)) and \
            site.arg(2, "shape")[0] is None else None
    if q == "tensorflow.fill":
        return _literal_shape(site, 0, "dims")
    if q in ("tensorflow.nn.softmax_cross_entropy_with_logits", "tensorflow.nn.softmax_cross_entropy_with_logits_v2"):
        s = shp.of(site.arg(None, "logits")[1])
        return None if s is None else s[:-1]
    if q == "tensorflow.nn.sparse_softmax_cross_entropy_with_logits":
        return shp.of(site.arg(None, "labels")[1])
    if q == "tensorflow.one_hot":
        s, depth = shp.of(site.arg(0, "indices")[1]), site.arg(1, "depth")[0]
        return None if s is None or depth is None else s + [depth]
    if q in ("tensorflow.nn.l2_loss", "tensorflow.norm", "tensorflow.global_norm", "tensorflow.linalg.global_norm"):
        return []
    if q in ("tensorflow.equal", "tensorflow.not_equal", "tensorflow.less", "tensorflow.greater"):
        return shp.broadcast(shp.of(site.arg(0, "x")[1]), shp.of(site.arg(1, "y")[1]))
    return None


def element_shape(site: "CallSite"):
    """The static shape of each tensor of `tf.unstack(x, axis=a)` / `tf.split(x, n, axis=a)` (a
    number of pieces), where known: x's shape without axis a (split: with an unknown axis a)."""
    if site.qname == "tensorflow.unstack":
        shape, axis = shp.of(site.arg(0, "value")[1]), site.arg(2, "axis")[0]
    elif site.qname == "tensorflow.split":
        shape, axis = shp.of(site.arg(0, "value")[1]), site.arg(2, "axis")[0]
        if isinstance(site.arg(1, "num_or_size_splits")[0], (cst.List, cst.Tuple)):
            return None  # pieces of different sizes
    else:
        return None
    index = 0 if axis is None else shp.literal(axis)
    if shape is None or index is None or not -len(shape) <= index < len(shape):
        return None
    index %= len(shape)
    if site.qname == "tensorflow.unstack":
        return shape[:index] + shape[index + 1:]
    return shape[:index] + [None] + shape[index + 1:]


def clip_by_average_norm(site: "CallSite"):
    """`tf.clip_by_average_norm(t, c)` (TF 1.x only) → TF 1.15's formula:
    `t * c * minimum(rsqrt(sum(t * t)) * size(t), 1 / c)`."""
    site.only({"t", "clip_norm", "name"}, 2)
    t, av = site.arg(0, "t")
    c, _ = site.arg(1, "clip_norm")
    if not isinstance(t, cst.Name) or c is None:
        site.refuse("clip_by_average_norm of an expression (not a name) is not converted (it reads it three times)")
    site.tr.note("tf.clip_by_average_norm → its TF 1.15 formula (no TF 2 function)")
    return Tensor(shp.of(av)), emit.expr(
        "{t} * {c} * {tf}.minimum({tf}.math.rsqrt({tf}.reduce_sum({t} * {t})) * {tf}.cast({tf}.size({t}), {t}.dtype), "
        "1.0 / {c})", t=t, c=c, tf=site.tr.alias)


def cond(site: "CallSite"):
    """`tf.cond(pred, lambda: a, lambda: b)` → TF 2's `tf.cond`, the same op, computed in the steps.
    Each branch must be a lambda without parameters giving one tensor and creating no state: TF 1.x's
    `strict=False` unpacked a branch's one-element list, which TF 2 keeps, so only a single tensor
    reads the same; state made inside a branch would be made at each trace."""
    site.only({"pred", "true_fn", "false_fn", "strict", "name", "fn1", "fn2"}, 5)
    pred, _ = site.arg(0, "pred")
    branches, shapes = [], []
    for index, keyword, old in ((1, "true_fn", "fn1"), (2, "false_fn", "fn2")):
        node, _ = site.arg(index, keyword)
        node = node if node is not None else site.arg(None, old)[0]
        if not (isinstance(node, cst.Lambda) and not node.params.params and not node.params.posonly_params
                and not isinstance(node.params.star_arg, cst.Param) and not node.params.kwonly_params
                and node.params.star_kwarg is None):
            site.refuse("`tf.cond` whose branches are not lambdas without parameters is not converted")
        av = site.ev.value_of(node.body)
        single = isinstance(av, StateRef) and av.state.single or av.graph and (
            not isinstance(av, Tensor) or av.single) and not isinstance(av, Seq)
        if not single:
            site.refuse("`tf.cond` whose branch gives something other than one tensor is not converted (TF 1.x "
                        "unpacked a one-element list, TF 2 does not)")
        branches.append(node)
        shapes.append(shp.of(av) if isinstance(av, Tensor) else None)
    if pred is None or site.tr.pending:
        site.refuse("`tf.cond` whose branch creates state is not converted (a step would create it at each trace)")
    strict, _ = site.arg(3, "strict")
    if strict is not None and not (isinstance(strict, cst.Name) and strict.value in ("True", "False")):
        site.refuse("`tf.cond(strict=<expression>)` is not converted")
    name, _ = site.arg(4, "name")
    node = emit.call(site.tr.tf("tensorflow.cond"), pred, *branches)
    if name is not None:
        node = emit.with_args(node, [*node.args, emit.keyword("name", name)])
    same = shapes[0] is not None and shapes[1] is not None and len(shapes[0]) == len(shapes[1]) and all(
        a is b is None or a is not None and b is not None and emit.code(a) == emit.code(b) for a, b in zip(*shapes))
    return Tensor(shapes[0] if same else None), node  # both branches of one static shape: the result's


STRUCTURES = ("tensorflow.split", "tensorflow.unstack", "tensorflow.clip_by_global_norm", "tensorflow.gradients",
              "tensorflow.meshgrid", "tensorflow.nn.moments", "tensorflow.unique", "tensorflow.nn.top_k")
# Calls that give a tuple of a fixed length: what each part is (one tensor, or a list of them: `single`),
# and the field names of a namedtuple (`tf.nn.top_k(x).values`)
TUPLES = {"tensorflow.clip_by_global_norm": ((False, True), ()),
          "tensorflow.nn.moments": ((True, True), ()),
          "tensorflow.unique": ((True, True), ("y", "idx")),
          "tensorflow.nn.top_k": ((True, True), ("values", "indices"))}


class Route(enum.Enum):
    """Which way a TensorFlow call with no construct of its own goes (`route`)."""

    FLAGS = "flags"        # TF 1.x's flags → absl's (`flags`)
    HOST = "host"          # a Python-side utility, through the upgrade spec
    UNMAPPED = "unmapped"  # under a module of state or session machinery, with no row: refused by name
    SPEC = "spec"          # a plain op, through the upgrade spec (`api_changes.to_tf2`)


def route(q: str) -> Route:
    """The way of the call `q` (a canonical `tensorflow.X` name that `constructs.CALLS` does not know)."""
    if flags.is_flags(q):
        return Route.FLAGS
    if q.startswith(HOST_CALLS) or q in ("tensorflow.set_random_seed",):
        return Route.HOST
    if q.startswith(UNMAPPED):
        return Route.UNMAPPED
    return Route.SPEC


UNMAPPED_REASON = ("`{name}` has no TF 2 translation in tf1clip's tables (it creates state or belongs to the "
                   "TF 1.x session machinery)")


def tf_call(site: "CallSite"):
    q = site.qname
    tr = site.tr
    way = route(q)
    if way == Route.FLAGS:
        return flags.call(site)
    if way == Route.HOST:
        try:
            name, node = to_tf2(short(q), site.node, alias=tr.alias)
        except NoTF2Mapping as exc:
            site.refuse(exc.reason)
        if q == "tensorflow.set_random_seed" and site.node.args:
            tr.graph_seed = site.node.args[0].value
        return Other(OtherKind.HOST_CALL), node.with_changes(func=tr.tf(name)) \
            if name.startswith(("tf.", "tensorflow.")) else node
    if way == Route.UNMAPPED:
        site.refuse(UNMAPPED_REASON.format(name=short(q)))
    try:
        name, node = to_tf2(short(q), site.node, alias=tr.alias,
                            one_tensor=lambda value: one_tensor(site.ev.value_of(value)))
    except NoTF2Mapping as exc:
        site.refuse(exc.reason)
    if q in SPARSE_READS or q in SAMPLED_LOSSES:
        params = site.arg(0, "params" if q in SPARSE_READS else "weights")[1]
        if isinstance(params, StateRef):
            tr.sparse_reads.append(tr.line)
    node = node.with_changes(func=tr.tf(name))
    if q in TUPLES:
        singles, fields = TUPLES[q]
        return Seq([Tensor(single=one) for one in singles], SeqKind.TUPLE, fields), node
    if q in STRUCTURES:
        return Tensor(single=False, element=element_shape(site)), node
    return Tensor(shape_of(site)), node


__all__ = ["tf_call", "HOST", "Route", "UNMAPPED_REASON", "route", "shape_of"]

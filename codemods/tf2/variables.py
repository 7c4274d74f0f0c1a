"""Variables, scopes and collections (TF 1.x) → TF 2.

* `tf.Variable(init)` → `tf.Variable(init)`, created where TF 1.x created it, its TF 1.x name
  kept (`name=` under the scopes); `tf.get_variable(name, shape, initializer=...)` →
  `tf.Variable(initializer(shape, dtype=...), name=...)`, or the same object again where the
  scope reuses it (`scopes`);
* `tf.variable_scope` / `tf.name_scope` / `tf.device` blocks are read through (the scopes
  decide names and reuse only); `tf.trainable_variables()` / `tf.get_collection(TRAINABLE, scope)`
  → the list of those variables (TF 1.x's creation order, its regex on their names).

The initializers they are given are `initializers`'.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, regularization
from codemods.tf2.batch_norm import collection as batch_norm_collection
from codemods.tf2 import shapes as shp
from codemods.tf2.call_args import FLOAT32, is_false, literal_str
from codemods.tf2.constants import folded_str
from codemods.tf2.model import (HOST, GraphOp, Input, Op, OpKind, Other, OtherKind, Scope, Seq, SeqKind, Session,
                                State, StateKind, StateRef)
from codemods.tf2.scopes import UNKNOWN, Frame, reuse_flag
from codemods.tf2.syntax import names_of

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite
    from codemods.tf2.program import Program



# -- variables -------------------------------------------------------------------------------------
def variable(site: "CallSite"):
    site.only({"initial_value", "trainable", "name", "dtype", "validate_shape"}, 1)
    tr = site.tr
    init, init_av = site.arg(0, "initial_value")
    if init is None:
        site.refuse("tf.Variable without an initial value")
    trainable, _ = site.arg(None, "trainable")
    if trainable is not None and not (isinstance(trainable, cst.Name) and trainable.value in ("True", "False")):
        site.refuse("tf.Variable(trainable=<expression>) is not converted")
    if isinstance(init_av, Input):
        site.refuse("a variable initialized from a placeholder (fed at initialization) is not converted")
    materialize(site, init)
    name_node, _ = site.arg(None, "name")
    given = folded_str(name_node)
    if name_node is not None and given is None:
        site.refuse("tf.Variable(name=<expression>) is not converted")
    tf1 = tr.scopes.variable_name(given)
    shape = shp.of(init_av) if init_av.graph else ([] if isinstance(init, (cst.Float, cst.Integer)) else None)
    name = _python_name(site, given or "variable")
    node = site.node.with_changes(func=tr.tf("tensorflow.Variable"))
    if given is not None and tf1 != given:  # under a name scope (or a second `W`): TF 1.x's full name, as it printed
        node = node.with_changes(args=[a.with_changes(value=emit.string_like(a.value, tf1))
                                       if a.keyword is not None and a.keyword.value == "name" else a
                                       for a in node.args])
    state = State(StateKind.VARIABLE, name, tf1, tr.line, trainable=not is_false(trainable), single=True, shape=shape)
    state.info["vars"] = [(tf1, cst.Name(name))]
    state.info["named"] = given is not None  # written with TF 1.x's name: its `.name` is TF 1.x's
    ref = tr.add_state(state, [emit.assign(name, node)])
    return ref, state.expr()


def get_variable(site: "CallSite"):
    site.only({"name", "shape", "dtype", "initializer", "trainable"}, 4)
    tr = site.tr
    name_node, _ = site.arg(0, "name")
    given = folded_str(name_node)
    if given is None:
        site.refuse("tf.get_variable with a name that is not a string of constants is not converted")
    full = tr.scopes.get_variable_name(given)
    existing = next((s for s in tr.states if s.kind == StateKind.VARIABLE and s.tf1_name == full and s.info.get("get")),
                    None)
    reuse = tr.scopes.reuse()
    if existing is not None:
        if reuse is False:
            site.refuse(f"variable `{full}` already exists and its scope does not reuse it (TF 1.x raised ValueError)")
        tr.note(f"tf.get_variable(\"{full}\") reuses the variable made at line {existing.line}")
        return StateRef(existing), existing.expr()
    if reuse is True:
        site.refuse(f"variable `{full}` does not exist yet and its scope has reuse=True (TF 1.x raised ValueError)")
    shape, _ = site.arg(1, "shape")
    dtype, _ = site.arg(2, "dtype")
    init, init_av = site.arg(3, "initializer")
    trainable, _ = site.arg(None, "trainable")
    if trainable is not None and not (isinstance(trainable, cst.Name) and trainable.value in ("True", "False")):
        site.refuse("tf.get_variable(trainable=<expression>) is not converted")
    dtype = dtype if dtype is not None else tr.tf("tensorflow.float32")
    if init is None and tr.scopes.initializer() is not None:  # the variable_scope's initializer
        if shape is None:
            site.refuse("tf.get_variable with no shape and no initializer of its own")
        value = emit.call(tr.scopes.initializer(), shape, dtype=dtype)
        why = "TF 1.x get_variable's initializer, when given none: the variable_scope's"
    elif init is None:
        if emit.code(dtype) not in FLOAT32:
            site.refuse("tf.get_variable of a non-float dtype without an initializer is not converted")
        value = emit.call(emit.call(tr.tf("tensorflow.keras.initializers.GlorotUniform")), shape, dtype=dtype)
        why = "TF 1.x get_variable's default initializer is glorot_uniform"
    elif isinstance(init_av, Other) and init_av.kind == OtherKind.INITIALIZER:
        if shape is None:
            site.refuse("tf.get_variable with an initializer object and no shape")
        value = emit.call(init, shape, dtype=dtype)
        why = None
    elif init_av.graph or isinstance(init, (cst.Float, cst.Integer, cst.List)):
        if shape is not None:
            site.refuse("tf.get_variable with both a tensor initializer and a shape is not converted")
        materialize(site, init)
        value = init
        why = None
    else:
        site.refuse(f"initializer `{emit.code(init)}` is not in tf1clip's table")
    args = [cst.Arg(value)]
    if is_false(trainable):
        args.append(emit.keyword("trainable", trainable))
    args.append(emit.keyword("name", cst.SimpleString(f'"{full}"')))
    node = emit.call(tr.tf("tensorflow.Variable"))
    node = emit.with_args(node, args)
    name = _python_name(site, given)
    dims = shp.from_literal(shape) if shape is not None else shp.of(init_av)
    tr.mark_dims(dims if shape is not None else None)
    state = State(StateKind.VARIABLE, name, full, tr.line, trainable=not is_false(trainable), single=True, shape=dims,
                  info={"get": True, "vars": [(full, cst.Name(name))], "named": True})
    statement = emit.with_comment(emit.assign(name, node), why)
    tr.note(f"tf.get_variable(\"{full}\") → tf.Variable with the same initializer, created here once")
    return tr.add_state(state, [statement]), state.expr()


def _python_name(site: "CallSite", preferred: str) -> str:
    if site.target is not None and site.original is site.ev.top:
        return site.target
    return site.tr.namer.fresh(preferred.rsplit("/", 1)[-1])


def materialize(site: "CallSite", node) -> None:
    """Values an initial value reads are computed at creation too (once, where TF 1.x ran them)."""
    tr = site.tr
    needed = names_of(node) & tr.graph_names()
    if needed:
        tr.steps.materialize(needed)


def global_step(site: "CallSite"):
    tr = site.tr
    existing = next((s for s in tr.states if s.info.get("global_step")), None)
    if existing is not None:
        return StateRef(existing), existing.expr()
    if site.qname.endswith("get_global_step"):
        site.refuse("tf.train.get_global_step() before a global step exists returns None: not converted")
    name = _python_name(site, "global_step")
    node = emit.expr('{tf}.Variable(0, dtype={tf}.int64, trainable=False, name="global_step")',
                     tf=cst.Name(tr.alias))
    state = State(StateKind.VARIABLE, name, "global_step", tr.line, single=True, shape=[],
                  info={"global_step": True, "vars": []})
    tr.note("the global step → an int64 tf.Variable, incremented after each update as in TF 1.x")
    return tr.add_state(state, [emit.assign(name, node)]), state.expr()


def global_step_value(site: "CallSite"):
    """`tf.train.global_step(sess, gs)`: TF 1.x ran the variable in the session, `int(sess.run(gs))`;
    in TF 2 its value is there where the call was, `int(gs.numpy())` (the steps ran before it)."""
    site.only({"sess", "global_step_tensor"}, 2)
    sess, sess_av = site.arg(0, "sess")
    gs, gs_av = site.arg(1, "global_step_tensor")
    if not (isinstance(sess_av, Session) and isinstance(sess, cst.Name)):  # a new Session: TF 1.x's uninitialized
        site.refuse("tf.train.global_step given something other than the Session tf1clip follows (a name bound "
                    "to the Session that ran the graph)")
    if not (isinstance(gs_av, StateRef) and gs_av.state.kind == StateKind.VARIABLE):
        site.refuse(f"tf.train.global_step of `{emit.code(gs)}`, which is not a variable tf1clip follows")
    site.tr.note("tf.train.global_step(sess, gs) → int(gs.numpy()): the variable's value at that point")
    return HOST, emit.expr("int({v}.numpy())", v=gs)


# -- collections -----------------------------------------------------------------------------------
def variables_expr(tr: "Program", pairs: list) -> cst.BaseExpression:
    """The list of variables `pairs` [(tf1 name, expression)] as an expression: whole layers as
    `layer.trainable_variables`, single variables in a list literal, joined by `+`."""
    parts: list = []
    singles: list = []
    i = 0
    by_state = {}
    for s in tr.states:
        for n, e in s.info.get("vars", []):
            by_state[n] = s
    while i < len(pairs):
        n, e = pairs[i]
        s = by_state.get(n)
        e = tr.classes.rebase(s, e) if s is not None else e
        names = [v for v, _ in s.info.get("vars", [])] if s is not None else []
        if s is not None and not s.single and [p for p, _ in pairs[i:i + len(names)]] == names:
            if singles:
                parts.append(cst.List([cst.Element(x) for x in singles]))
                singles = []
            parts.append(tr.classes.rebase(s, s.variables))
            i += len(names)
            continue
        singles.append(e)
        i += 1
    if singles:
        parts.append(cst.List([cst.Element(x) for x in singles]))
    if not parts:
        return cst.List([])
    out = parts[0]
    for p in parts[1:]:
        out = cst.BinaryOperation(out, cst.Add(), p)
    return out


def trainable_pairs(tr: "Program", pattern: Optional[str] = None) -> list:
    out = []
    for s in tr.states:
        if s.trainable:
            out += [(n, e) for n, e in s.info.get("vars", []) if pattern is None or re.match(pattern, n)]
    return out


def _collection(site: "CallSite", pairs: list):
    tr = site.tr
    items = [_one_variable(next(s for s in tr.states if any(v == p for v, _ in s.info.get("vars", []))), p, e)
             for p, e in pairs]
    named = tr.steps.named_list(tuple(n for n, _ in pairs)) if pairs else None
    return Seq(items, SeqKind.LIST), cst.Name(named) if named is not None else variables_expr(tr, pairs)


def _one_variable(state: State, tf1: str, expr: cst.BaseExpression) -> StateRef:
    """The item of a collection that is TF 1.x's variable `tf1`: its state, or for one variable of a layer
    or cell (`dense1/kernel`) a variable of its own, reached through the layer (`dense1.kernel`); it is
    not one of the program's states (the layer is), so nothing is made or saved twice."""
    if state.single or (len(state.info.get("vars", [])) < 2 and state.kind == StateKind.VARIABLE):
        return StateRef(state)  # (a layer with one variable, its kernel alone, is reached through the layer too)
    info = {"vars": [(tf1, expr)], "of": state}
    if "owner" in state.info:
        info["owner"] = state.info["owner"]
    one = State(StateKind.VARIABLE, emit.code(expr), tf1, state.line, trainable=state.trainable,
                variables=cst.List([cst.Element(expr)]), single=True, info=info, ref=expr)
    return StateRef(one)


def trainable_variables(site: "CallSite"):
    site.only({"scope"}, 1)
    scope, _ = site.arg(0, "scope")
    if scope is not None and literal_str(scope) is None:
        site.refuse("tf.trainable_variables(scope=<expression>) is not converted")
    return _collection(site, trainable_pairs(site.tr, literal_str(scope)))


def get_collection(site: "CallSite"):
    site.only({"key", "scope"}, 2)
    key, key_av = site.arg(0, "key")
    scope, _ = site.arg(1, "scope")
    q = getattr(key_av, "qname", None)
    if q == "tensorflow.GraphKeys.REGULARIZATION_LOSSES" and scope is None:
        site.tr.note(f"tf.get_collection(REGULARIZATION_LOSSES) → the {len(site.tr.regularization)} regularization "
                     "terms made so far")
        return regularization.terms(site.tr)
    if q == "tensorflow.GraphKeys.UPDATE_OPS":
        return batch_norm_collection(site, scope)
    if q not in ("tensorflow.GraphKeys.TRAINABLE_VARIABLES",) or (scope is not None and literal_str(scope) is None):
        site.refuse(f"tf.get_collection({emit.code(key)}{', ...' if scope is not None else ''}) is not converted "
                    "(only the trainable variables, by a scope given as a string)")
    return _collection(site, trainable_pairs(site.tr, literal_str(scope)))


def initializer_op(site: "CallSite"):
    return Op(GraphOp(OpKind.INIT, info={"all": True})), site.node


def local_initializer_op(site: "CallSite"):
    """`tf.local_variables_initializer()`: initializes the LOCAL_VARIABLES collection, which is empty in a
    program the TF2 tier converts (every maker of local variables is refused: `tf.metrics.*`, input
    producers with `num_epochs`, `get_local_variable`, `collections=` of a variable): it does nothing."""
    site.only(set(), 0)
    site.tr.note("tf.local_variables_initializer(): the program makes no local variable, so it initializes nothing")
    return Op(GraphOp(OpKind.INIT, info={"local": True})), site.node


def group(site: "CallSite"):
    """`tf.group(init_a, init_b, ...)` of initializers (`tf.group(tf.global_variables_initializer(),
    tf.local_variables_initializer())`): the initializer of them all. A group of other ops (updates, which
    TF 1.x ran in no order) is refused."""
    site.only({"name"}, 64)
    parts = []
    for a in site.node.args:
        if a.keyword is not None:
            continue
        items = a.value.elements if isinstance(a.value, (cst.List, cst.Tuple)) else [a]
        parts += [(item.value, site.ev.value_of(item.value)) for item in items]
    if not parts:
        site.refuse("tf.group of nothing is not converted")
    other = next((node for node, av in parts if not (isinstance(av, Op) and av.op.kind == OpKind.INIT)), None)
    if other is not None:
        site.refuse(f"tf.group of `{emit.code(other)}`, not a variables' initializer, is not converted (TF 1.x ran "
                    "the grouped ops in no order)")
    local = all(av.op.info.get("local") for _, av in parts)
    return Op(GraphOp(OpKind.INIT, info={"local": True} if local else {"all": True})), site.node


# -- scopes -------------------------------------------------------------------------------------------
def variable_scope(site: "CallSite"):
    site.only({"name_or_scope", "default_name", "values", "reuse", "initializer"}, 3)
    name, name_av = site.arg(0, "name_or_scope")
    default, _ = site.arg(1, "default_name")
    scope_init, scope_init_av = site.arg(None, "initializer")
    if scope_init is not None and not (isinstance(scope_init_av, Other) and scope_init_av.kind == OtherKind.INITIALIZER):
        site.refuse(f"variable_scope(initializer={emit.code(scope_init)}): not an initializer tf1clip knows")
    reuse, reuse_av = site.arg(None, "reuse")
    reuse_value = reuse_flag(reuse, getattr(reuse_av, "qname", None))
    if reuse_value is UNKNOWN:
        site.refuse(f"variable_scope(reuse={emit.code(reuse)}) is not converted")
    if isinstance(name_av, Scope):
        path, absolute = name_av.path, True
    elif name is None or (isinstance(name, cst.Name) and name.value == "None"):
        path, absolute = None, False
        if literal_str(default) is None:
            site.refuse("variable_scope without a name or a literal default_name")
    elif folded_str(name) is not None:
        path, absolute = folded_str(name), False
    else:
        site.refuse("variable_scope with a name that is not a string of constants is not converted")

    def enter(tr: "Program", item):
        frame = tr.scopes.enter_variable_scope(path, reuse_value, absolute, literal_str(default), scope_init)
        return Scope(frame.var_path, frame)

    def leave(tr: "Program"):
        tr.scopes.leave()
    return Other(OtherKind.SCOPE, {"enter": enter, "leave": leave}), site.node


def name_scope(site: "CallSite"):
    name, _ = site.arg(0, "name")
    value = folded_str(name)
    if name is not None and value is None and not (isinstance(name, cst.Name) and name.value == "None"):
        site.refuse("name_scope with a name that is not a string of constants is not converted")

    def enter(tr: "Program", item):
        tr.scopes.enter_name_scope(value)
        return HOST

    def leave(tr: "Program"):
        tr.scopes.leave()
    return Other(OtherKind.SCOPE, {"enter": enter, "leave": leave}), site.node


def transparent(site: "CallSite"):
    """`tf.device(...)`, `tf.Graph().as_default()`: no meaning for the numbers: read through."""
    return Other(OtherKind.SCOPE, {"enter": None, "leave": None, "what": site.qname}), site.node


def get_variable_scope(site: "CallSite"):
    """`tf.get_variable_scope()`: the variable scope the program is in (the innermost `variable_scope`, through
    name scopes; the root outside them), the object `reuse_variables()` sets reuse on until its block ends."""
    site.only(set(), 0)
    frame = next(f for f in reversed(site.tr.scopes.frames) if not f.name_only)
    return Scope(frame.var_path, frame), site.node


def reuse_variables(site: "CallSite"):
    scope = site.receiver
    if not isinstance(scope, Scope) or not isinstance(scope.frame, Frame) or scope.frame not in site.tr.scopes.frames:
        site.refuse("reuse_variables() of a scope that is not the current one is not converted")
    scope.frame.reuse = True
    return Other(OtherKind.SCOPE_EFFECT, {"drop": True}), site.node


CALLS = {
    "tensorflow.Variable": variable,
    "tensorflow.get_variable": get_variable,
    "tensorflow.train.get_or_create_global_step": global_step,
    "tensorflow.train.create_global_step": global_step,
    "tensorflow.train.get_global_step": global_step,
    "tensorflow.train.global_step": global_step_value,
    "tensorflow.contrib.framework.get_or_create_global_step": global_step,
    "tensorflow.trainable_variables": trainable_variables,
    "tensorflow.get_collection": get_collection,
    "tensorflow.global_variables_initializer": initializer_op,
    "tensorflow.initialize_all_variables": initializer_op,
    "tensorflow.local_variables_initializer": local_initializer_op,
    "tensorflow.initialize_local_variables": local_initializer_op,
    "tensorflow.group": group,
    "tensorflow.variable_scope": variable_scope,
    "tensorflow.get_variable_scope": get_variable_scope,
    "tensorflow.name_scope": name_scope,
    "tensorflow.device": transparent,
}
CREATORS = {"tensorflow.Variable",
            "tensorflow.get_variable", "tensorflow.train.get_or_create_global_step",
            "tensorflow.train.create_global_step", "tensorflow.contrib.framework.get_or_create_global_step"}
# calls that read the graph's variable collections as they stand where they run: a helper calling one is
# read at its calls (as for CREATORS), so that it reads the variables made before each call, as TF 1.x did
COLLECTION_READS = {"tensorflow.trainable_variables", "tensorflow.get_collection"}
METHODS = {(OtherKind.SCOPE, "reuse_variables"): reuse_variables}

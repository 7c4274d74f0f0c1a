"""Gradients and updates (TF 1.x) → `tf.GradientTape`, `apply_gradients`, in the step that runs them.

* `opt.minimize(loss, var_list, global_step)` → an update op: in the step that runs it,
  `tape.gradient(loss, variables)`, `opt.apply_gradients(...)`, the global step's increment;
* `opt.compute_gradients(loss)` / `tf.gradients(loss, xs)` → `tape.gradient` (pairs with their
  variables, or a list as TF 1.x returned), the user's clipping in between kept as written;
  `opt.apply_gradients(pairs, global_step)` → the update op;
* contrib's `clip_gradients_by_norm(opt, c)` → `tf.clip_by_global_norm(gradients, c)` before
  the update.
The forward pass a gradient flows through runs under the tape (`steps`); the optimizers
themselves are `optimizers`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2.model import GraphOp, Input, Mapping, Op, OpKind, Seq, State, StateKind, StateRef, Tensor
from codemods.tf2.optimizers import Opt, opt_of, receiver, tf1_state_names
from codemods.tf2.syntax import names_of
from codemods.tf2.variables import trainable_pairs

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite


@dataclass
class TrainInfo:
    body: list                            # the update's statements, in the step that runs it
    returns: Optional[cst.BaseExpression]  # what fetching it gives (None: nothing)
    op: GraphOp
    deps: list = field(default_factory=list)  # ops it runs first besides the `with` block's (optimize_loss's UPDATE_OPS)


# -- gradients and updates ------------------------------------------------------------------------------
def loss_name(site: "CallSite", node, av) -> cst.Name:
    """The differentiated loss as a name computed in the step (hoisted into one if an expression)."""
    tr = site.tr
    if isinstance(node, cst.Name) and av.graph and node.value in tr.graph_names():
        return node
    if not av.graph:
        site.refuse("the differentiated loss is not a graph value")
    name = tr.namer.fresh("loss")
    tr.add_comp([emit.assign(name, node)], {name}, names_of(node) & (tr.graph_names() | site.ev.uses))
    tr.env[name] = Tensor([])
    return cst.Name(name)


def variable_list(site: "CallSite", node, av) -> cst.BaseExpression:
    """The variables a gradient is taken of, as a module-level name (TF 1.x: the trainable ones now)."""
    tr = site.tr
    if node is None:
        pairs = trainable_pairs(tr)
        if not pairs:
            site.refuse("no trainable variables to differentiate")
        return tr.steps.var_list(pairs)
    if av.graph and not _all_state(av):
        site.refuse("a variable list computed from graph values is not converted")
    if isinstance(node, cst.Name):
        return node
    return tr.steps.var_list_of(node)


def _all_state(av) -> bool:
    if isinstance(av, StateRef):
        return True
    if isinstance(av, (Seq, Mapping)):
        return all(_all_state(i) for i in av.items)
    return False


# TF 1.x's gradient constants, as the ints they were (tf.train.Optimizer.GATE_*, tf.AggregationMethod.*).
GRADIENT_CONSTANTS = {
    "tensorflow.train.Optimizer.GATE_NONE": 0, "tensorflow.train.Optimizer.GATE_OP": 1,
    "tensorflow.train.Optimizer.GATE_GRAPH": 2,
    "tensorflow.AggregationMethod.ADD_N": 0, "tensorflow.AggregationMethod.DEFAULT": 0,
    "tensorflow.AggregationMethod.EXPERIMENTAL_TREE": 1, "tensorflow.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N": 2,
}


def gradient_constant(ev, av, node: cst.BaseExpression) -> cst.BaseExpression:
    return cst.Integer(str(GRADIENT_CONSTANTS[av.qname]))


REFERENCES = {q: gradient_constant for q in GRADIENT_CONSTANTS}


def _gradient_args(site: "CallSite", allowed: set, positional: int) -> None:
    extra = site.keywords() - allowed
    gate = site.arg(None, "gate_gradients")[0]
    if gate is not None:
        # ordering of the gradient computation; the tape never gates, which on oneDNN builds changes a
        # conv's bias gradient in the last bits whatever was asked (docs/parity.md)
        extra.discard("gate_gradients")
    if site.arg(None, "colocate_gradients_with_ops")[0] is not None:  # device placement only
        extra.discard("colocate_gradients_with_ops")
    method = site.arg(None, "aggregation_method")[0]
    if method is not None:
        if not (isinstance(method, cst.Integer) and method.value == "0"
                or isinstance(method, cst.Name) and method.value == "None"):
            given = {"1": "EXPERIMENTAL_TREE", "2": "EXPERIMENTAL_ACCUMULATE_N"}.get(getattr(method, "value", None),
                                                                                    emit.code(method))
            site.refuse(f"aggregation_method={given}: TF 1.x summed the gradients of a value used more "
                        "than once by another method than add_n, the tape's (not converted)")
        extra.discard("aggregation_method")  # ADD_N (= DEFAULT): add_n, as the tape sums them
    if extra or site.positional() > positional:
        site.refuse(f"gradient arguments {sorted(extra) or 'beyond (loss, var_list)'} are not converted")


def _check_sparse(site: "CallSite", opt: Opt) -> None:
    exact = opt.plain_sgd or (opt.row is not None and opt.row.twin)  # the twin has TF 1.x's sparse update
    if site.tr.sparse_reads and not exact:
        site.refuse(f"a gradient is an IndexedSlices (the variable read at line {site.tr.sparse_reads[0]} by index) "
                    "and Keras 3 optimizers other than plain SGD update repeated rows differently from TF 1.x")


def _update(site: "CallSite", opt_state: State, pairs: cst.BaseExpression, gs) -> list:
    opt = opt_of(opt_state)
    out = []
    if opt.fed_lr is not None:  # TF 1.x read the fed learning rate in the same run as the update
        out.append(emit.stmt("{opt}.learning_rate.assign({lr})", opt=opt_state.expr(), lr=opt.fed_lr))
    out.append(emit.stmt("{opt}.apply_gradients({pairs})", opt=opt_state.expr(), pairs=pairs))
    if gs is not None:
        gs_node, gs_av = gs
        if not (isinstance(gs_av, StateRef) and gs_av.state.kind == StateKind.VARIABLE):
            site.refuse("global_step must be a variable")
        out.append(emit.stmt("{gs}.assign_add(1)", gs=gs_node))
    del opt
    return out


def _one_variable_list(site: "CallSite", opt_state: State, opt, variables: Optional[cst.BaseExpression],
                       members: Optional[tuple] = None) -> None:
    """A Keras optimizer is built for the variables of its first update and refuses any other. TF 1.x's
    optimizer served every list, its slots per variable and its own state (Adam's beta powers) shared by
    the updates: a second list over other variables builds the optimizer for both lists, before any step."""
    tr = site.tr
    key = None if variables is None else emit.code(variables)
    if opt.updates and (key is None or key not in opt.updates):  # None: a list not known by name
        first = opt.updates[0]
        known = [opt.members.get(first), members or opt.members.get(key)]
        if None in known or first is None or key is None or set(known[0]) & set(known[1]) or len(set(opt.updates)) != 1 or opt.built \
                or tr.steps.by_key or tr.classes.frame is not None:
            site.refuse(f"the optimizer `{opt_state.name}` makes a second update over another variable list (two "
                        "minimize/apply_gradients calls, as a GAN's) where tf1clip cannot build it for both lists "
                        "before its first step (lists not known apart, shared variables, a step already made): TF 1.x "
                        "shared the optimizer's own state (Adam's beta powers) between the updates: not converted")
        opt.built = True
        tr.pending.append(emit.stmt("{opt}.build([*{a}, *{b}])", opt=opt_state.expr(), a=cst.parse_expression(first),
                                    b=variables))
        tr.note(f"`{opt_state.name}` updates two variable lists, as in TF 1.x: built for both (one optimizer, its "
                "state shared by the updates)")
    opt.updates.append(key)
    if key is not None:
        opt.members.setdefault(key, members or tr.steps.list_members(variables, tr.env.get(key)))


def train(site: "CallSite", opt_state: State, loss: cst.Name, variables: cst.BaseExpression, gs, clip=None,
          returns=None, check_numerics=False, members=None):
    tr, opt = site.tr, opt_of(opt_state)
    _check_sparse(site, opt)
    _one_variable_list(site, opt_state, opt, variables, members)
    tf1_state_names(site, opt, variables)
    grads = tr.namer.fresh("gradients")
    body = [emit.stmt("{g} = tape.gradient({loss}, {v})", g=grads, loss=loss, v=variables)]
    if opt.clip_global is not None:
        body.append(emit.stmt("{g}, _ = {tf}.clip_by_global_norm({g}, {c})", g=grads, tf=tr.alias, c=opt.clip_global))
    if opt.clip_value is not None:
        body.append(emit.with_comment(emit.stmt(
            "{g} = [None if g is None else {tf}.clip_by_value(g, -{c}, {c}) for g in {g}]", g=grads, tf=tr.alias,
            c=_paren(opt.clip_value)), "tf-keras clipped by value first, then by norm (Keras 3 takes one of the two)"))
    pairs = emit.expr("zip({g}, {v})", g=grads, v=variables)
    if clip is not None:
        lines, pairs = clip(grads, variables, pairs)
        body.extend(lines)
    body += _update(site, opt_state, pairs, gs)
    if check_numerics:
        body.append(emit.stmt('{name} = {tf}.debugging.check_numerics({loss}, "LossTensor is inf or nan")',
                              name=returns, tf=tr.alias, loss=loss))
        returns = cst.Name(returns)
    site.ev.grads.append(loss.value)
    site.ev.gradient_calls += 1
    site.ev.train = TrainInfo(body, returns, GraphOp(OpKind.TRAIN))
    return Op(site.ev.train.op), site.node


def _paren(node):
    if isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def minimize(site: "CallSite"):
    state = receiver(site)
    _gradient_args(site, {"loss", "var_list", "global_step"}, 3)
    loss = loss_name(site, *site.arg(0, "loss"))
    var_node, var_av = site.arg(2, "var_list")
    variables = variable_list(site, var_node, var_av)
    members = None if var_node is None else site.tr.steps.list_members(var_node, var_av)
    gs = site.arg(1, "global_step")
    return train(site, state, loss, variables, gs if gs[0] is not None else None, members=members)


def _zip_idiom(site: "CallSite"):
    """`gradients, variables = zip(*opt.compute_gradients(loss))`: the two names, else None."""
    top, target = site.ev.top, site.ev.target_node
    if (isinstance(top, cst.Call) and isinstance(top.func, cst.Name) and top.func.value == "zip"
            and len(top.args) == 1 and top.args[0].star == "*" and top.args[0].value is site.original
            and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in target.elements)):
        return target.elements[0].value.value, target.elements[1].value.value
    return None


def get_updates(site: "CallSite"):
    """tf-keras `optimizer.get_updates(loss, params)`: the update op of `loss` over `params`."""
    state = receiver(site)
    if site.keywords() - {"loss", "params"} or site.positional() > 2:
        site.refuse("get_updates with other arguments is not converted")
    loss = loss_name(site, *site.arg(0, "loss"))
    variables = variable_list(site, *site.arg(1, "params"))
    return train(site, state, loss, variables, None)


def compute_gradients(site: "CallSite"):
    state = receiver(site)
    _gradient_args(site, {"loss", "var_list"}, 2)
    loss = loss_name(site, *site.arg(0, "loss"))
    idiom = _zip_idiom(site)
    var_node, var_av = site.arg(1, "var_list")
    if idiom is not None and var_node is None:
        variables = site.tr.steps.var_list(trainable_pairs(site.tr), idiom[1])
        site.ev.zip_idiom = (idiom[0], loss, variables)
    elif idiom is not None and isinstance(var_node, cst.Name):
        variables = variable_list(site, var_node, var_av)
        if variables.value != idiom[1]:
            site.tr.pending.append(emit.assign(idiom[1], variables))
        site.ev.zip_idiom = (idiom[0], loss, variables)
    else:
        variables = variable_list(site, var_node, var_av)
    site.ev.grads.append(loss.value)
    site.ev.gradient_calls += 1
    site.tr.note("compute_gradients → (tape.gradient, variable) pairs")
    del state
    return Tensor(single=False, pairs=True), emit.expr("list(zip(tape.gradient({loss}, {v}), {v}))", loss=loss, v=variables)


def apply_gradients(site: "CallSite"):
    state = receiver(site)
    opt = opt_of(state)
    pairs, _ = site.arg(0, "grads_and_vars")
    gs = site.arg(1, "global_step")
    if site.keywords() - {"grads_and_vars", "global_step", "name"} or opt.clip_global is not None \
            or opt.clip_value is not None:
        site.refuse("apply_gradients through a clipping wrapper is not converted")
    _check_sparse(site, opt)
    known = None
    if isinstance(pairs, cst.Call) and isinstance(pairs.func, cst.Name) and pairs.func.value == "zip" \
            and len(pairs.args) == 2 and isinstance(pairs.args[1].value, cst.Name):
        known = pairs.args[1].value.value
    _one_variable_list(site, state, opt, None if known is None else cst.Name(known))
    tf1_state_names(site, opt, None if known is None else cst.Name(known))
    body = _update(site, state, pairs, gs if gs[0] is not None else None)
    site.ev.train = TrainInfo(body, None, GraphOp(OpKind.TRAIN))
    site.tr.note(f"apply_gradients → {state.name}.apply_gradients" + (" + global step increment" if gs[0] else ""))
    return Op(site.ev.train.op), site.node


def gradients(site: "CallSite"):
    _gradient_args(site, {"ys", "xs"}, 2)
    ys, ys_av = site.arg(0, "ys")
    xs, xs_av = site.arg(1, "xs")
    loss = loss_name(site, ys, ys_av)
    sliced = isinstance(xs, cst.Subscript) and any(isinstance(s.slice, cst.Slice) for s in xs.slice)
    one = isinstance(xs_av, (StateRef, Input)) or isinstance(xs_av, Tensor) and xs_av.single  # one x, not a list
    if one or not (isinstance(xs_av, Seq) or isinstance(xs, (cst.List, cst.Name, cst.ListComp)) or sliced):
        xs = cst.List([cst.Element(xs)])  # TF 1.x returned a list for a single x too (`tf.gradients(loss, x)[0]`)
    items = xs_av.items if isinstance(xs_av, Seq) else [xs_av] if one else None
    if items is None or any(not isinstance(i, StateRef) for i in items):
        # with respect to a value (a placeholder, a tensor), not only variables: the tape watches the step's
        # inputs, so that every value computed from them is on it, as every value was in TF 1.x's graph
        site.ev.watch_inputs = True
    site.ev.grads.append(loss.value)
    site.ev.gradient_calls += 1
    site.ev.gradient_list = site.original is site.ev.top
    site.tr.note("tf.gradients → tape.gradient")
    return Tensor(single=False), emit.expr("tape.gradient({loss}, {xs})", loss=loss, xs=xs)


CALLS = {
    "tensorflow.gradients": gradients,
}
CREATORS = {"tensorflow.gradients"}
METHODS = {
    (StateKind.OPTIMIZER, "minimize"): minimize,
    (StateKind.OPTIMIZER, "compute_gradients"): compute_gradients,
    (StateKind.OPTIMIZER, "apply_gradients"): apply_gradients,
    (StateKind.OPTIMIZER, "get_updates"): get_updates,
}

"""Optimizers, gradients and updates (TF 1.x) → Keras 3 optimizers, `tf.GradientTape`, `apply_gradients`.

* `tf.train.XOptimizer(...)` → the Keras 3 optimizer with the same update rule
  (`optimizer_table`, each row proven by parity); created once where TF 1.x created it;
* `opt.minimize(loss, var_list, global_step)` → an update op: in the step that runs it,
  `tape.gradient(loss, variables)`, `opt.apply_gradients(...)`, the global step's increment;
* `opt.compute_gradients(loss)` / `tf.gradients(loss, xs)` → `tape.gradient` (pairs with their
  variables, or a list as TF 1.x returned), the user's clipping in between kept as written;
  `opt.apply_gradients(pairs, global_step)` → the update op;
* contrib's `clip_gradients_by_norm(opt, c)` → `tf.clip_by_global_norm(gradients, c)` before
  the update; `exponential_decay(lr, step, ...)` → a Keras schedule evaluated at `step`.
The forward pass a gradient flows through runs under the tape (`steps`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, optimizer_twins
from codemods.tf2.model import GraphOp, Mapping, Op, Seq, State, StateRef, Tensor
from codemods.tf2.optimizer_table import OPTIMIZERS, SLOTS, OptimizerRow
from codemods.tf2.scopes import join
from codemods.tf2.syntax import names_of
from codemods.tf2.variables import trainable_pairs

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

KERAS_OPTIMIZERS = {"tensorflow.keras.optimizers.Adam": "Adam", "tensorflow.keras.optimizers.SGD": "SGD"}


@dataclass
class Opt:
    source: str                          # the TF 1.x (or tf.keras) class, canonical
    row: Optional[OptimizerRow] = None
    clip_global: Optional[cst.BaseExpression] = None
    clip_value: Optional[cst.BaseExpression] = None
    velocity_ones: bool = False
    plain_sgd: bool = False
    updates: list = field(default_factory=list)   # the variable lists it updates (names)
    members: dict = field(default_factory=dict)   # of those, the TF 1.x names of the variables each holds
    slot_maps: dict = field(default_factory=dict)
    built: bool = False
    fed_lr: Optional[cst.BaseExpression] = None  # a learning rate computed in the graph (a fed placeholder)
    tf1_name: Optional[str] = None       # TF 1.x's name for it (its slots' suffix), when a literal
    tf1_state: Optional[dict] = None     # its state's TF 1.x names, made with its first update (tf1_state_names)


@dataclass
class TrainInfo:
    body: list                            # the update's statements, in the step that runs it
    returns: Optional[cst.BaseExpression]  # what fetching it gives (None: nothing)
    op: GraphOp


def _opt(state: State) -> Opt:
    return state.info["opt"]


# -- optimizers ------------------------------------------------------------------------------------
def _optimizer_name(site: "CallSite") -> str:
    if site.target is not None:
        return site.target
    target = site.tr.namer.preferred.get(site.ev.target, site.ev.target)
    if target and "optim" in target.lower() and site.ev.target == target:
        return target  # `optimizer = tf.train.X(...).minimize(loss)`: the train op's name is free in TF 2
    return site.tr.namer.fresh(f"{target}_optimizer" if target else "optimizer")


def optimizer_args(site: "CallSite", row: OptimizerRow, call: cst.Call) -> tuple:
    """The Keras 3 constructor's arguments for TF 1.x's `call`, whether TF 1.x defaults were added,
    and a learning rate the graph computes (fed), set before each update."""
    given: dict = {}
    positional = [a for a in call.args if a.keyword is None]
    by_pos = {p.position: p for p in row.params if p.position is not None}
    for i, a in enumerate(call.args):
        if a.star:
            site.refuse("*args/**kwargs to an optimizer are not converted")
        p = by_pos.get(positional.index(a)) if a.keyword is None else next(
            (p for p in row.params if p.tf1 == a.keyword.value), None)
        if p is None:
            site.refuse(f"{row.tf1.rsplit('.', 1)[1]} argument {a.keyword.value if a.keyword else i} is not mapped")
        given[p.tf1] = a
    args, fixed, fed_lr = [], False, None
    for p in row.params:
        a = given.get(p.tf1)
        if p.keras is None:
            if a is not None and p.tf1 != "name" and emit.code(a.value) != p.tf1_default:
                site.refuse(f"{p.tf1}={emit.code(a.value)} has no Keras 3 equivalent")
            continue
        if a is None:
            if p.tf1_default is not None:
                args.append(emit.keyword(p.keras, cst.parse_expression(p.tf1_default)))
                fixed = True
            continue
        value = a.value
        av = site.ev.value_of(value)
        if isinstance(av, StateRef) and av.state.kind == "schedule":
            if row.constant_lr_only:
                site.refuse(f"{row.tf1.rsplit('.', 1)[1]} with a decaying learning rate: Keras' update differs from "
                            "TF 1.x's when the learning rate changes")
            if not isinstance(value, cst.Call):  # `self.lr`, the schedule itself: its value at the step
                value = cst.Call(value, [cst.Arg(av.state.info["step"])])
            value = cst.Lambda(cst.Parameters(), value)
        elif av.graph and p.tf1 == "learning_rate" and not row.constant_lr_only:
            fed_lr, value = value, cst.Float("0.0")  # assigned in each step that updates, as TF 1.x read it
        elif av.graph:
            site.refuse(f"{row.tf1.rsplit('.', 1)[1]}'s {p.tf1} is a graph value (fed or computed): a Keras "
                        "optimizer takes a number, a schedule or a callable"
                        + (" (and a changing rate makes Keras' momentum differ)" if row.constant_lr_only else ""))
        if p.tf1 == "learning_rate" and a.keyword is None:
            args.insert(0, cst.Arg(value))
        else:
            args.append(emit.keyword(p.keras, value))
    return args, fixed, fed_lr


def optimizer_class(tr, row: OptimizerRow) -> cst.BaseExpression:
    """The Keras 3 class of a row, or its exact twin (written once into the script)."""
    if not row.twin:
        return tr.tf(row.keras)
    return cst.Name(tr.preamble_function(row.keras, lambda n: optimizer_twins.definitions(row.keras, n, tr.alias),
                                         row.keras))


def optimizer(site: "CallSite"):
    tr = site.tr
    row = OPTIMIZERS[site.qname]
    args, fixed, fed_lr = optimizer_args(site, row, site.node)
    name = _optimizer_name(site)
    statement = emit.assign(name, emit.with_args(emit.call(optimizer_class(tr, row)), args))
    if fixed or row.velocity_ones or row.constant_lr_only:
        statement = emit.with_comment(statement, row.why)
    name_param = next(p for p in row.params if p.tf1 == "name")
    tf1_name = _literal_name(site.arg(name_param.position, "name")[0], row.tf1.rsplit(".", 1)[1][:-len("Optimizer")])
    state = State("optimizer", name, name, tr.line,
                  info={"opt": Opt(row.tf1, row, velocity_ones=row.velocity_ones,
                                   plain_sgd=row.tf1.endswith("GradientDescentOptimizer"), fed_lr=fed_lr,
                                   tf1_name=tf1_name)})
    tr.note(f"{row.tf1.replace('tensorflow.', 'tf.')} → {row.keras}: {row.why}")
    if fed_lr is not None:
        tr.note("the learning rate is a graph value (fed): assigned to the optimizer's in each step that updates")
    return tr.add_state(state, [statement]), cst.Name(name)


def _literal_name(node, default: str) -> Optional[str]:
    if node is None:
        return default
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def tf1_state_names(site: "CallSite", opt: Opt, variables: Optional[cst.BaseExpression]) -> None:
    """At an optimizer's first update, the names TF 1.x gave the state it made there, for restoring a TF 1.x
    checkpoint: the slots `<variable>/<optimizer name>` and `..._1` of the variables it updates, and (Adam)
    the beta powers, made in the name scope of the update. Only for the Adam twin, which holds TF 1.x's state."""
    tr = site.tr
    if opt.row is None or opt.row.keras != "AdamOptimizer" or opt.tf1_state is not None or opt.tf1_name is None:
        return
    members = None if variables is None else tr.steps.list_members(variables, tr.env.get(emit.code(variables)))
    powers = tuple(tr.scopes.unique_name(join(tr.scopes.top.name_path, p)) for p in ("beta1_power", "beta2_power"))
    opt.tf1_state = {"variables": members, "slot": opt.tf1_name, "powers": powers}


def keras_optimizer(site: "CallSite"):
    tr = site.tr
    kw = site.keywords()
    if site.starred():
        site.refuse("a Keras optimizer called with *args or **kwargs is not converted")
    unknown = kw - {"learning_rate", "lr", "decay", "clipvalue", "clipnorm", "global_clipnorm", "epsilon", "beta_1",
                    "beta_2", "momentum", "nesterov", "amsgrad", "name"}
    if unknown:
        site.refuse(f"Keras optimizer arguments {sorted(unknown)} are not mapped")
    opt = Opt(site.qname, plain_sgd=site.qname.endswith("SGD") and "momentum" not in kw)
    args = list(site.node.args)
    if "clipvalue" in kw and ("clipnorm" in kw or "global_clipnorm" in kw):
        opt.clip_value = site.arg(None, "clipvalue")[0]
        args = [a for a in args if not (a.keyword and a.keyword.value == "clipvalue")]
        tr.note("Keras 3 takes one of clipvalue/clipnorm: clipvalue moved before apply_gradients (tf-keras clipped "
                "by value first, then by norm)")
    if "lr" in kw:
        args = [a.with_changes(keyword=cst.Name("learning_rate")) if a.keyword and a.keyword.value == "lr" else a
                for a in args]
        tr.note("Keras optimizer `lr=` → `learning_rate=`")
    if "decay" in kw:
        args = _decay_schedule(site, args)
    name = _optimizer_name(site)
    node = emit.with_args(site.node.with_changes(func=tr.tf(site.qname)), args)
    state = State("optimizer", name, name, tr.line, info={"opt": opt})
    tr.note("tf.keras optimizer kept: tf-keras' update rule is Keras 3's (Adam, SGD)")
    return tr.add_state(state, [emit.assign(name, node)]), cst.Name(name)


# Keras 2's default learning rates (optimizer_v2), for `decay=` without one.
_KERAS2_LR = {"Adam": "0.001", "SGD": "0.01"}


def _decay_schedule(site: "CallSite", args: list) -> list:
    """Keras 2's `decay=d` (optimizer_v2 `_decayed_lr`: lr / (1 + d * iterations), the count before the
    update) as Keras 3's `learning_rate=InverseTimeDecay(lr, decay_steps=1, decay_rate=d)`, which Keras 3
    evaluates at the same count: the same learning rate at every step (Keras 3 ignores `decay=`)."""
    decay = next(a.value for a in args if a.keyword and a.keyword.value == "decay")
    rest = [a for a in args if not (a.keyword and a.keyword.value == "decay")]
    if isinstance(decay, (cst.Integer, cst.Float)) and float(decay.value) == 0:
        return rest  # Keras 2 decays only when decay > 0
    given = [i for i, a in enumerate(rest) if (a.keyword is None and i == 0) or
             (a.keyword and a.keyword.value == "learning_rate")]
    name = site.qname.rpartition(".")[2]
    if not given and name not in _KERAS2_LR:
        site.refuse(f"{name}(decay=...) without a learning rate is not converted")
    lr = rest[given[0]].value if given else cst.Float(_KERAS2_LR[name])
    schedule = emit.call(site.tr.tf("tensorflow.keras.optimizers.schedules.InverseTimeDecay"), lr,
                         decay_steps=cst.Integer("1"), decay_rate=decay)
    site.tr.note("Keras 2's `decay=` → learning_rate=InverseTimeDecay(lr, decay_steps=1, decay_rate=decay): "
                 "lr / (1 + decay * iterations), as Keras 2 decayed it")
    if given:
        at = given[0]
        return [*rest[:at], rest[at].with_changes(value=schedule), *rest[at + 1:]]
    return [*rest, emit.keyword("learning_rate", schedule)]


def exponential_decay(site: "CallSite"):
    tr = site.tr
    lr, _ = site.arg(0, "learning_rate")
    step, step_av = site.arg(1, "global_step")
    steps, _ = site.arg(2, "decay_steps")
    rate, _ = site.arg(3, "decay_rate")
    stair, _ = site.arg(4, "staircase")
    if not (isinstance(step_av, StateRef) and step_av.state.kind == "variable") or None in (lr, steps, rate) \
            or "name" in site.keywords():
        site.refuse("exponential_decay of something other than a step variable is not converted")
    args = [cst.Arg(lr), emit.keyword("decay_steps", steps), emit.keyword("decay_rate", rate)]
    if stair is not None:
        args.append(emit.keyword("staircase", stair))
    name = site.target or tr.namer.fresh("learning_rate")
    node = emit.with_args(emit.call(tr.tf("tensorflow.keras.optimizers.schedules.ExponentialDecay")), args)
    state = State("schedule", name, name, tr.line, info={"step": step})
    tr.note(f"tf.train.exponential_decay → a Keras schedule evaluated at `{emit.code(step)}` (same formula)")
    ref = tr.add_state(state, [emit.assign(name, node)])
    return ref, cst.Name(name)


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


def _gradient_args(site: "CallSite", allowed: set, positional: int) -> None:
    extra = site.keywords() - allowed
    gate = site.arg(None, "gate_gradients")[0]
    if gate is not None:
        # ordering of the gradient computation; the tape never gates, which on oneDNN builds changes a
        # conv's bias gradient in the last bits whatever was asked (docs/parity.md)
        extra.discard("gate_gradients")
    if extra or site.positional() > positional:
        site.refuse(f"gradient arguments {sorted(extra) or 'beyond (loss, var_list)'} are not converted")


def _check_sparse(site: "CallSite", opt: Opt) -> None:
    exact = opt.plain_sgd or (opt.row is not None and opt.row.twin)  # the twin has TF 1.x's sparse update
    if site.tr.sparse_reads and not exact:
        site.refuse(f"a gradient is an IndexedSlices (the variable read at line {site.tr.sparse_reads[0]} by index) "
                    "and Keras 3 optimizers other than plain SGD update repeated rows differently from TF 1.x")


def _update(site: "CallSite", opt_state: State, pairs: cst.BaseExpression, gs) -> list:
    opt = _opt(opt_state)
    out = []
    if opt.fed_lr is not None:  # TF 1.x read the fed learning rate in the same run as the update
        out.append(emit.stmt("{opt}.learning_rate.assign({lr})", opt=opt_state.expr(), lr=opt.fed_lr))
    out.append(emit.stmt("{opt}.apply_gradients({pairs})", opt=opt_state.expr(), pairs=pairs))
    if gs is not None:
        gs_node, gs_av = gs
        if not (isinstance(gs_av, StateRef) and gs_av.state.kind == "variable"):
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
    tr, opt = site.tr, _opt(opt_state)
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
    site.ev.train = TrainInfo(body, returns, GraphOp("train"))
    if opt.velocity_ones and not opt.built:
        opt.built = True
        opt.velocity_ones = False
        tr.pending += [emit.stmt("{opt}.build({v})", opt=opt_state.expr(), v=variables),
                       emit.stmt('for slot in {opt}.variables:  # TF1 RMSProp starts the mean-square slot at ones\n'
                                 '    if slot.path.endswith("_velocity"):\n'
                                 '        slot.assign({tf}.ones_like(slot))', opt=opt_state.expr(), tf=tr.alias)]
    return Op(site.ev.train.op), site.node


def _paren(node):
    if isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _receiver(site: "CallSite") -> State:
    av = site.receiver
    if not (isinstance(av, StateRef) and av.state.kind == "optimizer"):
        site.refuse(f"`.{site.qname[2:]}` of something other than an optimizer made here")
    return av.state


def minimize(site: "CallSite"):
    state = _receiver(site)
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
    state = _receiver(site)
    if site.keywords() - {"loss", "params"} or site.positional() > 2:
        site.refuse("get_updates with other arguments is not converted")
    loss = loss_name(site, *site.arg(0, "loss"))
    variables = variable_list(site, *site.arg(1, "params"))
    return train(site, state, loss, variables, None)


def compute_gradients(site: "CallSite"):
    state = _receiver(site)
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
    return Tensor(pairs=True), emit.expr("list(zip(tape.gradient({loss}, {v}), {v}))", loss=loss, v=variables)


def apply_gradients(site: "CallSite"):
    state = _receiver(site)
    opt = _opt(state)
    pairs, _ = site.arg(0, "grads_and_vars")
    gs = site.arg(1, "global_step")
    if site.keywords() - {"grads_and_vars", "global_step", "name"} or opt.clip_global is not None \
            or opt.clip_value is not None:
        site.refuse("apply_gradients through a clipping wrapper is not converted")
    if opt.velocity_ones:
        site.refuse("RMSProp through apply_gradients: the variable list for its slots is not known")
    _check_sparse(site, opt)
    known = None
    if isinstance(pairs, cst.Call) and isinstance(pairs.func, cst.Name) and pairs.func.value == "zip" \
            and len(pairs.args) == 2 and isinstance(pairs.args[1].value, cst.Name):
        known = pairs.args[1].value.value
    _one_variable_list(site, state, opt, None if known is None else cst.Name(known))
    tf1_state_names(site, opt, None if known is None else cst.Name(known))
    body = _update(site, state, pairs, gs if gs[0] is not None else None)
    site.ev.train = TrainInfo(body, None, GraphOp("train"))
    site.tr.note(f"apply_gradients → {state.name}.apply_gradients" + (" + global step increment" if gs[0] else ""))
    return Op(site.ev.train.op), site.node


def gradients(site: "CallSite"):
    _gradient_args(site, {"ys", "xs"}, 2)
    ys, ys_av = site.arg(0, "ys")
    xs, xs_av = site.arg(1, "xs")
    loss = loss_name(site, ys, ys_av)
    sliced = isinstance(xs, cst.Subscript) and any(isinstance(s.slice, cst.Slice) for s in xs.slice)
    if not (isinstance(xs_av, Seq) or isinstance(xs, (cst.List, cst.Name, cst.ListComp)) and not isinstance(xs_av, StateRef)
            or sliced):  # a list already: `[v for _, v in gvs]`, `tvars[2:]`
        xs = cst.List([cst.Element(xs)])  # TF 1.x returned a list for a single x too
    site.ev.grads.append(loss.value)
    site.ev.gradient_calls += 1
    site.ev.gradient_list = site.original is site.ev.top
    site.tr.note("tf.gradients → tape.gradient")
    return Tensor(), emit.expr("tape.gradient({loss}, {xs})", loss=loss, xs=xs)


def get_slot(site: "CallSite"):
    """`opt.get_slot(v, "m")` → the Keras 3 optimizer variable holding the same value (`SLOTS`)."""
    state = _receiver(site)
    opt, tr = _opt(state), site.tr
    var, _ = site.arg(0, "var")
    slot, _ = site.arg(1, "name")
    call_code = emit.code(site.original)
    if len(site.node.args) != 2 or site.keywords() - {"var", "name"} or not isinstance(slot, cst.SimpleString):
        site.refuse("get_slot(var, \"name\") with other arguments is not converted")
    row = SLOTS.get((opt.source, slot.evaluated_value))
    if row is None:
        short = opt.source.replace("tensorflow.", "tf.") or "this optimizer"
        site.refuse(f"`{call_code}`: no Keras 3 optimizer variable of {short} is known to hold the same value "
                    "(tf1clip's slot table)")
    if not opt.updates:
        site.refuse(f"`{call_code}` before `{state.name}`'s update op: TF1 has no slot there (None)")
    if None in opt.updates or len(set(opt.updates)) != 1:
        site.refuse(f"`{state.name}` updates several (or unknown) variable lists: its Keras 3 slots cannot be built "
                    "up front for get_slot")
    variables = opt.updates[0]
    loop = site.ev.loop_iter(var.value) if isinstance(var, cst.Name) else None
    if loop is None:
        site.refuse("get_slot of a variable other than a comprehension's loop variable over a variable list is not "
                    "converted")
    loop_av, _ = tr.evaluator(tr.env).evaluate(loop)
    ranged = tr.steps.list_members(loop, loop_av)
    if ranged is None:
        site.refuse(f"get_slot over `{emit.code(loop)}`: not a known variable list")
    updated = cst.parse_expression(variables)
    if not set(ranged) <= set(tr.steps.list_members(updated, tr.env.get(variables)) or ()):
        site.refuse(f"get_slot over variables `{state.name}` does not update: TF1 returns None for them")
    key = (state.name, row.slot)
    if key not in opt.slot_maps:
        if not opt.built:
            opt.built = True
            tr.pending.append(emit.with_comment(emit.stmt("{opt}.build({v})", opt=state.expr(), v=updated),
                                                f"{state.name}'s slots exist from here, as TF1 made them with the "
                                                "update op"))
        name = tr.namer.fresh(f"{state.name}_{row.slot}")
        tr.pending.append(emit.with_comment(emit.stmt(
            '{name} = dict(zip(map(id, {v}), [s for s in {opt}.variables if s.path.endswith("' + row.suffix + '")]))',
            name=name, v=updated, opt=state.expr()), f"TF1 {state.name}.get_slot(v, \"{row.slot}\"): {row.why}"))
        opt.slot_maps[key] = name
        tr.note(f"get_slot(v, \"{row.slot}\") → `{name}[id(v)]`: {row.why}")
    return Tensor(), emit.expr("{m}[id({v})]", m=opt.slot_maps[key], v=var)


CALLS = {
    **{q: optimizer for q in OPTIMIZERS},
    **{q: keras_optimizer for q in KERAS_OPTIMIZERS},
    "tensorflow.train.exponential_decay": exponential_decay,
    "tensorflow.gradients": gradients,
}
CREATORS = set(OPTIMIZERS) | set(KERAS_OPTIMIZERS) | {"tensorflow.train.exponential_decay", "tensorflow.gradients"}
METHODS = {
    ("optimizer", "minimize"): minimize,
    ("optimizer", "compute_gradients"): compute_gradients,
    ("optimizer", "apply_gradients"): apply_gradients,
    ("optimizer", "get_slot"): get_slot,
    ("optimizer", "get_updates"): get_updates,
}

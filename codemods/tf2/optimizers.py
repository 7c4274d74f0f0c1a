"""TF 1.x optimizers and learning-rate schedules → Keras 3 optimizers, made once where TF 1.x made them.

* `tf.train.XOptimizer(...)` → the Keras 3 optimizer with the same update rule
  (`optimizer_table`, each row proven by parity; Adam's exact twin written into the script);
  a learning rate the graph computes (fed) is assigned in each step that updates;
* a tf.keras optimizer (`tf.keras.optimizers.Adam` / `SGD`) is kept, Keras 2's spellings
  (`lr=`, `decay=`) in Keras 3's;
* `exponential_decay(lr, step, ...)` (and inverse time, polynomial, cosine, piecewise constant decay)
  → the Keras schedule with the same formula, evaluated at `step`;
* `opt.get_slot(v, "m")` → the Keras 3 optimizer variable holding the same value (`SLOTS`).
What an optimizer's updates do (`minimize`, `apply_gradients`, ...) is `training`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, optimizer_twins
from codemods.tf2 import shapes as shp
from codemods.tf2.model import State, StateKind, StateRef, Tensor
from codemods.tf2.optimizer_table import OPTIMIZERS, SLOTS, OptimizerRow
from codemods.tf2.scopes import join

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite


KERAS_OPTIMIZERS = {"tensorflow.keras.optimizers.Adam": "Adam", "tensorflow.keras.optimizers.SGD": "SGD"}


@dataclass
class Opt:
    source: str                          # the TF 1.x (or tf.keras) class, canonical
    row: Optional[OptimizerRow] = None
    clip_global: Optional[cst.BaseExpression] = None
    clip_value: Optional[cst.BaseExpression] = None
    plain_sgd: bool = False
    updates: list = field(default_factory=list)   # the variable lists it updates (names)
    members: dict = field(default_factory=dict)   # of those, the TF 1.x names of the variables each holds
    slot_maps: dict = field(default_factory=dict)
    built: bool = False
    fed_lr: Optional[cst.BaseExpression] = None  # a learning rate computed in the graph (a fed placeholder)
    tf1_name: Optional[str] = None       # TF 1.x's name for it (its slots' suffix), when a literal
    tf1_state: Optional[dict] = None     # its state's TF 1.x names, made with its first update (tf1_state_names)


def opt_of(state: State) -> Opt:
    """The `Opt` of an optimizer's state."""
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
        if isinstance(av, StateRef) and av.state.kind == StateKind.SCHEDULE:
            if row.changing_lr is not None:
                site.refuse(f"{row.tf1.rsplit('.', 1)[1]} with a decaying learning rate: Keras' update differs from "
                            "TF 1.x's when the learning rate changes")
            if not isinstance(value, cst.Call):  # `self.lr`, the schedule itself: its value at the step
                value = cst.Call(value, [cst.Arg(av.state.info["step"])])
            value = cst.Lambda(cst.Parameters(), value)
        elif av.graph and p.tf1 == "learning_rate" and row.changing_lr is None:
            fed_lr, value = value, cst.Float("0.0")  # assigned in each step that updates, as TF 1.x read it
        elif av.graph:
            site.refuse(f"{row.tf1.rsplit('.', 1)[1]}'s {p.tf1} is a graph value (fed or computed): a Keras "
                        "optimizer takes a number, a schedule or a callable"
                        + (" (and a changing rate makes Keras' momentum differ)" if row.changing_lr else ""))
        if p.tf1 == "learning_rate" and a.keyword is None:
            args.insert(0, cst.Arg(value))
        else:
            args.append(emit.keyword(p.keras, value))
    return args, fixed, fed_lr


def row_for(site: "CallSite", row: OptimizerRow, call: cst.Call) -> OptimizerRow:
    """`row`, or its row for a learning rate that changes (a schedule, a fed or computed rate) when `call`'s does."""
    if row.changing_lr is None:
        return row
    lr = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "learning_rate"),
              call.args[0].value if call.args and call.args[0].keyword is None else None)
    av = site.ev.value_of(lr) if lr is not None else None
    changes = isinstance(av, StateRef) and av.state.kind == StateKind.SCHEDULE or getattr(av, "graph", False)
    return row.changing_lr if changes else row


def optimizer_class(tr, row: OptimizerRow) -> cst.BaseExpression:
    """The Keras 3 class of a row, or its exact twin (written once into the script)."""
    if not row.twin:
        return tr.tf(row.keras)
    return cst.Name(tr.preamble_function(row.keras, lambda n: optimizer_twins.definitions(row.keras, n, tr.alias),
                                         row.keras))


def optimizer(site: "CallSite"):
    tr = site.tr
    row = row_for(site, OPTIMIZERS[site.qname], site.node)
    args, fixed, fed_lr = optimizer_args(site, row, site.node)
    name = _optimizer_name(site)
    statement = emit.assign(name, emit.with_args(emit.call(optimizer_class(tr, row)), args))
    if fixed or row.changing_lr is not None:
        statement = emit.with_comment(statement, row.why)
    name_param = next(p for p in row.params if p.tf1 == "name")
    tf1_name = _literal_name(site.arg(name_param.position, "name")[0], row.tf1.rsplit(".", 1)[1][:-len("Optimizer")])
    state = State(StateKind.OPTIMIZER, name, name, tr.line,
                  info={"opt": Opt(row.tf1, row,
                                   plain_sgd=row.tf1.endswith("GradientDescentOptimizer"), fed_lr=fed_lr,
                                   tf1_name=tf1_name)})
    tr.note(f"{row.tf1.replace('tensorflow.', 'tf.')} → {row.keras}: {row.why}")
    if fed_lr is not None:
        tr.note("the learning rate is a graph value (fed): assigned to the optimizer's in each step that updates")
    return tr.add_state(state, [statement]), state.expr()


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
    state = State(StateKind.OPTIMIZER, name, name, tr.line, info={"opt": opt})
    tr.note("tf.keras optimizer kept: tf-keras' update rule is Keras 3's (Adam, SGD)")
    return tr.add_state(state, [emit.assign(name, node)]), state.expr()


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


# TF 1.x learning-rate decay → the Keras 3 schedule with the same formula, evaluated at the global step:
# (Keras class, TF 1.x's step parameter (name, position), its other parameters (name, position, Keras
# keyword, or None: the schedule's first positional argument)). Omitted arguments keep their defaults, the
# same in both (staircase/cycle False, end_learning_rate 0.0001, power 1.0, alpha 0.0).
SCHEDULES = {
    "tensorflow.train.exponential_decay": ("ExponentialDecay", ("global_step", 1), (
        ("learning_rate", 0, None), ("decay_steps", 2, "decay_steps"), ("decay_rate", 3, "decay_rate"),
        ("staircase", 4, "staircase"))),
    "tensorflow.train.inverse_time_decay": ("InverseTimeDecay", ("global_step", 1), (
        ("learning_rate", 0, None), ("decay_steps", 2, "decay_steps"), ("decay_rate", 3, "decay_rate"),
        ("staircase", 4, "staircase"))),
    "tensorflow.train.polynomial_decay": ("PolynomialDecay", ("global_step", 1), (
        ("learning_rate", 0, None), ("decay_steps", 2, "decay_steps"), ("end_learning_rate", 3, "end_learning_rate"),
        ("power", 4, "power"), ("cycle", 5, "cycle"))),
    "tensorflow.train.cosine_decay": ("CosineDecay", ("global_step", 1), (
        ("learning_rate", 0, None), ("decay_steps", 2, "decay_steps"), ("alpha", 3, "alpha"))),
    "tensorflow.train.piecewise_constant": ("PiecewiseConstantDecay", ("x", 0), (
        ("boundaries", 1, None), ("values", 2, None))),
}
REQUIRED = {"learning_rate", "decay_steps", "decay_rate", "boundaries", "values"}


def schedule(site: "CallSite"):
    """A TF 1.x decay of the global step → its Keras 3 schedule (`SCHEDULES`), evaluated at the step."""
    tr = site.tr
    cls, (step_name, step_pos), params = SCHEDULES[site.qname]
    short = site.qname.rsplit(".", 1)[1]
    step, _ = site.arg(step_pos, step_name)
    known = {step_name, "name"} | {p for p, _, _ in params}
    at = None if step is None else step_of(site, step)
    if step is not None and at is None:
        site.refuse(f"{short} at `{emit.code(step)}`: tf1clip converts a decay at one step variable, alone or in "
                    "arithmetic with numbers (names bound once to one); the value of anything else at each later "
                    "read is not known here")
    step = at
    if step is None or "name" in site.keywords() or site.keywords() - known:
        site.refuse(f"{short} of something other than a step variable is not converted")
    args = []
    for param, position, keyword in params:
        node, _ = site.arg(position, param)
        if node is None and param in REQUIRED:
            site.refuse(f"{short} of something other than a step variable is not converted")
        if node is not None:
            args.append(cst.Arg(node) if keyword is None else emit.keyword(keyword, node))
    name = site.target or tr.namer.fresh("learning_rate")
    node = emit.with_args(emit.call(tr.tf(f"tensorflow.keras.optimizers.schedules.{cls}")), args)
    state = State(StateKind.SCHEDULE, name, name, tr.line, info={"step": step})
    tr.note(f"tf.train.{short} → a Keras schedule evaluated at `{emit.code(step)}` (same formula)")
    ref = tr.add_state(state, [emit.assign(name, node)])
    return ref, state.expr()


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide)


def step_of(site: "CallSite", node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The point a decay is evaluated at, as each read of the rate writes it: one variable (the global step),
    alone or in arithmetic with numbers (`batch * BATCH_SIZE`, the MNIST tutorial's). A name bound once to
    a number is written as that number (what TF 1.x built with); None for anything else (a tensor, a
    placeholder, a name bound again), whose value at a later read tf1clip does not know."""
    variables = []

    def read(n: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        if isinstance(n, (cst.Integer, cst.Float)):
            return n
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, _ARITHMETIC):
            left, right = read(n.left), read(n.right)
            return None if left is None or right is None else n.with_changes(left=left, right=right)
        av = site.ev.value_of(n)
        if isinstance(av, StateRef) and av.state.kind == StateKind.VARIABLE:
            variables.append(n)
            return n
        if isinstance(n, cst.Name) and n.value in site.tr.folded:
            return shp.integer(site.tr.folded[n.value]).with_changes(lpar=n.lpar, rpar=n.rpar)
        return None

    out = read(node)
    return out if out is not None and len(variables) == 1 else None


def receiver(site: "CallSite") -> State:
    """The optimizer a method is called on (made here), else refused."""
    av = site.receiver
    if not (isinstance(av, StateRef) and av.state.kind == StateKind.OPTIMIZER):
        site.refuse(f"`.{site.qname[2:]}` of something other than an optimizer made here")
    return av.state


def get_slot(site: "CallSite"):
    """`opt.get_slot(v, "m")` → the Keras 3 optimizer variable holding the same value (`SLOTS`)."""
    state = receiver(site)
    opt, tr = opt_of(state), site.tr
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
    **{q: schedule for q in SCHEDULES},
}
CREATORS = set(OPTIMIZERS) | set(KERAS_OPTIMIZERS) | set(SCHEDULES)
METHODS = {
    (StateKind.OPTIMIZER, "get_slot"): get_slot,
}

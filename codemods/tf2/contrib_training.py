"""tf.contrib's and slim's training helpers → the TF 2 step they stand for (TF 1.15 source as the spec).

* `tf.contrib.estimator.clip_gradients_by_norm(opt, c)`: the same optimizer, gradients clipped
  by their global norm (`tf.clip_by_global_norm`) before its update;
* `tf.contrib.layers.optimize_loss(loss, global_step, learning_rate, optimizer, clip_gradients=...)`:
  the optimizer (by name or class) on the learning rate, `compute_gradients` over the trainable
  variables, a float clip → `clip_by_global_norm`, a function → called on the (gradient,
  variable) pairs, `apply_gradients` with the global step; fetching it gives the loss; a
  `learning_rate_decay_fn=lambda lr, gs: ...` is read with the rate and the global step, as TF 1.x called it;
* `slim.learning.create_train_op(total_loss, optimizer, clip_gradient_norm=c)`: per-tensor
  `clip_by_norm` (an IndexedSlices clipped on its `.values`), the update, the global step;
  fetching it gives the loss, checked for inf/NaN.
Arguments beyond these (noise, multipliers, update ops) are refused.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2.model import Func, State, StateKind, StateRef
from codemods.tf2.names import short
from codemods.tf2.optimizer_table import OPTIMIZE_LOSS_NAMES, OPTIMIZERS
from codemods.tf2.optimizers import Opt, optimizer_args, optimizer_class, row_for
from codemods.tf2.step_reads import literal_reaching
from codemods.tf2.syntax import replace_names
from codemods.tf2.training import loss_name, train, variable_list

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

CLIP_DECORATOR = "tensorflow.contrib.estimator.clip_gradients_by_norm"
OPTIMIZE_LOSS = ("tensorflow.contrib.layers.optimize_loss", "slim.optimize_loss")
CREATE_TRAIN_OP = ("slim.learning.create_train_op", "tensorflow.contrib.training.create_train_op")


def clip_decorator(site: "CallSite"):
    tr = site.tr
    inner, inner_av = site.arg(0, "optimizer")
    clip, _ = site.arg(1, "clip_norm")
    if not (isinstance(inner_av, StateRef) and inner_av.state.kind == StateKind.OPTIMIZER) or clip is None or \
            len(site.node.args) != 2:
        site.refuse("clip_gradients_by_norm of something other than an optimizer made here is not converted")
    base = inner_av.state.info["opt"]
    state = State(StateKind.OPTIMIZER, inner_av.state.name, inner_av.state.tf1_name, tr.line,
                  info={"opt": Opt(base.source, base.row, clip_global=clip, plain_sgd=base.plain_sgd),
                        "alias_of": inner_av.state}, ref=inner_av.state.ref)
    tr.note("contrib clip_gradients_by_norm → tf.clip_by_global_norm before apply_gradients")
    return StateRef(state), inner_av.state.expr()


def _float_literal(site: "CallSite", node) -> bool:
    """`node` is a float where TF 1.x built the graph: a literal, or a name the one definition reaching here binds
    to one (a later binding is the steps' concern: `step_reads` gives them the value built with)."""
    if isinstance(node, cst.Float):
        return True
    if isinstance(node, cst.Name):
        value = site.tr.host_literal(node.value) or literal_reaching(site.tr, node.value, site.tr.line)
        return isinstance(value, cst.Float)
    return False


def optimize_loss(site: "CallSite"):
    allowed = {"loss", "global_step", "learning_rate", "optimizer", "clip_gradients", "variables", "summaries", "name",
               "learning_rate_decay_fn"}
    extra = site.keywords() - allowed
    if extra or site.positional() > 4:
        site.refuse(f"optimize_loss arguments {sorted(extra) or 'beyond the first four'} are not converted (noise, "
                    "multipliers, update_ops)")
    tr = site.tr
    loss = loss_name(site, *site.arg(0, "loss"))
    gs = site.arg(1, "global_step")
    lr, _ = site.arg(2, "learning_rate")
    kind, kind_av = site.arg(3, "optimizer")
    clip, clip_av = site.arg(None, "clip_gradients")
    given = kind_av.state if isinstance(kind_av, StateRef) and kind_av.state.kind == StateKind.OPTIMIZER else None
    if not (isinstance(gs[1], StateRef) and gs[1].state.kind == StateKind.VARIABLE) or lr is None and given is None:
        site.refuse("optimize_loss needs a global step variable and a learning rate here")
    if given is not None:  # an optimizer object: TF 1.x used it as it was (a learning_rate made only its variable)
        state = given
    else:
        decay, _ = site.arg(None, "learning_rate_decay_fn")
        state = _optimizer_named(site, kind, kind_av, lr if decay is None else _decayed(site, decay, lr, gs[0]))
    variables = variable_list(site, *site.arg(None, "variables"))
    clip_fn = None
    if clip is not None:
        if _float_literal(site, clip):
            def clip_fn(grads, variables, pairs):
                return [emit.stmt("{g}, _ = {tf}.clip_by_global_norm({g}, {c})", g=grads, tf=tr.alias, c=clip)], pairs
        elif isinstance(clip_av, Func):
            def clip_fn(grads, variables, pairs):
                return [], emit.expr("{f}(list(zip({g}, {v})))", f=clip, g=grads, v=variables)
        else:
            site.refuse(f"optimize_loss(clip_gradients={emit.code(clip)}): not known here to be a float or a function "
                        "of the script where the graph is built (TF1 raised for an int or a tensor)")
    tr.note("optimize_loss → tape.gradient, its clipping, apply_gradients and the global step increment; fetching "
            "it gives the loss, as in TF1")
    return _with_update_ops(site, train(site, state, loss, variables, gs, clip_fn, returns=loss))


def _decayed(site: "CallSite", decay: cst.BaseExpression, lr: cst.BaseExpression, step: cst.BaseExpression):
    """optimize_loss's `learning_rate_decay_fn(lr, global_step)`, called as TF 1.x called it: the lambda's body read
    with the learning rate and the global step, its value the optimizer's rate (a decay of the step: its Keras
    schedule, `optimizers.schedule`). TF 1.x passed a float rate as a variable holding it, which the decay read
    once per step: the same numbers."""
    if not isinstance(decay, cst.Lambda):
        site.refuse(f"optimize_loss(learning_rate_decay_fn={emit.code(decay)}): a lambda written there is converted; a "
                    "function of the script would stay in the TF 2 program with its TF 1.x decay")
    params, body = decay.params, decay.body
    names = [p.name.value for p in params.params]
    if len(names) != 2 or params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params or \
            params.star_kwarg is not None or params.posonly_params or any(p.default is not None for p in params.params):
        site.refuse("optimize_loss's learning_rate_decay_fn with other parameters than (learning_rate, global_step) "
                    "is not converted")
    called = replace_names(body, dict(zip(names, (emit.paren(lr), emit.paren(step)))))
    av, node = site.tr.evaluator(site.tr.env).evaluate(called)
    site.tr.note(f"optimize_loss's learning_rate_decay_fn → `{emit.code(called)}`, its call with the learning rate "
                 "and the global step, as TF 1.x made it")
    return site.ev.adopt(node, av)



def _optimizer_named(site: "CallSite", kind, kind_av, lr) -> State:
    """optimize_loss's optimizer given by name ("SGD", "Adam") or class, made with the learning rate."""
    tr = site.tr
    if isinstance(kind, cst.SimpleString) and kind.evaluated_value in OPTIMIZE_LOSS_NAMES:
        row = OPTIMIZERS[OPTIMIZE_LOSS_NAMES[kind.evaluated_value]]
    elif getattr(kind_av, "qname", None) in OPTIMIZERS:
        row = OPTIMIZERS[kind_av.qname]
    else:
        site.refuse(f"optimize_loss(optimizer={emit.code(kind) if kind is not None else None}) is not converted")
    name = tr.namer.fresh("optimizer")
    call = cst.Call(func=cst.Name("x"), args=[cst.Arg(lr)])
    row = row_for(site, row, call)
    args, _, fed_lr = optimizer_args(site, row, call)
    statement = emit.with_comment(emit.assign(name, emit.with_args(emit.call(optimizer_class(tr, row)), args)),
                                  f"optimize_loss's optimizer. {row.why}")
    state = State(StateKind.OPTIMIZER, name, name, tr.line,
                  info={"opt": Opt(row.tf1, row,
                                   plain_sgd=row.tf1.endswith("GradientDescentOptimizer"), fed_lr=fed_lr)})
    tr.add_state(state, [statement])
    return state


def create_train_op(site: "CallSite"):
    extra = site.keywords() - {"total_loss", "optimizer", "clip_gradient_norm", "global_step"}
    if extra or site.positional() > 2:
        site.refuse(f"create_train_op arguments {sorted(extra)} are not converted")
    tr = site.tr
    loss = loss_name(site, *site.arg(0, "total_loss"))
    owner, owner_av = site.arg(1, "optimizer")
    if not (isinstance(owner_av, StateRef) and owner_av.state.kind == StateKind.OPTIMIZER):
        site.refuse("create_train_op of an unknown optimizer")
    gs = site.arg(None, "global_step")
    if gs[0] is None:
        existing = next((s for s in tr.states if s.info.get("global_step")), None)
        gs = (existing.expr(), StateRef(existing)) if existing is not None else None
    clip, _ = site.arg(None, "clip_gradient_norm")
    clip_fn = None
    if clip is not None:
        def clip_fn(grads, variables, pairs):
            line = emit.stmt("{g} = [None if g is None else {tf}.clip_by_norm(g, {c}) for g in {g}]",
                             g=grads, tf=tr.alias, c=clip)
            return [emit.with_comment(line, "slim's clip_gradient_norm: per tensor; an IndexedSlices is clipped "
                                            "on its .values")], pairs
    if site.ev.target is None:
        site.refuse("create_train_op not bound to a name is not converted")
    variables = variable_list(site, None, None)
    tr.note("create_train_op → tape.gradient, per-tensor clip_by_norm, apply_gradients; fetching it gives the loss "
            "(checked for inf/NaN), as in TF1")
    return _with_update_ops(site, train(site, owner_av.state, loss, variables, gs, clip_fn, returns=site.ev.target,
                                        check_numerics=True))


def _with_update_ops(site: "CallSite", made: tuple) -> tuple:
    """optimize_loss and create_train_op ran the UPDATE_OPS collection (as it stood) before the update, as TF 1.x's
    `update_ops=None` did: the batch normalization updates made so far are its dependencies."""
    if site.tr.update_ops:
        site.ev.train.deps = [op.name for op in site.tr.update_ops]
        site.tr.note(f"{short(site.qname)} runs the {len(site.tr.update_ops)} batch normalization update(s) of "
                     "UPDATE_OPS first, as TF 1.x did")
    return made


# arguments a converter reads itself, where TF 1.x used them (not evaluated with the rest of the call)
DEFERRED = {q: frozenset({"learning_rate_decay_fn"}) for q in OPTIMIZE_LOSS}
CALLS = {
    CLIP_DECORATOR: clip_decorator,
    **{q: optimize_loss for q in OPTIMIZE_LOSS},
    **{q: create_train_op for q in CREATE_TRAIN_OP},
}
CREATORS = set(CALLS)

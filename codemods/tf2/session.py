"""The session code: each `sess.run(fetches, feed_dict)` → a call returning what TF 1.x returned.

`sess.run`, `tensor.eval(feed_dict)` and `op.run(feed_dict)` are one thing: a fetch structure
(a name, a list, a tuple, a dict) of graph things, and feeds for placeholders. Values and
update ops are computed by the step function for that fetch set (`steps`); the call's result
comes back as NumPy values in the fetch's structure (`.numpy()`), update ops as None (a `_`
target is dropped); variables alone are read directly (`w.numpy()`); the first
`sess.run(tf.global_variables_initializer())` disappears (TF 2 variables are initialized where
they are created). A feed dict bound to a name (`feed = {x: ..., y: ...}`) is read at its uses.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import batch_norm, data, emit, feed_dicts, fetch_structures, runtime_feeds, summaries
from codemods.tf2.fetch_structures import Structure
from codemods.tf2.interfaces import FetchKind, Leaf
from codemods.tf2.model import (HOST, AVKind, Element, Input, Mapping, Op, OpKind, Other, OtherKind, Seq, SeqKind, Session,
                                StateKind, StateRef, Tensor)
from codemods.tf2.syntax import target_names

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite
    from codemods.tf2.program import Program


@dataclass
class Fetch:
    kind: FetchKind
    node: cst.BaseExpression        # its TF 2 expression
    single: bool = True             # certainly one tensor (`.numpy()` converts it)
    name: Optional[str] = None
    host: object = None             # what the fetched value denotes in the host code, if not plain values
    holds_variables: bool = False   # a structure of values that also holds variables ((gradient, variable) pairs)
    ref_variable: bool = False      # a variable of the program: TF 1.x made it a ref variable (see `translate`)
    gives: bool = False             # an update op whose TF 1.x run gave a value (`GraphOp.info["gives"]`)
    value: bool = False             # that value, when this run keeps it: the step returns it
    initializes_nothing: bool = False  # an initializer of local variables only: the program makes none


def _run_parts(tr: "Program", node) -> Optional[tuple]:
    """(fetches node, feed_dict node) if `node` is a session run (`sess.run`, `x.eval`, `op.run`)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    attr, owner = node.func.attr.value, node.func.value
    owner_av = tr.env.get(owner.value) if isinstance(owner, cst.Name) else None
    args = node.args

    def get(index, keyword):
        for a in args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a.value
        positional = [a for a in args if a.keyword is None]
        return positional[index].value if index < len(positional) else None

    if attr == "run" and isinstance(owner_av, Session):
        extra = {a.keyword.value for a in args if a.keyword is not None} - {"fetches", "feed_dict"}
        if extra or len([a for a in args if a.keyword is None]) > 2:
            tr.refuse("sess.run with options or run_metadata is not converted")
        return get(0, "fetches"), get(1, "feed_dict")
    module = isinstance(owner, (cst.Name, cst.Attribute)) and tr.names.is_tf(owner)  # `tf.app.run()`
    if attr in ("eval", "run") and not isinstance(owner_av, Session) and not module:
        ev = tr.evaluator(tr.env)
        av, _ = ev.evaluate(owner)
        if attr == "eval" and (av.graph or isinstance(av, StateRef)) or attr == "run" and isinstance(av, Op):
            extra = {a.keyword.value for a in args if a.keyword is not None} - {"feed_dict", "session"}
            if extra or len([a for a in args if a.keyword is None]) > 1:
                tr.refuse(f"`.{attr}()` with arguments other than feed_dict/session is not converted")
            return owner, get(0, "feed_dict")
    return None


def is_run(tr: "Program", node) -> bool:
    return _run_parts(tr, node) is not None


# -- fetches ------------------------------------------------------------------------------------------
def _fetch(tr: "Program", node) -> Fetch:
    ev = tr.evaluator(tr.env)
    av, new = ev.evaluate(node)
    if tr.pending:
        tr.refuse(f"sess.run of `{emit.code(node)}` creates state: not converted")
    name = node.value if isinstance(node, cst.Name) else None
    if batch_norm.fetched(av):
        tr.refuse(f"sess.run of `{emit.code(node)}`, batch normalization's update ops: TF 1.x gave the moving averages "
                  "after an update it ran in an order it left open with the rest of the run; not converted (wire them "
                  "in with tf.control_dependencies instead)")
    if isinstance(av, Op):
        if av.op.kind == OpKind.INIT:
            return Fetch(FetchKind.INIT, new, initializes_nothing=bool(av.op.info.get("local")))
        if av.op.kind == OpKind.ITERATOR_INIT:
            return Fetch(FetchKind.ITERATOR_INIT, new, host=av.op)
        if av.op.kind in (OpKind.SUMMARY, OpKind.MERGED):
            return Fetch(FetchKind.VALUE, summaries.fetched(av.op), single=False, name=name or av.op.name,
                         host=Other(OtherKind.SUMMARY_VALUES, av.op.info))
        if av.op.kind in (OpKind.TRAIN, OpKind.ASSIGN, OpKind.GROUP) and av.op.name is not None:
            return Fetch(FetchKind.TRAIN, new, name=av.op.name, gives=bool(av.op.info.get("gives")),
                         single=not av.op.info.get("items"))  # (assign ops over a list give a list)
        if av.op.kind == OpKind.ASSIGN and av.op.info.get("direct") is not None:
            return Fetch(FetchKind.VAR, new)  # assigned eagerly where the run was; the run returned the new value
        if av.op.info.get("bound_with"):
            tr.refuse(f"sess.run of `{emit.code(node)}`: its update op was built in one assignment with other values "
                      f"(`{av.op.info['bound_with']} = ...`, or a function's `return loss, opt.minimize(loss)` read "
                      "in place), which is not converted; bind the op to a name of its own first")
        tr.refuse(f"sess.run of `{emit.code(node)}` ({av.op.kind.value}) is not converted")
    if ev.train is not None:
        tr.refuse(f"an update op built inside sess.run (`{emit.code(node)}`) is not converted")
    if isinstance(av, StateRef) and av.state.kind == StateKind.VARIABLE:
        return Fetch(FetchKind.VAR, new, name=name, ref_variable=True)
    if isinstance(av, StateRef) and av.state.kind == StateKind.SCHEDULE:
        return Fetch(FetchKind.VALUE, new, name=name)
    if isinstance(av, Seq) and av.items and all(isinstance(i, StateRef) for i in av.items):
        return Fetch(FetchKind.VAR, emit.expr("[v.numpy() for v in {x}]", x=_paren(new)), name=name, single=False)
    if av.graph and _holds_variables(av):
        return Fetch(FetchKind.VALUE, new, single=False, name=name, holds_variables=True)
    if isinstance(av, Input) or (isinstance(av, Tensor) and av.graph):
        return Fetch(FetchKind.VALUE, new, single=isinstance(av, Input) or av.single, name=name)
    if av.graph:
        return Fetch(FetchKind.VALUE, new, single=False, name=name)
    if isinstance(av, Element):  # `tf.trainable_variables()[0]`: one of them, not known which
        tr.refuse(f"sess.run of `{emit.code(node)}`, an item of a list of variables or tensors that tf1clip does not "
                  "follow to the one it is, is not converted")
    tr.refuse(f"sess.run of `{emit.code(node)}`: tf1clip does not know it as a graph value here (it follows variables, "
              "tensors and ops bound to names or written in list literals, and lists of variables grown by +=, append "
              "or extend at the module's top level; not an item of a list that another name, object or function "
              "may hold or change, or that a call returns), so it is not converted")


def _holds_variables(av) -> bool:
    if isinstance(av, Tensor):
        return av.pairs
    if isinstance(av, StateRef):
        return av.state.kind == StateKind.VARIABLE
    return isinstance(av, Seq) and any(_holds_variables(i) for i in av.items)


def _structure(tr: "Program", node):
    """(Structure, parts): a LEAF's Fetch, a LIST's or TUPLE's parts, or a DICT's (key node, part)."""
    if isinstance(node, (cst.List, cst.Tuple)):
        return (Structure.LIST if isinstance(node, cst.List) else Structure.TUPLE,
                [_structure(tr, e.value) for e in node.elements])
    if isinstance(node, cst.Dict):
        parts = []
        for e in node.elements:
            if not isinstance(e, cst.DictElement):
                tr.refuse("a fetch dict with ** is not converted")
            parts.append((e.key, _structure(tr, e.value)))
        return (Structure.DICT, parts)
    return (Structure.LEAF, _fetch(tr, node))


def _numpy(fetch: Fetch, node: cst.BaseExpression, alias: str) -> cst.BaseExpression:
    if fetch.single:
        return emit.expr("{x}.numpy()", x=node)
    return emit.expr("{tf}.nest.map_structure(lambda t: t.numpy(), {x})", tf=alias, x=node)


def translate(tr: "Program", fetch_node, feed_node, targets=None, used: bool = True) -> tuple:
    """(replacement expression or None, new targets or None): `targets` is the assignment's target
    when the result is unpacked (its `_` for update ops are dropped); `used` is False for a run whose
    result is dropped (a statement of its own)."""
    structure = _structure(tr, fetch_node)
    leaves = fetch_structures.leaves(structure)
    _keep_op_values(structure, targets if used else _DROPPED)
    runtime = runtime_feeds.feeds(tr, feed_node)
    feeds = feed_dicts.feeds_of(tr, feed_node) if runtime is None else []
    _record_bindings(tr, structure, targets)
    if all(l.kind == FetchKind.INIT for l in leaves):
        if all(l.initializes_nothing for l in leaves):
            tr.note("sess.run(local variables' initializer) dropped: the program makes no local variable")
            return None, targets
        if tr.runs_seen or tr.loop_depth:
            tr.refuse("the initializer runs again after training started (or in a loop): re-initializing the "
                      "variables is not converted")
        tr.note("sess.run(initializer) dropped: TF 2 variables are initialized where they are created")
        return None, targets
    if any(l.kind in (FetchKind.INIT, FetchKind.ITERATOR_INIT) for l in leaves):
        tr.refuse("sess.run of an initializer together with other fetches (or in an expression) is not converted")
    if all(l.kind == FetchKind.VAR for l in leaves):
        return fetch_structures.rebuild(
            structure, lambda f: emit.expr("{x}.numpy()", x=f.node) if f.single else f.node), targets
    updates = [l for l in leaves if l.kind == FetchKind.TRAIN]
    # A variable fetched with an update: TF 1.x leaves the read and the update unordered, but its
    # variables here are ref variables (the tier refuses use_resource, enable_resource_variables and
    # enable_v2_behavior), whose fetched value shares the buffer the update writes in place: on the
    # CPU, sess.run gave the value after the update, run after run. The step returns the variable
    # after its update (a tf.function reads it where it returns, after the update), as parity's
    # OLD side records it. Other structures holding variables stay refused.
    if updates and any(l.kind == FetchKind.VAR and not l.ref_variable or l.holds_variables for l in leaves):
        tr.refuse("sess.run of an update op and a variable together: TF 1.x does not order the read and the update")
    mixed = [l for l in leaves if l.holds_variables]
    if mixed:
        tr.refuse(f"sess.run of `{emit.code(mixed[0].node)}`, a structure holding variables with tensors (pairs of "
                  "gradients and variables), is not converted")
    if len(updates) > 1:
        tr.refuse(f"sess.run of two update ops together ({', '.join(f'`{emit.code(l.node)}`' for l in updates)}): "
                  "TF 1.x does not order them, so what each reads depends on the scheduler")
    step_leaves = [Leaf(FetchKind.TRAIN if l.kind == FetchKind.TRAIN else FetchKind.VALUE, l.node, l.name,
                        l.value) for l in leaves]
    whole = fetch_structures.whole_structure(tr, structure, targets)
    shape = fetch_structures.FetchShape(structure) if whole else None
    if runtime is None:
        step, call = tr.steps.step_for(step_leaves, feeds, shape)
    else:
        step, call = runtime_feeds.step_call(tr, step_leaves, runtime, feed_node, shape)
    tr.runs_seen = True
    if shape is not None:
        tr.note("sess.run of a fetch structure → a step returning that structure (None for an op)")
        return emit.expr("{tf}.nest.map_structure(lambda t: None if t is None else t.numpy(), {c})",
                         tf=tr.alias, c=call), targets
    kind, parts = structure
    if kind == Structure.LEAF:
        leaf = parts
        if leaf.kind == FetchKind.TRAIN:
            returned = any(r.name == leaf.name for r in step.returns)
            value = _numpy(Fetch(FetchKind.VALUE, call, single=leaf.single), call, tr.alias) if returned else call
            return value, targets
        return _numpy(leaf, call, tr.alias), targets
    fetched = [p[1] for p in parts]
    nones = [f.kind == FetchKind.TRAIN and not any(r.name == f.name for r in step.returns) for f in fetched]
    if not any(nones):
        if len(fetched) == 1:  # the step returns the one value itself
            one = [cst.Element(_numpy(fetched[0], call, tr.alias))]
            return (cst.List(one) if kind == Structure.LIST else cst.Tuple(one)), targets
        if all(f.single for f in fetched):
            template = "[v.numpy() for v in {c}]" if kind == Structure.LIST else "tuple(v.numpy() for v in {c})"
            return emit.expr(template, c=call), targets
        return emit.expr("{tf}.nest.map_structure(lambda t: t.numpy(), {c})", tf=tr.alias, c=call), targets
    if not isinstance(targets, (cst.Tuple, cst.List)) or len(targets.elements) != len(fetched) or any(
            isinstance(e, cst.StarredElement) for e in targets.elements):
        if targets is None and all(nones):
            return call, None
        tr.refuse("the result of sess.run([update, ...]) is used without unpacking it: not converted")
    kept = [(el, f) for el, f, none in zip(targets.elements, fetched, nones) if not none]
    for el, none in zip(targets.elements, nones):
        if none and not (isinstance(el.value, cst.Name) and el.value.value == "_"):
            tr.refuse(f"the update op's fetched value (None) is bound to `{emit.code(el.value)}`: not converted")
    if not kept:
        return call, None
    if len(kept) == 1:
        return _numpy(kept[0][1], call, tr.alias), kept[0][0].value
    new_targets = targets.with_changes(elements=[el.with_changes(comma=cst.MaybeSentinel.DEFAULT) for el, _ in kept])
    if all(f.single for _, f in kept):
        return emit.expr("[v.numpy() for v in {c}]", c=call), new_targets
    return emit.expr("{tf}.nest.map_structure(lambda t: t.numpy(), {c})", tf=tr.alias, c=call), new_targets


_DROPPED = cst.Name("_")


def _keep_op_values(structure, targets) -> None:
    """An update op whose TF 1.x run gave a value (an assign op: its variable's new value) gives it here too
    where the run keeps it: anything but dropped (the run a statement of its own, the whole result bound to
    `_`, or the op's place in a flat list unpacked into `_`). The step returns the variable after the op."""
    def dropped(target) -> bool:
        return isinstance(target, cst.Name) and target.value == "_"

    kind, parts = structure
    if kind == Structure.LEAF:
        places = [(structure, targets)]
    elif kind in (Structure.LIST, Structure.TUPLE) and isinstance(targets, (cst.Tuple, cst.List)) and \
            len(targets.elements) == len(parts) and all(isinstance(e, cst.Element) for e in targets.elements):
        places = [(p, e.value) for p, e in zip(parts, targets.elements)]
    else:
        places = [(structure, _DROPPED if dropped(targets) else None)]
    for part, target in places:
        for leaf in fetch_structures.leaves(part):
            if leaf.kind == FetchKind.TRAIN and leaf.gives and not dropped(target):
                leaf.value = True


def _paren(node):
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _record_bindings(tr: "Program", structure, targets) -> None:
    """Targets that will hold a fetched summary are bound to what it denotes (for add_summary)."""
    tr.bindings = {}
    kind, parts = structure
    if kind == Structure.LEAF and isinstance(targets, cst.Name) and parts.host is not None:
        tr.bindings[targets.value] = parts.host
    elif kind in (Structure.LIST, Structure.TUPLE) and isinstance(targets, (cst.Tuple, cst.List)) and \
            len(targets.elements) == len(parts):
        for el, (k, p) in zip(targets.elements, parts):
            if k == Structure.LEAF and isinstance(el.value, cst.Name) and p.host is not None:
                tr.bindings[el.value.value] = p.host
    elif kind == Structure.DICT and isinstance(targets, cst.Name) and all(
            k == Structure.LEAF for _, (k, _) in parts):  # `out = sess.run({'s': merged, ...})`: `out['s']`
        tr.bindings[targets.value] = Mapping([key for key, _ in parts],
                                             [p.host if p.host is not None else HOST for _, (_, p) in parts])
    elif kind in (Structure.LIST, Structure.TUPLE) and isinstance(targets, cst.Name) and all(
            k == Structure.LEAF for k, _ in parts):  # `out = sess.run([merged, train_op])`: `out[0]`
        tr.bindings[targets.value] = Seq([p.host if p.host is not None else HOST for _, p in parts], SeqKind.LIST)
    elif any(l.host is not None for l in fetch_structures.leaves(structure)):
        tr.refuse("a fetched summary that is not unpacked into a name, or held in a structure bound to one name "
                  "(to give to add_summary), is not converted")


# -- statements and expressions ----------------------------------------------------------------------
def expression_run(tr: "Program", st, small: cst.Expr) -> list:
    fetch, feed = _run_parts(tr, small.value)
    structure = _structure(tr, fetch)
    if structure[0] == Structure.LEAF and structure[1].kind == FetchKind.ITERATOR_INIT:
        state = structure[1].host.info["iterator"]
        if tr.classes.frame is None and tr.region_locals and state.name not in tr.region_locals and \
                not isinstance(state.expr(), cst.Attribute):
            tr.refuse("an iterator of the module initialized inside a function is not converted")
        tr.note("sess.run(iterator initializer) → iterator = iter(dataset)")
        return [data.initializer_statement(structure[1].host).with_changes(leading_lines=st.leading_lines)]
    value, _ = translate(tr, fetch, feed, None, used=False)
    if value is None:
        return []
    if _is_numpy_of_call(value):
        value = value.func.value  # the result is dropped: no conversion needed
    return [st.with_changes(body=[small.with_changes(value=value)])]


def _is_numpy_of_call(node) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "numpy"
            and isinstance(node.func.value, cst.Call) and not node.args)


def assign_run(tr: "Program", st, small: cst.Assign) -> list:
    fetch, feed = _run_parts(tr, small.value)
    target = small.targets[0].target
    value, targets = translate(tr, fetch, feed, target)
    for n in target_names(target):
        tr.env[n] = tr.bindings.get(n, HOST)
    if value is None:
        return []
    if targets is None:
        return [st.with_changes(body=[cst.Expr(value)])]
    tr.note("sess.run → a call returning the fetched values as NumPy arrays")
    return [st.with_changes(body=[small.with_changes(targets=[small.targets[0].with_changes(target=targets)],
                                                     value=value)])]


def run_call(site: "CallSite"):
    """A run inside a larger expression (`print(sess.run(w))`): its value, converted."""
    parts = _run_parts(site.tr, site.original)
    if parts is None:
        site.refuse(f"`{emit.code(site.original)}` is not converted")
    value, _ = translate(site.tr, parts[0], parts[1], None)
    if value is None:
        site.refuse("sess.run(initializer) inside an expression is not converted")
    return HOST, value


def close(site: "CallSite"):
    return Other(OtherKind.SESSION_CLOSE, {"drop": True, "what": "closing the Session"}), site.node


def as_default(site: "CallSite"):
    return Other(OtherKind.SCOPE, {"enter": None, "leave": None}), site.node


METHODS = {
    (AVKind.SESSION, "run"): run_call,
    (AVKind.SESSION, "close"): close,
    (AVKind.SESSION, "as_default"): as_default,
    (AVKind.TENSOR, "eval"): run_call,
    (StateKind.VARIABLE, "eval"): run_call,
    (AVKind.OP, "run"): run_call,
}
__all__ = ["METHODS", "Mapping"]

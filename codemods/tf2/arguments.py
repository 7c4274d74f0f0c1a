"""What a function or method that runs the session is given at its call.

Such a function (`def run_epoch(sess, train_op, saver, step)`, a model's
`train_one_epoch(self, sess, saver, init, writer, epoch, step)`) is read once, as a region of its
own, with each parameter standing for what its first call gave:

- **the Session**: the parameter is the Session in the body (its `sess.run` calls become step
  calls); TF 2 has no Session, so the parameter leaves the definition and every call;
- **a graph thing** (an update op, an initializer, a value, a placeholder, a variable) given as a
  name or an attribute (`train_op`, `self.train_init`): the body is read with that expression in
  place of the parameter, as TF 1.x ran it with that very object. Its uses become step calls
  (or reads of the variable), so the parameter leaves the definition and every call;
- **a Saver or a FileWriter**: plain objects in TF 2 too (a Checkpoint, a summary writer). The
  parameter stays and is that object in the body (its `save` / `add_summary` are written on the
  parameter), and the call passes the caller's object;
- **an object known by kind** (a dataset, a config): the parameter is that object in the body.

The body is read once, so every later call must give the same things (the same op, the same
Saver): otherwise the one TF 2 definition could not do what each call did, and it is refused.
A graph thing computed in the call (`run(sess, ops[0])`, `run(sess, a + b)`) is refused too.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from codemods.tf2 import symbols
from codemods.tf2.emit import code
from codemods.tf2.model import AV, Input, Op, Other, Seq, Session, StateKind, StateRef, Tensor
from codemods.tf2.syntax import names_of

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

HOST_STATE = (StateKind.SAVER, StateKind.WRITER)  # state whose TF 2 object the host code uses by name: passed as it is


@dataclass
class Given:
    """How a region's parameters are bound for one call."""

    objects: dict = field(default_factory=dict)     # parameter -> abstract value in the body
    substitute: dict = field(default_factory=dict)  # parameter -> the argument, in place of the parameter
    dropped: set = field(default_factory=set)       # parameters gone from the definition and the calls
    sessions: set = field(default_factory=set)      # parameters that are the Session
    keys: dict = field(default_factory=dict)        # parameter -> what a later call must give again
    roots: dict = field(default_factory=dict)       # name -> what it denotes where the call is (substituted)


def _root(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value


def _reference(node: cst.BaseExpression) -> bool:
    """A name or an attribute chain on a name (`train_op`, `self.model.train_op`)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _params(fn: cst.FunctionDef, skip: int) -> list:
    return [p.name.value for p in [*fn.params.posonly_params, *fn.params.params]][skip:]


def _pairs(fn: cst.FunctionDef, call: cst.Call, skip: int, site: "CallSite") -> list:
    """[(parameter, argument)] of the call, by position and keyword."""
    positional = _params(fn, skip)
    names = set(positional) | {p.name.value for p in fn.params.kwonly_params}
    out = []
    for i, a in enumerate(call.args):
        if a.star:
            site.refuse(f"`{fn.name.value}(*args/**kwargs)`, which runs the session, is not converted")
        p = a.keyword.value if a.keyword is not None else (positional[i] if i < len(positional) else None)
        if p is None or p not in names:
            site.refuse(f"the arguments of `{fn.name.value}(...)` do not match its parameters")
        out.append((p, a.value))
    return out


def bind(fn: cst.FunctionDef, site: "CallSite", fn_locals: set, assigned: set, skip: int = 0) -> Given:
    """The parameters of `fn` (after the first `skip`, e.g. `self`) as this call gives them;
    `fn_locals` are the names `fn` binds (its parameters too), `assigned` those its body assigns."""
    given = Given()
    what = f"`{fn.name.value}(...)`"
    originals = [a.value for a in site.original.args]
    for k, (p, arg) in enumerate(_pairs(fn, site.node, skip, site)):
        av = site.ev.value_of(arg)
        arg = originals[k]  # as the caller wrote it: the body is read with it, in the caller's terms
        if isinstance(av, Other):
            given.objects[p] = av
            given.keys[p] = ("object", av.kind)
        elif isinstance(av, Session):
            given.objects[p] = av
            given.sessions.add(p)
            given.dropped.add(p)
            given.keys[p] = ("session",)
        elif isinstance(av, StateRef) and av.state.kind in HOST_STATE:
            given.objects[p] = StateRef(dataclasses.replace(av.state, ref=cst.Name(p)))
            given.keys[p] = ("state", id(av.state))
        elif isinstance(av, (Op, Input, Tensor, StateRef, Seq)) and (av.graph or isinstance(av, (Op, StateRef))):
            if not _reference(arg):
                site.refuse(f"{what} runs the session and is given `{code(arg)}` as `{p}`, a graph value computed "
                            "in the call: not converted (bind it to a name first)")
            root = _root(arg)
            if p in assigned or root in fn_locals - {p}:
                site.refuse(f"{what} runs the session and is given `{code(arg)}` as `{p}`, and binds `{p}` or "
                            f"`{root}` itself: not converted")
            given.substitute[p] = arg
            given.roots[root] = site.ev.env.get(root)
            given.dropped.add(p)
            given.keys[p] = ("graph", id(av))
        elif isinstance(av, AV) and av.graph:
            site.refuse(f"{what} runs the session and is given `{code(arg)}` as `{p}`: not converted")
    return given


def same_as_before(before: Optional[dict], now: Given) -> bool:
    return before is None or before == now.keys


def drop_params(fn: cst.FunctionDef, dropped: set) -> cst.FunctionDef:
    if not dropped:
        return fn
    params = fn.params
    kept = [p for p in params.params if p.name.value not in dropped]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return fn.with_changes(params=params.with_changes(
        params=kept, kwonly_params=[p for p in params.kwonly_params if p.name.value not in dropped]))


def drop_args(fn: cst.FunctionDef, call: cst.Call, dropped: set, skip: int = 0) -> cst.Call:
    """The call without the arguments of the dropped parameters."""
    if not dropped:
        return call
    positional = _params(fn, skip)
    kept = []
    for i, a in enumerate(call.args):
        p = a.keyword.value if a.keyword is not None else (positional[i] if i < len(positional) else None)
        if p not in dropped:
            kept.append(a)
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=kept)


def given_session(site: "CallSite") -> bool:
    """The call hands the Session on (`run_epoch(sess, ...)`): the function runs it."""
    return any(isinstance(site.ev.value_of(a.value), Session) for a in site.node.args)


def call_without(site: "CallSite", fn: cst.FunctionDef, dropped: set, skip: int = 0) -> cst.Call:
    """The call as TF 2 makes it: the dropped parameters' arguments gone. What they gave is read in the
    function's body, so it is no graph use at the call."""
    new = drop_args(fn, site.node, dropped, skip)
    site.ev.uses -= names_of(site.node) - names_of(new)
    return new


def free_names(fn: cst.FunctionDef) -> set:
    """Names `fn` reads that neither it nor a function inside it binds (CPython's symbol tables;
    libcst's scope analysis for a text CPython rejects)."""
    module = cst.Module(body=[fn])
    try:
        return symbols.free_names(module.code)
    except SyntaxError:
        pass
    wrapper = MetadataWrapper(module)
    out = set()
    for scope in {id(s): s for s in wrapper.resolve(ScopeProvider).values() if s is not None}.values():
        out |= {a.node.value for a in scope.accesses if not a.referents and isinstance(a.node, cst.Name)}
    return out


def closed_over(fn: cst.FunctionDef, wanted: set) -> set:
    """The names of `wanted` (read by functions defined inside `fn`, in their TF 2 bodies) that `fn` binds
    once and takes as no parameter: the inner functions read them as Python's closures do, the binding
    `fn` made."""
    wrapper = MetadataWrapper(cst.Module(body=[fn]), unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    inner = next((scopes[s] for s in fn.body.body if s in scopes), None)
    if inner is None:
        return set()
    return {n for n in wanted if len(inner.assignments[n]) == 1
            and not any(isinstance(a.node, cst.Param) for a in inner.assignments[n])}


def share(fn: cst.FunctionDef, wanted: set, module_names: set) -> tuple:
    """(`fn` with a `global` statement, the names it declares): the names of `wanted` (read by the
    functions `fn` calls, in their TF 2 bodies) that `fn` binds: the state and graph things it made and
    handed on. (None, those names) when one cannot be shared: `fn` takes it as a parameter or binds it
    more than once, or the module has a name of that spelling (`module_names`)."""
    wrapper = MetadataWrapper(cst.Module(body=[fn]), unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    inner = next((scopes[s] for s in fn.body.body if s in scopes), None)
    if inner is None:
        return fn, set()
    shared = {n for n in wanted if inner.assignments[n]}
    if not shared:
        return fn, set()
    for n in shared:
        if n in module_names or len(inner.assignments[n]) != 1 or any(
                isinstance(a.node, cst.Param) for a in inner.assignments[n]):
            return None, shared
    body = list(fn.body.body)
    first = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)) else 0
    declared = cst.SimpleStatementLine([cst.Global([cst.NameItem(cst.Name(n)) for n in sorted(shared)])])
    return fn.with_changes(body=fn.body.with_changes(body=[*body[:first], declared, *body[first:]])), shared


__all__ = ["Given", "bind", "call_without", "closed_over", "drop_args", "drop_params", "free_names", "given_session",
           "same_as_before", "share"]

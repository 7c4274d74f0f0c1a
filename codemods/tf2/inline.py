"""A helper's body read at one call, as TF 1.x ran it there.

`inline_call` gives the statements the call stands for: the arguments bound to the
parameters (a name or a literal is put in place of the parameter; any other argument is
evaluated once, into a fresh name, as Python did), every local renamed to a name free in the
program, `if` tests that are constant once the arguments are in (`if reuse:`) decided, and
the final `return value` bound to the call's target. The translator then reads them like any
other statements: state is created once per call (or found again under `reuse`), values go
into the step functions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.children import children
from codemods.tf2 import fixed_values, list_growth
from codemods.tf2._base import NameTransformer
from codemods.tf2.emit import code
from codemods.tf2.syntax import bound_names, function_locals, names_of

if TYPE_CHECKING:
    from codemods.tf2.program import Program


class Rename(NameTransformer):
    """Parameters → the call's arguments, locals → fresh names; statements keep their input line."""

    def __init__(self, values: dict, tr: "Program"):
        super().__init__()
        self.values, self.tr = values, tr

    def leave_Name(self, original, updated):
        if self.skipped(original) or original.value not in self.values:
            return updated
        return self.values[original.value]

    def on_leave(self, original, updated):
        new = super().on_leave(original, updated)
        if isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self.tr.origins[new] = self.tr.line_of(original)
        return new


def _simple(node: cst.BaseExpression) -> bool:
    """A value that reads the same wherever it is evaluated in the body (no effects, no rebinding)."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Name)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    if isinstance(node, cst.Attribute):
        return isinstance(node.value, (cst.Name, cst.Attribute)) and _simple(node.value)
    return False


def _constant(node: cst.BaseExpression) -> Optional[bool]:
    """The truth of a test that is constant (after the arguments are in), else None."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return node.value == "True"
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.value) != 0
    if isinstance(node, cst.SimpleString):
        return bool(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = _constant(node.expression)
        return None if inner is None else not inner
    if (isinstance(node, cst.Comparison) and len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot))
            and isinstance(node.comparisons[0].comparator, cst.Name) and node.comparisons[0].comparator.value == "None"):
        left = node.left
        if isinstance(left, cst.Name) and left.value in ("True", "False", "None") or isinstance(
                left, (cst.Integer, cst.Float, cst.SimpleString)):
            is_none = isinstance(left, cst.Name) and left.value == "None"
            return is_none if isinstance(node.comparisons[0].operator, cst.Is) else not is_none
    return None


class _Decide(cst.CSTTransformer):
    """`if <constant>:` → the branch taken (its statements in place of the `if`). Every statement kept
    keeps its input line (`origins`)."""

    def __init__(self, origins: dict):
        super().__init__()
        self.origins = origins

    def on_leave(self, original, updated):
        new = super().on_leave(original, updated)
        if isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and original in self.origins:
            self.origins.setdefault(new, self.origins[original])
        return new

    def leave_If(self, original, updated):
        truth = _constant(updated.test)
        if truth is None:
            return updated
        if truth:
            return cst.FlattenSentinel(list(updated.body.body))
        if updated.orelse is None:
            return cst.RemoveFromParent()
        if isinstance(updated.orelse, cst.If):
            return updated.orelse
        return cst.FlattenSentinel(list(updated.orelse.body.body))


def _bind_return(stmts: list, target, tr: "Program", fn_name: str) -> list:
    """The final `return value` (also as the last statement of a trailing `with`) → `target = value`."""
    if not stmts:
        return stmts
    last = stmts[-1]
    if isinstance(last, cst.With) and isinstance(last.body, cst.IndentedBlock):
        inner = _bind_return(list(last.body.body), target, tr, fn_name)
        new = last.with_changes(body=last.body.with_changes(body=inner or [cst.SimpleStatementLine([cst.Pass()])]))
        tr.origins[new] = tr.line_of(last)
        return stmts[:-1] + [new]
    if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return):
        value = last.body[0].value
        if value is None or target is None:
            new = cst.SimpleStatementLine([cst.Expr(value)], leading_lines=last.leading_lines) if value else None
        else:
            new = last.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(target)], value=value)])
        if new is None:
            return stmts[:-1]
        tr.origins[new] = tr.line_of(last)
        return stmts[:-1] + [new]
    return stmts


def inline_call(tr: "Program", st, fn: cst.FunctionDef, call: cst.Call, target) -> list:
    name = fn.name.value
    ps = fn.params
    if (fn.decorators or fn.asynchronous or isinstance(ps.star_arg, cst.Param) or ps.kwonly_params
            or ps.star_kwarg or ps.posonly_params or not isinstance(fn.body, cst.IndentedBlock)):
        tr.refuse(f"helper `{name}` (decorated, with *args/**kwargs or keyword-only parameters) is not read "
                  "at its calls")
    for n in _walk_all(fn.body):
        if isinstance(n, (cst.Yield, cst.Await, cst.FunctionDef, cst.ClassDef, cst.Global, cst.Nonlocal,
                          cst.Lambda, cst.Del)):
            tr.refuse(f"helper `{name}`: `{code(n).strip().splitlines()[0]}` inside it is not read at its calls",
                      tr.line_of(n) if isinstance(n, cst.BaseStatement) else tr.line_of(fn))
    params = [p.name.value for p in ps.params]
    given: dict = {}
    for k, a in enumerate(call.args):
        if a.star:
            tr.refuse(f"`{name}(*args/**kwargs)` is not read at its calls")
        p = params[k] if a.keyword is None and k < len(params) else (a.keyword.value if a.keyword else None)
        if p not in params or p in given:
            tr.refuse(f"the arguments of `{name}(...)` do not match its parameters")
        given[p] = a.value
    for p in ps.params:
        if p.name.value not in given:
            if p.default is None:
                tr.refuse(f"`{name}(...)` is called without `{p.name.value}`")
            given[p.name.value] = p.default
    local = function_locals(fn)
    rebound = (local - set(params)) | {p for p in params if p in _assigned(fn.body)}
    values: dict = {}
    prologue = []
    for p in params:
        arg = given[p]
        if p not in rebound and _read_as_written(tr, arg, list(fn.body.body), p):
            values[p] = arg  # (a list of constants the body only reads: read there as written, `[None, 784]`)
        else:
            fresh = tr.namer.fresh(p, tr.region_locals)
            values[p] = cst.Name(fresh)
            bind = cst.SimpleStatementLine([cst.Assign(targets=[cst.AssignTarget(cst.Name(fresh))], value=arg)])
            tr.origins[bind] = tr.line
            prologue.append(bind)
    for n in sorted(local - set(params) - {"_"}):
        values[n] = cst.Name(tr.namer.fresh(n, tr.region_locals))  # never a name of the caller's
        tr.inlined_names[values[n].value] = n
    # the body's own lists it fills statement by statement and keeps to itself: followed under their fresh names
    kept = list_growth.followed(cst.Module(body=list(fn.body.body)), tr.names.is_tf) & (local - set(params))
    tr.followed_locals = tr.followed_locals | {values[n].value for n in kept}
    free = names_of(fn.body) - local
    shadowed = free & tr.region_locals - tr.names.same_everywhere  # (`import tensorflow as tf` in both: the same)
    if shadowed:
        tr.refuse(f"helper `{name}` reads {', '.join(sorted(shadowed))} of the module, which the calling function "
                  "binds itself: reading it there would change what the names mean")
    stmts = list(fn.body.body)
    if stmts and isinstance(stmts[0], cst.SimpleStatementLine) and isinstance(stmts[0].body[0], cst.Expr) and \
            isinstance(stmts[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        stmts = stmts[1:]  # the docstring
    renamer = Rename(values, tr)
    body = []
    for s in stmts:
        renamed = s.visit(renamer)
        new = renamed.visit(_Decide(tr.origins))
        if isinstance(new, cst.FlattenSentinel):
            body.extend(new.nodes)
        elif not isinstance(new, cst.RemovalSentinel):
            tr.origins[new] = tr.line_of(s)
            body.append(new)
    body, prologue = _settled(tr, body, prologue, {p: given[p] for p in params if p in _assigned(fn.body)}, values)
    body = _bind_return(body, target, tr, name)
    for n in _walk_all(cst.Module(body=body)):
        if isinstance(n, cst.Return):
            tr.refuse(f"helper `{name}` returns before its end (after its constant conditions are decided): "
                      "not read at its calls", tr.line_of(fn))
    out = prologue + body
    if out:
        first = out[0].with_changes(leading_lines=[*st.leading_lines, *out[0].leading_lines])
        tr.origins[first] = tr.origins.get(out[0], tr.line)
        out[0] = first
    return out


def _settled(tr: "Program", body: list, prologue: list, assigned: dict, values: dict) -> tuple:
    """A parameter the body assigns only in a branch its constants decided away (`if debug: input_shape =
    [50, 784]` with `debug=False`) is its argument again, as for any parameter the body only reads: (body,
    prologue) with it read as written and its binding dropped."""
    bound = _assigned(cst.Module(body=body))
    settled = {}
    for p, arg in assigned.items():
        fresh = values[p].value
        if fresh in bound or not _read_as_written(tr, arg, body, fresh):
            continue
        settled[fresh] = arg
    if not settled:
        return body, prologue
    renamer = Rename(settled, tr)
    body = [s.visit(renamer) for s in body]
    prologue = [b for b in prologue if not (bound_names(b) & set(settled))]
    return body, prologue


def _read_as_written(tr: "Program", arg: cst.BaseExpression, body: list, name: str) -> bool:
    """An argument the body may read in place of its parameter `name`: a value that reads the same anywhere,
    or a list of constants the body only reads."""
    return _simple(arg) or fixed_values.literal_sequence(arg) and fixed_values.read_only_in(body, name, tr.names.is_tf)


def _assigned(body) -> set:
    return bound_names(body)


def _walk_all(node):
    yield node
    for child in children(node):
        yield from _walk_all(child)

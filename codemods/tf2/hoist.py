"""A call of a graph helper inside an expression, read as its own statement first: what Python ran.

    test_pred = tf.reduce_mean(tower(x, reuse=True))
    ea, eb = tower(a), tower(b)

The TF2 tier reads a helper of the script that builds graph (a module-level function using
TensorFlow) where it is called as a statement, `h = tower(x)`: there it can make the helper's
state once and move its values into the steps. Inside an expression it could not. Python runs the
helper call before the rest of the statement, so the statement is the same program as

    tower_out = tower(x, reuse=True)
    test_pred = tf.reduce_mean(tower_out)

provided nothing the statement runs before the call has an effect the call could see. `split`
rewrites a statement so only when every call Python completes before the last helper call is
another helper call of the statement (hoisted in the same order) or a TensorFlow call that makes
no state (a plain op: its only effect is a node of the graph). It leaves the statement as it is
when a helper call sits where Python may not run it, or runs it later (a lambda, a comprehension,
`a if c else b`, `and` / `or`), and when a walrus binds a name in it.
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from codemods.tf2.names import host_utility
from codemods.tf2.syntax import closed_under_calls, walk_nodes

_DEFERRED = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation,
             cst.NamedExpr, cst.Yield, cst.Await)


def helpers(tree: cst.Module, qualified: Callable, sites: dict) -> frozenset:
    """The module's functions bound once that use TensorFlow (to a fixed point through the helpers they
    call): the graph helpers whose calls `split` hoists."""
    defs = {st.name.value: st for st in tree.body if isinstance(st, cst.FunctionDef)}
    defs = {name: st for name, st in defs.items() if len(sites.get(name, ())) <= 1}
    return closed_under_calls(defs, lambda body, found: _uses_tf(body, qualified, found))


def _uses_tf(body, qualified: Callable, found: set) -> bool:
    """`body` computes graph values: it names TensorFlow other than its host utilities and dtypes (a helper
    reading files through `tf.gfile`, or returning `tf.float32`, is called where it is), or calls a helper
    that does."""
    host_parts: set = set()
    for n in walk_nodes(body):
        if isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in host_parts:
            q = qualified(n)
            if q is not None and q.split(".")[0] == "tensorflow":
                if not host_utility(q):
                    return True
                host_parts.update(id(part) for part in walk_nodes(n))
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in found:
            return True
    return False


class _Calls(cst.CSTVisitor):
    """The calls of an expression in the order Python completes them (post-order), and whether any
    sits under a construct that runs it later or not at all."""

    def __init__(self):
        self.order: list = []
        self.deferred: set = set()
        self._depth = 0

    def on_visit(self, node):
        if isinstance(node, _DEFERRED):
            self._depth += 1
        return super().on_visit(node)

    def on_leave(self, node):
        if isinstance(node, _DEFERRED):
            self._depth -= 1
        if isinstance(node, cst.Call):
            self.order.append(node)
            if self._depth:
                self.deferred.add(node)
        super().on_leave(node)


def _value(small) -> Optional[cst.BaseExpression]:
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.Expr)):
        return small.value
    if isinstance(small, cst.Return):
        return small.value
    return None


def split(st, graph_helpers: frozenset, qualified: Callable, creators: frozenset,
          fresh: Callable[[str], str]) -> Optional[list]:
    """[the hoisted helper calls as `name = call` statements, then `st` reading those names], or None
    when `st` has no helper call inside an expression, or hoisting it could change what runs first."""
    if not graph_helpers or not isinstance(st, cst.SimpleStatementLine) or len(st.body) != 1:
        return None
    small = st.body[0]
    value = _value(small)
    if value is None or not any(type(n) is cst.Name and n.value in graph_helpers for n in walk_nodes(value)):
        return None  # (most statements: no helper named, no visit to order the calls)
    calls = _Calls()
    value.visit(calls)
    hoisted = [c for c in calls.order if isinstance(c.func, cst.Name) and c.func.value in graph_helpers]
    if not hoisted or (len(hoisted) == 1 and hoisted[0] is value and not isinstance(small, cst.AugAssign)):
        return None  # a statement-level call already
    if any(c in calls.deferred for c in hoisted) or any(isinstance(n, cst.NamedExpr) for n in walk_nodes(value)):
        return None
    last = max(calls.order.index(c) for c in hoisted)
    for c in calls.order[:last]:
        if c in hoisted:
            continue
        q = qualified(c.func)
        if q is None or q.split(".")[0] != "tensorflow" or q in creators:
            return None  # a call with effects the helper could see (or made state before it): keep the order
    out, names = [], {}
    for c in hoisted:
        name = fresh(f"{c.func.value}_out")
        names[c] = cst.Name(name)
        out.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], _replaced(c, names))]))
    new_value = _replaced(value, names)
    out.append(st.with_changes(body=[small.with_changes(value=new_value)], leading_lines=()))
    out[0] = out[0].with_changes(leading_lines=st.leading_lines)
    return out


def _replaced(node, names: dict):
    """`node` with each hoisted call under it (not itself) replaced by its name."""

    class Replace(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            if original in names and original is not node:
                return names[original]
            return updated

    return node.visit(Replace())

"""The static shape of what a kept helper of the script returns, as TF 1.x knew it at the call.

A helper that only computes values is kept and called in the steps (`helpers`). TF 1.x knew the static
shape of what each call returned, and a layer or a variable made from it after the call needs it
(`tf.layers.dense(lrelu(h), 1)`). When the helper's body is assignments of names and one `return`, of
plain TensorFlow ops and such helpers, it is read once more with the call's arguments for that shape,
and what the reading did is forgotten (`Program.trial`): the helper stays as written, and its TF 2 form
is read once, later. A number given to it is a scalar (`leak * t` has t's shape).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, ops
from codemods.tf2 import shapes as shp
from codemods.tf2._base import Refuse
from codemods.tf2.constructs import CALLS
from codemods.tf2.expressions import Evaluator
from codemods.tf2.model import AV, Func, Input, Number, Tensor
from codemods.tf2.syntax import function_locals, walk_nodes

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite
    from codemods.tf2.program import Program


def returned(tr: "Program", site: "CallSite", fn: cst.FunctionDef, shaping: set, pure: set) -> AV:
    """What a kept helper's call gives: one tensor of the static shape TF 1.x gave it, when its body is
    assignments of names and one `return`, of plain TensorFlow ops and such helpers only (`lrelu(h)`
    has h's shape: a layer after it is built where TF 1.x built it), read with this call's arguments
    and then forgotten (`Program.trial`: the helper is kept, and its TF 2 form read once, later);
    else one tensor, or a tuple or list of them."""
    unknown = Tensor(single=False)
    body = [st for st in fn.body.body if not emit.is_docstring(st)]
    if fn.name.value in shaping or not body or not _plain_ops(tr, fn, set()):
        return unknown
    steps = [st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None for st in body]
    if not isinstance(steps[-1], cst.Return) or steps[-1].value is None or not all(
            isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                     cst.Name)
            for small in steps[:-1]):
        return unknown
    trial, kept = tr.trial(), set(pure)
    shaping.add(fn.name.value)
    try:
        env = _call_env(tr, site, fn)  # its defaults read here too, and forgotten with the rest
        if env is None:
            return unknown
        for small in steps[:-1]:
            env[small.targets[0].target.value] = Evaluator(tr, env).evaluate(small.value)[0]
        av = Evaluator(tr, env).evaluate(steps[-1].value)[0]
    except Refuse:
        return unknown
    finally:
        trial.restore()
        pure.clear()
        pure.update(kept)
        shaping.discard(fn.name.value)
    if isinstance(av, Tensor) and av.single or isinstance(av, Input):
        return Tensor(shp.of(av))
    return unknown


def _plain_ops(tr: "Program", fn: cst.FunctionDef, seen: set) -> bool:
    """Every call in `fn` is a plain TensorFlow op (no construct of state, session or collections), a
    host utility, a builtin of numbers, a static shape's method, or such a helper of the script."""
    seen = seen | {fn.name.value}
    for n in walk_nodes(fn.body):
        if type(n) is not cst.Call:
            continue
        q = tr.names.qualified(n.func)
        if q is not None:
            if q in CALLS or ops.route(q) not in (ops.Route.SPEC, ops.Route.HOST):
                return False
        elif isinstance(n.func, cst.Attribute):
            if n.func.attr.value not in ("get_shape", "as_list"):
                return False
        elif isinstance(n.func, cst.Name) and n.func.value in ("int", "float", "len", "abs", "min", "max"):
            continue
        else:
            inner = tr.env.get(n.func.value) if isinstance(n.func, cst.Name) else None
            if not isinstance(inner, Func) or inner.node.name.value in seen or not _plain_ops(tr, inner.node, seen):
                return False
    return True


def _call_env(tr: "Program", site: "CallSite", fn: cst.FunctionDef) -> Optional[dict]:
    """The environment `fn`'s body reads at this call: the program's, its parameters bound to what the call
    gives (or their defaults); None for `*args`, `**kwargs` or arguments that do not bind plainly."""
    params = fn.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg is not None or \
            params.posonly_params or params.kwonly_params:
        return None
    env = dict(tr.env)
    for local in function_locals(fn):
        env.pop(local, None)
    names = [p.name.value for p in params.params]
    given: dict = {}
    for i, arg in enumerate(site.node.args):
        if arg.star or (arg.keyword is None and i >= len(names)):
            return None
        key = arg.keyword.value if arg.keyword is not None else names[i]
        if key not in names or key in given:
            return None
        given[key] = _number(tr, arg.value) or site.ev.value_of(arg.value)
    for p in params.params:
        if p.name.value in given:
            env[p.name.value] = given[p.name.value]
        elif p.default is not None:
            env[p.name.value] = _number(tr, p.default) or Evaluator(tr, env).evaluate(p.default)[0]
        else:
            return None
    return env


def _number(tr: "Program", node: cst.BaseExpression) -> Optional[Number]:
    """A number written as such (`0.2`, `-1`, a name bound once to an int), else None."""
    inner = node.expression if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        else node
    if isinstance(inner, (cst.Integer, cst.Float)) or isinstance(inner, cst.Name) and inner.value in tr.folded:
        return Number()
    return None


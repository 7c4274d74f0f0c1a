"""Assign ops run by `sess.run`: what a run of one gives, what it may be fetched with, and assignments
over a list of variables made in one comprehension.

TF 1.x's run of `v.assign(...)` (or `tf.assign`, `_add`, `_sub`) gave the variable's value after the
assignment: where the run keeps its result, the step returns the variable after the op (`value`;
`GraphOp.info["gives"]`, `session._keep_op_values`). Fetched with a value that reads the variable other
than through the op's own inputs, TF 1.x ordered neither first: refused (`refuse_unordered`).

WGAN's weight clipping, a clipping recipe:

    clip_D = [p.assign(tf.clip_by_value(p, -0.01, 0.01)) for p in d_vars]
    ...
    sess.run(clip_D)                 # after each critic step

TF 1.x built one assign op per variable, and the run applied them all (each reads and writes its own
variable only, so their order does not matter) and gave their new values. The comprehension is the
op's statement in the step that runs it, as `v.assign(...)` is for one variable (`constructs._assign`):

    @tf.function
    def train_step_2():
        [p.assign(tf.clip_by_value(p, -0.01, 0.01)) for p in d_vars]

Each assignment may read its own variable only (besides TensorFlow's functions and host numbers): one
that reads another variable or a graph value (`p.assign(p / tf.global_norm(d_vars))`) is refused, as
TF 1.x did not order the assignments and that read. The one exception is the pair's other variable of
a comprehension over `zip`, a target network's copy:

    update_target = [t.assign(tau * m + (1 - tau) * t) for t, m in zip(target_vars, main_vars)]

where each list holds variables only and no assignment writes a variable another one reads
(`_check_sources`): every order of the assignments gives the same values. A swap (`zip([a, b], [b, a])`)
is refused. The items must come from a list that holds variables only (`tf.trainable_variables()`, a list
or a dict's values of the program's variables, a selection of them): an item of anything else is refused
where it is assigned. `tf.assign(p, v)` and its `_add` / `_sub` forms are the same method in TF 2. A run
that keeps the result gets the variables after the assignments (`GraphOp.info["gives"]`, `value`);
fetched with anything else, the run is refused (`refuse_unordered`): which of its variables another fetch
reads is not followed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from codemods.tf2 import emit, item_uses
from codemods.tf2.interfaces import FetchKind
from codemods.tf2.model import (AV, HOST, Element, GraphOp, Instance, Op, OpKind, Seq, StateKind, StateRef,
                                holds_tf)
from codemods.tf2.syntax import names_of, walk_nodes

if TYPE_CHECKING:
    from codemods.tf2.call_site import Evaluation
    from codemods.tf2.program import Program

METHODS = ("assign", "assign_add", "assign_sub")
FUNCTIONS = {f"tensorflow.{m}": m for m in METHODS}


def only_variables(av: AV) -> bool:
    """`av` is a list of the program's variables, or a selection of one (`[v for v in tvars if ...]`)."""
    if isinstance(av, Element):
        return only_variables(av.of)
    return isinstance(av, Seq) and bool(av.items) and all(
        isinstance(i, StateRef) and i.state.kind == StateKind.VARIABLE for i in av.items)


def _item(ev: "Evaluation", node: cst.BaseExpression) -> bool:
    """`node` is the name of an enclosing comprehension's item (what it ranges over is checked when the
    comprehension is left: libcst visits the element before the iterable)."""
    return isinstance(node, cst.Name) and ev.loop_iter(node.value) is not None


def as_method(ev: "Evaluation", original: cst.Call, updated: cst.Call, qname: Optional[str]) -> Optional[cst.Call]:
    """`p.assign(value)` for an assignment of a comprehension's item over variables (`p.assign(...)`,
    `tf.assign(p, value)`), else None."""
    func = original.func
    if qname is None and isinstance(func, cst.Attribute) and func.attr.value in METHODS and _item(ev, func.value):
        if len(updated.args) == 1 and updated.args[0].keyword is None and updated.args[0].star == "":
            return updated
        return None
    if qname in FUNCTIONS and len(updated.args) == 2 and all(a.keyword is None and a.star == "" for a in updated.args) \
            and _item(ev, original.args[0].value):
        method = cst.Attribute(original.args[0].value, cst.Name(FUNCTIONS[qname]))
        return cst.Call(method, [cst.Arg(updated.args[1].value)])
    return None


def comprehension_op(ev: "Evaluation", original, updated, assigns: set) -> Optional[Op]:
    """The op of `[p.assign(...) for p in variables]` bound to one name, when its element is an assignment
    of its item (`assigns`: the ids of such calls); refused if bound otherwise; else None."""
    if not assigns or not any(isinstance(n, cst.Call) and id(n) in assigns for n in walk_nodes(original)):
        return None
    lists = _ranged(ev, original.for_in)
    assigned = updated.elt.func.value.value if isinstance(updated.elt, cst.Call) else None
    if not (isinstance(original, cst.ListComp) and id(original.elt) in assigns) or assigned not in lists or \
            not only_variables(ev.value_of_original(lists[assigned])):
        ev.tr.refuse(f"`{ev.tr.code(original)}` assigns items of a list not known to hold only variables, or "
                     "assigns them inside a larger element: not converted")
    if original is not ev.top or ev.target is None or original.for_in.inner_for_in is not None:
        ev.tr.refuse("assign ops made in a comprehension other than one bound to a name of its own "
                     "(`clip = [p.assign(...) for p in variables]`) are not converted")
    _check_sources(ev, original, lists, assigned)
    targets = set(lists)
    others = [n for n in sorted(names_of(original.elt) - targets)
              if holds_tf(ev.env.get(n, HOST)) or isinstance(ev.env.get(n), Instance)]
    if others:  # (a TensorFlow module or function, a host number, are not graph reads)
        ev.tr.refuse(f"`{ev.tr.code(original)}`: each assignment reads `{others[0]}` besides its own variable; TF 1.x "
                     "does not order the assignments and that read, the TF 2 step would run them one after another")
    body = [cst.SimpleStatementLine([cst.Expr(updated)])]
    return Op(GraphOp(OpKind.ASSIGN, info={"body": body, "gives": True, "items": True}))


def _ranged(ev: "Evaluation", for_in: cst.CompFor) -> dict:
    """name → the list it ranges over: `for p in vs`, or each name of `for t, m in zip(ts, ms)`."""
    if isinstance(for_in.target, cst.Name):
        return {for_in.target.value: for_in.iter}
    return item_uses.zip_targets(for_in, ev.env) or {}


def _check_sources(ev: "Evaluation", original: cst.ListComp, lists: dict, assigned: str) -> None:
    """Each assignment may read, besides its own variable, the items of another list of variables that
    none of the assignments writes (a target network's copy, `[t.assign(m) for t, m in zip(ts, ms)]`):
    then TF 1.x's unordered assignments and the step's ordered ones read the same values."""
    written = {id(i.state) for i in _items(ev.value_of_original(lists[assigned]))}
    for name in sorted(set(lists) & names_of(original.elt) - {assigned}):
        source = ev.value_of_original(lists[name])
        if not only_variables(source):
            ev.tr.refuse(f"`{ev.tr.code(original)}`: `{name}` ranges over a list not known to hold only variables: "
                         "not converted")
        if written & {id(i.state) for i in _items(source)}:
            ev.tr.refuse(f"`{ev.tr.code(original)}`: `{name}` ranges over variables the assignments also write; TF 1.x "
                         "does not order the assignments, the TF 2 step would run them one after another")


def _items(av: AV) -> list:
    return _items(av.of) if isinstance(av, Element) else list(av.items)


def value(statements: list) -> cst.BaseExpression:
    """What the run of an assign op gave, from its statement as the step writes it: the variable of
    `v.assign(...)` (`shrink.v` for a method's `self.v`), or the list `[p for p in variables]` of
    `[p.assign(...) for p in variables]`, read after the assignments."""
    last = statements[-1]
    node = last.body[0].value if isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Expr) \
        else None
    if isinstance(node, cst.ListComp) and isinstance(node.elt, cst.Call) and isinstance(node.elt.func, cst.Attribute):
        return node.with_changes(elt=node.elt.func.value)
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        raise AssertionError(f"an assign op's statement is not its call: {emit.code(last)}")
    return node.func.value


def refuse_unordered(tr: "Program", leaves: list, comps: list, statements: Callable, sliced: Callable) -> None:
    """Refused: an assign op fetched with a value that reads its variable other than through the op's own
    inputs (`sess.run([W.assign(W * 0.5), loss])`, `loss` reading `W`; `W` itself fetched is not such a
    read: TF 1.x's ref variable, read after the op, see `session.translate`). TF 1.x orders neither first,
    so what the value read depends on the scheduler, as for two update ops in one run. Assignments over a
    list of variables are fetched alone. `statements(comp)` is a comp's code in the step, `sliced(names)`
    the comps those names need."""
    for leaf in leaves:
        comp = next((c for c in reversed(comps) if leaf.name in c.defs), None) \
            if leaf.kind == FetchKind.TRAIN else None
        if comp is None or comp.train:
            continue
        assigned = value(statements(comp))
        if isinstance(assigned, cst.ListComp) and len(leaves) > 1:
            tr.refuse(f"sess.run of `{leaf.name}`, assign ops over a list of variables, with other fetches: TF 1.x "
                      "does not order the assignments and the other fetches' reads of those variables, and which "
                      "variables the list holds is not followed here")
        variable = emit.code(assigned)
        inputs = {id(c) for c in sliced({leaf.name})}
        others = [s for c in comps if id(c) not in inputs for s in statements(c)]
        others += [l.node for l in leaves if l.kind == FetchKind.VALUE and emit.code(l.node) != variable]
        if any(isinstance(n, (cst.Name, cst.Attribute)) and emit.code(n) == variable
               for node in others for n in walk_nodes(node)):
            tr.refuse(f"sess.run of the assign op `{leaf.name}` with a value that reads `{variable}` apart from the "
                      "op's own inputs: TF 1.x does not order the read and the assignment, so what the value read "
                      "depends on the scheduler")

"""Assignments read into the model: state in place, a value into the steps, host code kept.

`x = <expression>` is evaluated (`expressions.Evaluator`) and goes where its kind says
(`place`): a placeholder leaves nothing in place (an argument of the steps), state is created
there (its TF 2 statements, made while the expression was read), a graph value becomes a value
statement (`Comp`) recomputed in each step that needs it, an update op (`minimize`) the
statements of its update; what is plain Python stays. Before that, an assignment may be a
`sess.run(...)` (`session`), a feed dict (`session`, `runtime_feeds`), a helper or a method read
at its call (`helpers`, `classes`, `inline`), or an attribute of an object of the script's
classes (`classes`). `a, b = x, y` of graph values is read as `a = x` then `b = y`.
`AssignStatements` is a base of `interpret.Translator`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, feed_dicts, runtime_feeds, session, static_shapes
from codemods.tf2 import shapes as shp
from codemods.tf2.emit import code
from codemods.tf2.expressions import Evaluator
from codemods.tf2.inline import inline_call
from codemods.tf2.model import (AV, HOST, Element, Input, Instance, Mapping, Op, Other, OtherKind, Seq, SeqKind,
                                Session, StateRef, Tensor, holds_tf)
from codemods.tf2.syntax import comments_of, names_of, new_literal, root_name, target_names

if TYPE_CHECKING:
    from codemods.tf2.program import Program


class AssignStatements:
    """`x = ...`, `x += ...` and binding names to what they denote, for `interpret.Translator`."""

    def assign(self, st: cst.SimpleStatementLine, small: cst.Assign, out: list) -> None:
        if len(small.targets) != 1:
            ev = Evaluator(self, self.env)
            av, value = ev.evaluate(small.value)
            if av.graph or self.pending:
                self.refuse("a chained assignment of graph values or state is not converted")
            for t in small.targets:
                self.bind(t.target, HOST)
            out.append(st.with_changes(body=[small.with_changes(value=value)]))
            return
        target = small.targets[0].target
        pairs = _parallel_names(target, small.value)
        if pairs is not None and (names_of(small.value) & self.graph_names() or any(
                isinstance(self.env.get(root_name(v)), Instance) for _, v in pairs)):
            # `a, b = x, y` of graph values (or of a model's attributes) is `a = x` then `b = y`: each its own
            # statement, so a step fetching `a` does not compute `y`, and `b = model.train_op` names the op
            for k, (t, v) in enumerate(pairs):
                part = cst.SimpleStatementLine(
                    body=[cst.Assign(targets=[cst.AssignTarget(t)], value=v)],
                    leading_lines=st.leading_lines if k == 0 else ())
                self.origins[part] = self.line
                self.simple(part, out)
            return
        extended = runtime_feeds.extension(self, st, small)
        if extended is not None:
            out.extend(extended)
            return
        if isinstance(target, cst.Name) and isinstance(small.value, cst.Dict):
            kept = runtime_feeds.bind(self, st, target, small.value)
            if kept is not None:
                out.extend(kept)
                return
            items = feed_dicts.feed_dict_binding(self, target.value, small.value)
            if items is None and feed_dicts.is_feed_dict(self, small.value):
                out.extend(runtime_feeds.bind(self, st, target, small.value, kept=True))
                return
            if items is not None:
                self.env[target.value] = Other(OtherKind.FEED, {"items": items, "uses": 0})
                self.feeds.add(target.value)
                self.note(f"feed dict `{target.value}` → the arguments of the step calls it feeds")
                return
        if session.is_run(self, small.value):
            out.extend(session.assign_run(self, st, small))
            return
        if self.inlined_call(st, small.value, target, out):
            return
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and \
                isinstance(self.env.get(target.value.value), Instance):
            self.classes.assign(st, small, target, self.env[target.value.value], out)
            return
        if isinstance(target, (cst.Tuple, cst.List)) and any(
                isinstance(e.value, cst.Attribute) and isinstance(e.value.value, cst.Name)
                and isinstance(self.env.get(e.value.value.value), Instance) for e in target.elements):
            self.classes.assign_tuple(st, small, target, out)
            return
        name = target.value if isinstance(target, cst.Name) else None
        ev = Evaluator(self, self.env, target=name)
        ev.target_node = target
        av, value = ev.evaluate(small.value)
        if static_shapes.is_static_shape(av) and not self.pending and \
                static_shapes.bind(self, st, target, small.value, av, out):
            return  # `dims = h.get_shape().as_list()`: what TF 1.x computed while it built the graph
        if ev.zip_idiom is not None:
            grads, loss, variables = ev.zip_idiom
            value = emit.expr("tape.gradient({loss}, {v})", loss=loss, v=variables)
            small = small.with_changes(targets=[cst.AssignTarget(cst.Name(grads))])
            self.env[target_names(target)[1]] = Seq([], SeqKind.VARIABLES)  # the variables, in TF 1.x's order
            target = cst.Name(grads)
            av = Tensor(single=False)
        self.place(st, small.with_changes(value=value), target, av, ev, out)

    def inlined_call(self, st, value: cst.BaseExpression, target, out: list) -> bool:
        """A call of a module helper or a model method that makes state: its body read in place (into
        `out`, binding `target` if given); False when `value` is no such call."""
        func = self.functions.inlined(value)
        if func is not None:
            self.block(self.functions.inline(st, func, value, target), out, region=False)
            return True
        method = self.classes.inlined(value)
        if method is not None:
            self.block(inline_call(self, st, *method, target), out, region=False)
            return True
        return False

    def flush_promoted(self, out: list) -> None:
        """The `self.<local> = <local>` a value statement made in a method just needed (`classes.promote`): in the
        method, after the statement, before anything the method does next (the method may end here)."""
        out.extend(self.pending)
        self.pending = []

    def place(self, st, small, target, av: AV, ev: Evaluator, out: list) -> None:
        """Put an evaluated assignment where its kind says: state in place, a value in the steps."""
        pending, self.pending = self.pending, []
        if pending:
            pending[0] = pending[0].with_changes(leading_lines=[*st.leading_lines, *pending[0].leading_lines])
            st = st.with_changes(leading_lines=[])
        names = target_names(target)
        if isinstance(av, Input) and [av.placeholder.name] == names:
            out.extend(pending)
            self.env[names[0]] = av
            if st.leading_lines and any(line.comment is not None for line in st.leading_lines):
                self.carry = [*self.carry, *st.leading_lines]
            return
        if ev.train is not None:
            out.extend(pending)
            comp = self.add_comp(ev.train.body, set(names), ev.uses, grads=list(ev.grads), train=True,
                                 returns=ev.train.returns, gradient_calls=ev.gradient_calls,
                                 watch_inputs=ev.watch_inputs,
                                 deps=list(self.control) + ev.train.deps)
            self.flush_promoted(out)
            comp.body[0] = comp.body[0].with_changes(leading_lines=comments_of(st.leading_lines))
            for n in names:
                self.env[n] = Op(ev.train.op)
            ev.train.op.name = names[0] if len(names) == 1 else None
            if len(names) > 1:  # which of them is the op is not followed: a sess.run of it says so
                ev.train.op.info["bound_with"] = code(target)
            return
        if ev.gradient_list and len(names) == 1:
            self.gradient_lists.add(names[0])
        created = isinstance(av, StateRef) and av.state.name in names and len(names) == 1 and pending
        if created:
            out.extend(pending)
            self.env[names[0]] = av
            return
        out.extend(pending)
        if isinstance(av, Op) and (not av.op.info.get("body") or av.op.name is not None):
            # an op of its own statement elsewhere (an update, or an assign op a statement made and named):
            # this name is another name of it, its statement is not made twice
            for n in names:
                self.env[n] = av
            if isinstance(target, cst.Name):
                av.op.name = av.op.name or target.value
            return
        if is_graph_statement(av, ev, self):
            body = [st.with_changes(body=[small], leading_lines=comments_of(st.leading_lines))]
            if isinstance(av, Op):
                body = av.op.info["body"]
                av.op.name = names[0] if len(names) == 1 else None
            elif self.step_prelude:  # set first in each step (an rnn cell's fed keep probability)
                body, self.step_prelude = [*self.step_prelude, *body], []
            self.add_comp(body, set(names), ev.uses, grads=list(ev.grads), gradient_calls=ev.gradient_calls,
                          watch_inputs=ev.watch_inputs,
                          deps=list(self.control))
            self.flush_promoted(out)
            # not known as one tensor (an item or a selection of a list the model follows): a structure, as far as
            # a fetch of it is concerned
            self.bind(target, av if (av.graph or isinstance(av, Op)) else Tensor(single=False, chosen=True))
            return
        root = root_name(target)
        dropped = self.env.get(root) if root is not None and not isinstance(target, cst.Name) else None
        if isinstance(dropped, Other) and dropped.info.get("drop") and not av.graph:
            self.note(f"`{code(target)} = ...`: sets {dropped.info.get('what', dropped.kind.value)}, which has no TF 2 "
                      "counterpart; removed")  # `session_conf.gpu_options.allow_growth = True`
            return
        if isinstance(av, Session) or (isinstance(av, Other) and av.info.get("drop")):
            self.bind(target, av)
            what = "the Session" if isinstance(av, Session) else av.info.get("what", av.kind.value)
            self.note(f"`{code(small.value)}`: {what} has no TF 2 counterpart; removed")
            return
        out.append(st.with_changes(body=[small]))
        self.bind(target, av)
        if isinstance(target, cst.Name) and not holds_tf(av) and new_literal(small.value, self.env):
            self.fresh[target.value] = (out, out[-1].body)  # its body: blank lines moved onto it keep it
        if isinstance(target, cst.Name) and av is HOST and len(self.bindings_of(target.value)) == 1 and \
                target.value not in self.parameter_names():
            number = shp.fold(small.value)  # bound once in the file: it holds that number wherever it is read
            if number is not None:
                self.folded[target.value] = number

    def aug_assign(self, st, small: cst.AugAssign, out: list) -> None:
        ev = Evaluator(self, self.env)
        av, value = ev.evaluate(small.value)
        target_av = self.env.get(small.target.value) if isinstance(small.target, cst.Name) else None
        if isinstance(small.target, cst.Name) and self.grown(small.target.value, target_av, av, out):
            out.append(st.with_changes(body=[small.with_changes(value=value)]))  # `params += [W, b]`
            return
        if av.graph or (target_av is not None and target_av.graph):
            if not isinstance(small.target, cst.Name) or self.pending:
                self.refuse("an augmented assignment of a graph value to something other than a name")
            name = small.target.value
            self.add_comp([st.with_changes(body=[small.with_changes(value=value)])], {name}, ev.uses | {name},
                          grads=list(ev.grads), gradient_calls=ev.gradient_calls, watch_inputs=ev.watch_inputs)
            self.env[name] = Tensor()
            return
        out.extend(self.pending)
        self.pending = []
        out.append(st.with_changes(body=[small.with_changes(value=value)]))
        self.bind(small.target, HOST)

    def grown(self, name: str, list_av, items_av, out: list) -> bool:
        """Whether `name`, a list the file fills statement by statement (`list_growth`), now holds its
        items and these: then the model follows it item by item, and the statement stays as written.
        Only state and rnn cells: they exist where the statement runs, in TF 2 too."""
        if name not in self.followed_lists() or not (isinstance(list_av, Seq) and list_av.kind == SeqKind.LIST):
            return False
        if not (isinstance(items_av, Seq) and all(isinstance(i, StateRef) or isinstance(i, Other) and i.kind ==
                                                  OtherKind.CELL for i in items_av.items)):
            return False
        out.extend(self.pending)
        self.pending = []
        self.env[name] = Seq([*list_av.items, *items_av.items], SeqKind.LIST)
        return True

    def bind(self, target: cst.BaseExpression, av: AV) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = av
            if isinstance(av, Session):
                self.sessions.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = av.items if isinstance(av, Seq) and len(av.items) == len(target.elements) else None
            # a part of one tensor is one tensor; a part of a structure may be a list (`grads, _ = clip_by_global_norm`)
            part = Tensor(single=isinstance(av, Tensor) and av.single) if av.graph \
                else av if isinstance(av, Element) else HOST
            for i, el in enumerate(target.elements):
                if isinstance(el, cst.StarredElement):
                    self.bind(el.value, part)
                    continue
                sub = items[i] if items is not None else part
                self.bind(el.value, sub)
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            base = target.value
            base_av = self.env.get(base.value) if isinstance(base, cst.Name) else None
            if av.graph or isinstance(av, (StateRef, Op)) or (base_av is not None and (
                    base_av.graph or isinstance(base_av, (Seq, Mapping)) and not isinstance(av, type(HOST)))):
                if isinstance(base_av, Other) and base_av.info.get("drop"):
                    return
                self.refuse(f"`{code(target)}` stores a graph value or state in an object: not converted")


def _parallel_names(target, value) -> Optional[list]:
    """[(name, value)] of `a, b = x, y.z` when splitting it changes nothing: plain names on the left,
    names or attributes (no calls) on the right, and no name of the left read on the right."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return None
    if len(target.elements) != len(value.elements) or len(target.elements) < 2:
        return None
    lefts = [e.value for e in target.elements]
    rights = [e.value for e in value.elements]
    if any(isinstance(e, cst.StarredElement) for e in [*target.elements, *value.elements]):
        return None
    if not all(isinstance(t, cst.Name) for t in lefts) or len({t.value for t in lefts}) != len(lefts):
        return None
    if not all(isinstance(v, (cst.Name, cst.Attribute)) and root_name(v) is not None for v in rights):
        return None
    if {t.value for t in lefts} & {root_name(v) for v in rights}:
        return None
    return list(zip(lefts, rights))


def is_graph_statement(av: AV, ev: Evaluator, tr: "Program") -> bool:
    """A value statement: it computes a graph value (not just names variables in a list)."""
    if isinstance(av, Op):
        return True
    if _only_state(av):
        return False
    return av.graph or bool(ev.uses & tr.graph_names()) or bool(ev.grads)


def _only_state(av: AV) -> bool:
    if isinstance(av, StateRef):
        return True
    if isinstance(av, (Seq, Mapping)):
        return all(_only_state(i) or i is HOST for i in av.items)
    return False

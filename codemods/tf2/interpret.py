"""Reading a TF 1.x program into the model, statement by statement, and writing its TF 2 form.

`Translator.run` walks the module the way Python runs it while TF 1.x builds the graph:
each statement's expressions are evaluated (`expressions.Evaluator`) and the statement becomes
- **state** (a `tf.Variable`, a Keras layer, an optimizer, ...): its TF 2 creation, in place;
- **an input** (`tf.placeholder`): nothing in place; an argument of the step functions;
- **a value** (`Comp`): nothing in place; recomputed in each step function that needs it;
- **host code** (plain Python, the training loop): kept, with each `sess.run(...)` turned
  into a call of the step function for that fetch set (`session`), defined just before the
  statement that first calls it.
Helpers that create state are read at their calls (`helpers`); blocks that only scope names
(`with tf.variable_scope(...)`, `with tf.Session() as sess:`) are read through. Whatever cannot
be decided exactly raises `Refuse(line, reason)`. What the translation has learnt so far, and the
services the construct readers ask of it, are `program.Program`, which `Translator` extends.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.tf2 import builds, classes, helpers, item_uses, loop_fills, runtime_feeds, session, steps
from codemods.tf2 import emit
from codemods.tf2 import shapes as shp
from codemods.tf2.emit import add_preamble, code
from codemods.tf2.expressions import Evaluator
from codemods.tf2.inline import inline_call
from codemods.tf2.model import AV, HOST, Element, Input, Instance, Mapping, Op, Other, Seq, Session, StateRef, Tensor, holds_tf
from codemods.tf2.names import ImportTable
from codemods.tf2.program import Program
from codemods.tf2.syntax import (bound_names, changed_names, is_main_guard, names_of, new_literal, root_name,
                                 target_names, walk_nodes)


class Translator(Program):
    """`Program` read from the module's statements, in the order Python runs them."""

    def __init__(self, module: cst.Module, names: ImportTable):
        super().__init__(module, names)
        self.steps: steps.Steps = steps.Steps(self)
        self.functions: helpers.Functions = helpers.Functions(self)
        self.classes: classes.Classes = classes.Classes(self)
        self.runtime_feed_names = runtime_feeds.extended_names(module)

    def evaluator(self, env: dict, target: Optional[str] = None) -> Evaluator:
        return Evaluator(self, env, target)

    # -- walking ----------------------------------------------------------------------------------
    def run(self) -> cst.Module:
        out: list = []
        self.block(list(self.module.body), out, region=True)
        out = self.classes.finish(out)
        out = self.functions.finish(out)
        if self.names.tf_alias is None and self.alias in names_of(cst.Module(body=[*out, *self.preamble])):
            # The TF 2 code written here reads `tensorflow` by this name, which the module never
            # bound (it imported only `tensorflow.examples...` or `tensorflow.contrib...` modules)
            if self.alias in self.names.bindings:
                self.refuse(f"the TF 2 code needs `tensorflow` as `{self.alias}`, a name this module binds to "
                            f"{self.names.bindings[self.alias]}", 0)
            self.imports.add(f"import:tensorflow:{self.alias}")
        out = add_preamble(out, self.preamble, self.imports, self.names)
        new = self.module.with_changes(body=out)
        runtime_feeds.check(self, new)
        used = names_of(new)
        left = used & self.feeds
        if left:
            self.refuse(f"feed dict `{sorted(left)[0]}` is used other than as a feed_dict: not converted", 0)
        left = used & self.sessions
        if left:
            self.refuse(f"the Session `{sorted(left)[0]}` is used other than to run the graph (passed on, kept): "
                        "TF 2 has no Session", 0)
        return new

    def block(self, stmts: list, out: list, region: bool) -> None:
        saved, self.carry = self.carry, []
        waiting = []
        if region:  # steps made by the enclosing region's statement go there, not into this one
            waiting, self.new_steps = self.new_steps, []
        try:
            self._block(stmts, out, region)
        finally:
            self.carry = saved
            self.new_steps = waiting + self.new_steps

    def _block(self, stmts: list, out: list, region: bool) -> None:
        for st in stmts:
            mark = len(out)
            before = self.line
            self.line = self.line_of(st)
            self.reading.append(self.line)
            if region:
                self.regions.append(self.line)
            try:
                self.statement(st, out, region)
            finally:
                self.reading.pop()
                if region:
                    self.regions.pop()
            if region and self.new_steps:
                first = out[mark] if mark < len(out) else None
                defs = self.new_steps
                self.new_steps = []
                if first is not None and first.leading_lines:  # its comments stay with it, after the defs
                    comments = [line for line in first.leading_lines if line.comment is not None]
                    out[mark] = first.with_changes(leading_lines=[*emit.blank_lines(), *comments])
                elif first is not None:
                    out[mark] = first.with_changes(leading_lines=emit.blank_lines())
                out[mark:mark] = defs
            self.carry_blank_lines(st, out, mark)
            self.line = before

    def carry_blank_lines(self, st, out: list, mark: int) -> None:
        """A statement that left its place leaves its blank lines to the next one that stays."""
        if len(out) == mark:
            blank = [line for line in getattr(st, "leading_lines", ()) if line.comment is None]
            if blank and not self.carry:
                self.carry = blank
            return
        if self.carry:
            first = out[mark]
            own = list(getattr(first, "leading_lines", ()))
            if hasattr(first, "leading_lines") and not (own and own[0].comment is None):
                out[mark] = first.with_changes(leading_lines=[*self.carry, *own])
            self.carry = []

    def statement(self, st: cst.CSTNode, out: list, region: bool) -> None:
        before = dict(self.fresh)
        self._statement(st, out, region)
        for name in names_of(st) & set(before):  # read or bound again: no longer fresh
            if self.fresh.get(name) is before[name]:
                del self.fresh[name]
        if self.step_prelude:
            self.refuse("a graph value (an rnn cell's fed argument) to be set before this statement in each step, "
                        "which is not an assignment of its values: not converted")

    def _statement(self, st: cst.CSTNode, out: list, region: bool) -> None:
        if isinstance(st, cst.SimpleStatementLine):
            self.simple(st, out)
        elif isinstance(st, cst.With):
            self.with_statement(st, out, region)
        elif isinstance(st, cst.FunctionDef):
            self.functions.define(st, out)
        elif isinstance(st, cst.ClassDef):
            self.classes.define(st, out)
        elif isinstance(st, cst.If) and is_main_guard(st):
            body: list = []
            self.block(list(st.body.body), body, region=True)
            out.append(st.with_changes(body=st.body.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])))
        else:
            self.compound(st, out)

    # -- simple statements ---------------------------------------------------------------------------
    def simple(self, st: cst.SimpleStatementLine, out: list) -> None:
        if len(st.body) > 1:
            parts = [cst.SimpleStatementLine(body=[s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                     for s in st.body]
            parts[0] = parts[0].with_changes(leading_lines=st.leading_lines)
            for p in parts:
                self.origins[p] = self.line
                self.simple(p, out)
            return
        small = st.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            out.append(st)
            return
        if isinstance(small, cst.Assign):
            self.assign(st, small, out)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.assign(st, cst.Assign(targets=[cst.AssignTarget(small.target)], value=small.value), out)
        elif isinstance(small, cst.AugAssign):
            self.aug_assign(st, small, out)
        elif isinstance(small, cst.Expr):
            self.expression_statement(st, small, out)
        elif isinstance(small, cst.Return) and small.value is not None:
            ev = Evaluator(self, self.env)
            av, value = ev.evaluate(small.value)
            if self.pending:
                self.refuse("a return value that creates state is not converted")
            self.env["__return__"] = av
            out.append(st.with_changes(body=[small.with_changes(value=value)]))
        else:
            ev = Evaluator(self, self.env)
            new = st.visit(ev)
            if ev.uses & self.graph_names() or self.pending:
                self.refuse(f"`{code(small).strip()}` acts on graph values while the graph is built")
            out.append(new)

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
        if pairs is not None and names_of(small.value) & self.graph_names():
            # `a, b = x, y` of graph values is `a = x` then `b = y`: each its own value statement, so a step
            # fetching `a` does not compute `y`
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
            items = session.feed_dict_binding(self, small.value)
            if items is not None:
                self.env[target.value] = Other("feed", {"items": items, "uses": 0})
                self.feeds.add(target.value)
                self.note(f"feed dict `{target.value}` → the arguments of the step calls it feeds")
                return
        if session.is_run(self, small.value):
            out.extend(session.assign_run(self, st, small))
            return
        func = self.functions.inlined(small.value)
        if func is not None:
            self.block(self.functions.inline(st, func, small.value, target), out, region=False)
            return
        method = self.classes.inlined(small.value)
        if method is not None:
            self.block(inline_call(self, st, *method, target), out, region=False)
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
        if ev.zip_idiom is not None:
            grads, loss, variables = ev.zip_idiom
            value = emit.expr("tape.gradient({loss}, {v})", loss=loss, v=variables)
            small = small.with_changes(targets=[cst.AssignTarget(cst.Name(grads))])
            self.env[target_names(target)[1]] = Seq([], "variables")  # the variables, in TF 1.x's order
            target = cst.Name(grads)
            av = Tensor(single=False)
        self.place(st, small.with_changes(value=value), target, av, ev, out)

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
                                 deps=list(self.control))
            comp.body[0] = comp.body[0].with_changes(leading_lines=_comments(st.leading_lines))
            for n in names:
                self.env[n] = Op(ev.train.op)
            ev.train.op.name = names[0] if len(names) == 1 else None
            return
        if ev.gradient_list and len(names) == 1:
            self.gradient_lists.add(names[0])
        created = isinstance(av, StateRef) and av.state.name in names and len(names) == 1 and pending
        if created:
            out.extend(pending)
            self.env[names[0]] = av
            return
        out.extend(pending)
        if isinstance(av, Op) and not av.op.info.get("body"):
            for n in names:
                self.env[n] = av
            if isinstance(target, cst.Name):
                av.op.name = av.op.name or target.value
            return
        if is_graph_statement(av, ev, self):
            body = [st.with_changes(body=[small], leading_lines=_comments(st.leading_lines))]
            if isinstance(av, Op):
                body = av.op.info["body"]
                av.op.name = names[0] if len(names) == 1 else None
            elif self.step_prelude:  # set first in each step (an rnn cell's fed keep probability)
                body, self.step_prelude = [*self.step_prelude, *body], []
            self.add_comp(body, set(names), ev.uses, grads=list(ev.grads), gradient_calls=ev.gradient_calls,
                          deps=list(self.control))
            self.bind(target, av if (av.graph or isinstance(av, Op)) else Tensor())
            return
        root = root_name(target)
        dropped = self.env.get(root) if root is not None and not isinstance(target, cst.Name) else None
        if isinstance(dropped, Other) and dropped.info.get("drop") and not av.graph:
            self.note(f"`{code(target)} = ...`: sets {dropped.info.get('what', dropped.kind)}, which has no TF 2 "
                      "counterpart; removed")  # `session_conf.gpu_options.allow_growth = True`
            return
        if isinstance(av, Session) or (isinstance(av, Other) and av.info.get("drop")):
            self.bind(target, av)
            what = "the Session" if isinstance(av, Session) else av.info.get("what", av.kind)
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
        if av.graph or (target_av is not None and target_av.graph):
            if not isinstance(small.target, cst.Name) or self.pending:
                self.refuse("an augmented assignment of a graph value to something other than a name")
            name = small.target.value
            self.add_comp([st.with_changes(body=[small.with_changes(value=value)])], {name}, ev.uses | {name},
                          grads=list(ev.grads), gradient_calls=ev.gradient_calls)
            self.env[name] = Tensor()
            return
        out.extend(self.pending)
        self.pending = []
        out.append(st.with_changes(body=[small.with_changes(value=value)]))
        self.bind(small.target, HOST)

    def expression_statement(self, st, small: cst.Expr, out: list) -> None:
        extended = runtime_feeds.extension(self, st, small)
        if extended is not None:
            out.extend(extended)
            return
        if session.is_run(self, small.value):
            out.extend(session.expression_run(self, st, small))
            return
        func = self.functions.inlined(small.value)
        if func is not None:
            self.block(self.functions.inline(st, func, small.value, None), out, region=False)
            return
        method = self.classes.inlined(small.value)
        if method is not None:
            self.block(inline_call(self, st, *method, None), out, region=False)
            return
        ev = Evaluator(self, self.env)
        av, value = ev.evaluate(small.value)
        pending, self.pending = self.pending, []
        out.extend(pending)
        if ev.train is not None:
            self.refuse("an update op made and dropped (not bound to a name, never run) is not converted")
        if isinstance(av, Op) and av.op.info.get("statement") is not None:
            out.append(st.with_changes(body=[small.with_changes(value=av.op.info["statement"])]))
            return
        if isinstance(av, Op) and av.op.info.get("statements") is not None:
            stmts = list(av.op.info["statements"])
            stmts[0] = stmts[0].with_changes(leading_lines=st.leading_lines)
            out.extend(stmts)
            return
        if isinstance(av, Op) or (isinstance(av, Other) and av.info.get("drop")):
            return  # registered (a summary, a collection entry) or gone with the Session
        graph = ev.uses & self.graph_names()
        described = builds.placeholder_print(self, small, graph) if graph else None
        if described is not None:
            self.note("a build-time print of a placeholder → the same text, TF 1.x's description of it")
            out.append(st.with_changes(body=[described]))
            return
        if graph and builds.is_gradient_type_print(self, small.value, graph):
            out.extend(self.steps.build_time_print(st, st.with_changes(body=[small.with_changes(value=value)]),
                                                   graph))
            return
        if av.graph or graph:
            self.refuse(f"`{code(small.value)}` runs once while the graph is built, on graph values: TF 2 has "
                        "them only inside a step function (print the fetched value instead)")
        out.append(st.with_changes(body=[small.with_changes(value=value)]))

    def bind(self, target: cst.BaseExpression, av: AV) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = av
            if isinstance(av, Session):
                self.sessions.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = av.items if isinstance(av, Seq) and len(av.items) == len(target.elements) else None
            part = Tensor() if av.graph else av if isinstance(av, Element) else HOST
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

    # -- compound statements --------------------------------------------------------------------------
    def with_statement(self, st: cst.With, out: list, region: bool) -> None:
        if len(st.items) != 1:
            if not self.mentions_tf(st):
                self.compound(st, out)
                return
            # `with a, b:` is `with a:` then `with b:` inside it (Python enters them in order)
            inner = st.with_changes(items=st.items[1:], leading_lines=[])
            outer = st.with_changes(items=[st.items[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)],
                                    body=cst.IndentedBlock(body=[inner]))
            self.origins[inner] = self.origins[outer] = self.line
            self.with_statement(outer, out, region)
            return
        item = st.items[0]
        ev = Evaluator(self, self.env)
        av, _ = ev.evaluate(item.item)
        kind = av.kind if isinstance(av, Other) else ("session" if isinstance(av, Session) else None)
        if kind is None:
            if self.pending:
                self.refuse(f"`with {code(item.item)}:` creates state: not converted")
            self.compound(st, out)
            return
        body = list(st.body.body)
        if body and st.leading_lines:
            body[0] = body[0].with_changes(leading_lines=[*st.leading_lines, *body[0].leading_lines])
        if kind == "session":
            if item.asname is not None:
                self.bind(item.asname.name, Session())
            self.note("the Session block → its statements run eagerly; sess.run(...) → step function calls")
            self.block(body, out, region)
            return
        enter = av.info.get("enter")
        frame = enter(self, item) if enter is not None else None
        if item.asname is not None and frame is not None:
            self.bind(item.asname.name, frame)
        try:
            self.block(body, out, region)
        finally:
            leave = av.info.get("leave")
            if leave is not None:
                leave(self)

    def compound(self, st: cst.CSTNode, out: list) -> None:
        """A loop, condition or try block: host code, or (with no session use) one value statement."""
        if isinstance(st, cst.ClassDef):
            if self.mentions_tf(st):
                self.refuse(f"class `{st.name.value}` builds graph code: classes are not converted yet")
            out.append(st)
            self.env[st.name.value] = HOST
            return
        if not self.runs_session(st) and self.reads_graph(st) and not runtime_feeds.extends(self, st):
            ev = Evaluator(self, self.env)
            new = st.visit(ev)
            if self.pending:
                self.refuse("state is created inside a loop or condition: not converted (TF 1.x created it "
                            "once per pass; a TF 2 step must not)")
            if any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "print"
                   and "print" not in self.env for n in walk_nodes(st)):
                self.refuse("a loop over graph values prints while the graph is built: in TF 2 it would print when "
                            "each step is traced (not converted)")
            inits = loop_fills.fold_inits(self, st, out, ev)
            grown = {n for n in changed_names(st) if n in self.env and self.env[n].graph}  # made in the steps
            defs = bound_names(st) | {n for n, _ in inits} | grown
            self.add_comp([*(init for _, init in inits), new.with_changes(leading_lines=_comments(st.leading_lines))],
                          defs, ev.uses, grads=list(ev.grads), gradient_calls=ev.gradient_calls)
            for n in defs:
                self.env[n] = Tensor()
            return
        loop = isinstance(st, (cst.For, cst.While))
        self.loop_depth += loop
        try:
            out.append(self.host_compound(st))
        finally:
            self.loop_depth -= loop

    def host_compound(self, st):
        """`st` with its headers evaluated as host code and its blocks walked."""
        if isinstance(st, (cst.For,)):
            ev = Evaluator(self, self.env)
            av, it = ev.evaluate(st.iter)
            if av.graph:
                self.refuse("a Python loop over a graph value at build time is not converted")
            rebound = set(self.env)
            items = item_uses.item_names(st.target, st.iter, ev.value_of_original, holds_tf, rebound)
            misused = item_uses.misuse(st, items, self.tf_callable, rebound) if items else None
            if misused is not None:
                self.refuse(misused[1], self.line_of(misused[0]))
            self.bind(st.target, Element(av) if holds_tf(av) else HOST)
            st = st.with_changes(iter=it)
        elif isinstance(st, (cst.If, cst.While)):
            ev = Evaluator(self, self.env)
            av, test = ev.evaluate(st.test)
            if av.graph:
                self.refuse("a Python condition on a graph value is not converted")
            st = st.with_changes(test=test)
        elif isinstance(st, cst.With):
            items = []
            for item in st.items:
                ev = Evaluator(self, self.env)
                av, new = ev.evaluate(item.item)
                if av.graph or self.pending:
                    self.refuse(f"`with {code(item.item)}:` is not converted")
                items.append(item.with_changes(item=new))
                if item.asname is not None:
                    self.bind(item.asname.name, HOST)
            st = st.with_changes(items=items)
        return self._walk_blocks(st)

    def _walk_blocks(self, st):
        changes = {}
        for field_name in ("body", "orelse", "finalbody", "handlers"):
            child = getattr(st, field_name, None)
            if child is None:
                continue
            if field_name == "handlers":
                changes["handlers"] = [self._walk_blocks(h) for h in child]
            elif isinstance(child, cst.IndentedBlock):
                new: list = []
                self.block(list(child.body), new, region=False)
                changes[field_name] = child.with_changes(body=new or [cst.SimpleStatementLine([cst.Pass()])])
            elif isinstance(child, (cst.Else, cst.Finally, cst.If)):
                changes[field_name] = self._walk_blocks(child)
        orelse = changes.get("orelse")
        if isinstance(orelse, cst.Else) and _empty(orelse.body):  # its statements all moved or vanished
            changes["orelse"] = None
        return st.with_changes(**changes)


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


def is_graph_statement(av: AV, ev: Evaluator, tr: Translator) -> bool:
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


def _empty(block) -> bool:
    return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body)
               for s in block.body)


def _comments(lines) -> list:
    return [line for line in lines if line.comment is not None]

"""Compound statements: `with` blocks, loops, conditions and `try`, read as Python runs them.

A `with` whose object TF 1.x knows (`tf.variable_scope(...)`, `tf.name_scope(...)`,
`tf.control_dependencies(...)`, `with tf.Session() as sess:`) is read through: its scope is
entered and left around its body, a Session block's statements run eagerly. A loop, condition or
`try` that computes graph values and runs no session is one value statement of the steps (with
the list or sum it fills: `loop_fills`); any other is host code, its headers evaluated and its
blocks walked (`host_compound`). `CompoundStatements` is a base of `interpret.Translator`.
"""
from __future__ import annotations

import libcst as cst

from codemods.tf2 import fixed_values, item_uses, loop_fills, runtime_feeds
from codemods.tf2.emit import code
from codemods.tf2.expressions import Evaluator
from codemods.tf2.model import (HOST, Element, Other, Seq, Session, StateKind, StateRef, Tensor, exact_names,
                                holds_tf)
from codemods.tf2.syntax import bound_names, changed_names, comments_of, names_of, walk_nodes


class CompoundStatements:
    """`with`, `for`, `while`, `if` and `try` statements, for `interpret.Translator`."""

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
        if not isinstance(av, (Other, Session)):  # a scope (any `Other`: its info says how to enter it) or the Session
            if self.pending:
                self.refuse(f"`with {code(item.item)}:` creates state: not converted")
            self.compound(st, out)
            return
        body = list(st.body.body)
        if body and st.leading_lines:  # (the block's first statement keeps its own input line)
            first = body[0].with_changes(leading_lines=[*st.leading_lines, *body[0].leading_lines])
            self.origins[first] = self.line_of(body[0])
            body[0] = first
        if isinstance(av, Session):
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
        if not self.runs_session(st) and self.reads_graph(st) and not runtime_feeds.extends(self, st) \
                and not self.over_variables(st):
            helper = self.functions.state_helper_in(st) if isinstance(st, (cst.For, cst.While)) else None
            if helper is not None:
                passes = f"`for ... in {code(st.iter)}`" if isinstance(st, cst.For) else "a `while` loop"
                self.refuse(f"helper `{helper}` creates state and is called in a loop that tf1clip does not read "
                            f"pass by pass ({passes}): TF 1.x made that state once per pass; such a loop is "
                            "converted when its passes are fixed in the file (a list of constants, `range` of "
                            f"numbers bound once; at most {fixed_values.MAX_PASSES}) and its body has no `break`, "
                            "`continue` or `return`")
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
            self.add_comp([*(init for _, init in inits), new.with_changes(leading_lines=comments_of(st.leading_lines))],
                          defs, ev.uses, grads=list(ev.grads), gradient_calls=ev.gradient_calls,
                          watch_inputs=ev.watch_inputs)
            for n in defs:
                self.env[n] = Tensor(single=False)  # what a loop made: one tensor or a list of them
            return
        loop = isinstance(st, (cst.For, cst.While))
        self.loop_depth += loop
        try:
            out.append(self.host_compound(st))
        finally:
            self.loop_depth -= loop

    def over_variables(self, st) -> bool:
        """`for v in <variables of the program>:` whose body calls no TensorFlow and reads no other graph value
        (`print(v.name)`, a parameter count): plain Python over objects TF 2 has where TF 1.x had them, read as
        host code, what it reads of each item checked (`item_uses`, in `host_compound`)."""
        if not isinstance(st, cst.For) or st.orelse is not None:
            return False
        if any(isinstance(n, cst.Call) and self.names.is_tf(n.func) for n in walk_nodes(st.body)):
            return False
        if names_of(st.body) & self.graph_names():
            return False
        ev = Evaluator(self, self.env)
        av, _ = ev.evaluate(st.iter)
        return not self.pending and isinstance(av, Seq) and bool(av.items) and all(
            isinstance(i, StateRef) and i.state.kind == StateKind.VARIABLE for i in av.items)

    def host_compound(self, st):
        """`st` with its headers evaluated as host code and its blocks walked."""
        if isinstance(st, (cst.For,)):
            ev = Evaluator(self, self.env)
            av, it = ev.evaluate(st.iter)
            if av.graph:
                self.refuse("a Python loop over a graph value at build time is not converted")
            rebound = set(self.env)
            items = item_uses.item_names(st.target, st.iter, ev.value_of_original, holds_tf, rebound)
            misused = item_uses.misuse(st, items, self.tf_callable, rebound, exact_names=exact_names(av)) \
                if items else None
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


def _empty(block) -> bool:
    return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body)
               for s in block.body)

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

from codemods.tf2 import builds, classes, flags, helpers, list_growth, runtime_feeds, session, steps
from codemods.tf2 import emit
from codemods.tf2.assign_statements import AssignStatements
from codemods.tf2.compound_statements import CompoundStatements
from codemods.tf2.emit import add_preamble, code
from codemods.tf2.expressions import Evaluator, without_tf2_spelling
from codemods.tf2.model import HOST, Op, Other, Seq, SeqKind, TFSymbol
from codemods.tf2.names import ImportTable, canonical
from codemods.tf2.program import Program, RegionBlock, Start
from codemods.tf2.syntax import is_main_guard, names_of


class Translator(AssignStatements, CompoundStatements, Program):
    """`Program` read from the module's statements, in the order Python runs them: assignments
    (`assign_statements`) and compound statements (`compound_statements`) in their own modules."""

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
        out = flags.parse_before_first_read(self, out)
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
            self.region_blocks.append(RegionBlock(out))
        try:
            self._block(stmts, out, region)
        finally:
            self.carry = saved
            self.new_steps = waiting + self.new_steps
            if region:
                self.region_blocks.pop()

    def _block(self, stmts: list, out: list, region: bool) -> None:
        block = self.region_blocks[-1] if region else None
        for st in stmts:
            before = self.line
            self.line = self.line_of(st)
            start = Start(self.line, len(out), len(self.comps))
            self.reading.append(self.line)
            if region:
                block.starts.append(start)
                self.regions.append(self.line)
            try:
                self.statement(st, out, region)
            finally:
                self.reading.pop()
                if region:
                    self.regions.pop()
            if region:
                for earlier in block.starts:  # steps traced before this statement or an earlier one (`RegionBlock`)
                    defs, earlier.steps = earlier.steps, []
                    self.put_before(out, block, earlier.index, defs)
            mark = start.index
            if region and self.new_steps:
                defs, self.new_steps = self.new_steps, []
                self.put_before(out, block, mark, defs)
                if block.placed is None:
                    block.placed = len(block.starts) - 1
            self.carry_blank_lines(st, out, mark)
            self.line = before

    def put_before(self, out: list, block: RegionBlock, index: int, defs: list) -> None:
        """Step definitions `defs` put before the statement at `out[index]`, apart from it by blank lines;
        its comments stay with it, after the definitions."""
        if not defs:
            return
        first = out[index] if index < len(out) else None
        if first is not None and first.leading_lines:
            comments = [line for line in first.leading_lines if line.comment is not None]
            self.relead(out, index, [*emit.blank_lines(), *comments])
        elif first is not None:
            self.relead(out, index, emit.blank_lines())
        block.insert(index, defs)

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
                self.relead(out, mark, [*self.carry, *own])
            self.carry = []

    def relead(self, out: list, index: int, lines: list) -> None:
        """New leading lines for the statement kept at `out[index]`. A helper's or a class's definition
        stays the one recorded as it (what `finish` rewrites, keeps or removes is that statement)."""
        old = out[index]
        out[index] = new = old.with_changes(leading_lines=lines)
        name = old.name.value if isinstance(old, (cst.FunctionDef, cst.ClassDef)) else None
        for defs in (self.functions.defs, self.classes.defs):
            if name is not None and defs.get(name) is old:
                defs[name] = new

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
        assigned = self.names.symbol_assigned(small)
        if assigned is not None and self.names.aliases.get(assigned[0]) is small \
                and without_tf2_spelling(canonical(assigned[1])):
            # the alias `dense = tf.layers.dense`: the name denotes the symbol everywhere, and the statement
            # is kept as written (the output drops it where nothing reads the name any more)
            self.bind(small.targets[0].target, TFSymbol(canonical(assigned[1])))
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

    def expression_statement(self, st, small: cst.Expr, out: list) -> None:
        extended = runtime_feeds.extension(self, st, small)
        if extended is not None:
            out.extend(extended)
            return
        if session.is_run(self, small.value):
            out.extend(session.expression_run(self, st, small))
            return
        if self.inlined_call(st, small.value, None, out):
            return
        ev = Evaluator(self, self.env)
        av, value = ev.evaluate(small.value)
        grower = small.value.func if isinstance(small.value, cst.Call) else None
        if isinstance(grower, cst.Attribute) and isinstance(grower.value, cst.Name) and \
                grower.attr.value in list_growth.GROWERS and len(small.value.args) == 1:
            item = ev.value_of_original(small.value.args[0].value)
            items = Seq([item]) if grower.attr.value == "append" else item
            if self.grown(grower.value.value, self.env.get(grower.value.value), items, out):
                out.append(st.with_changes(body=[small.with_changes(value=value)]))  # `params.append(W)`
                return
            if grower.value.value in self.followed_lists():
                self.env[grower.value.value] = HOST  # grown by something else than state: no longer followed
        if isinstance(grower, cst.Attribute) and isinstance(grower.value, cst.Name) and not small.value.args and \
                grower.attr.value in list_growth.REORDERS and grower.value.value in self.followed_lists():
            held = self.env.get(grower.value.value)
            if isinstance(held, Seq) and held.kind == SeqKind.LIST:  # `encoder.reverse()`: its items the other way
                self.env[grower.value.value] = Seq(held.items[::-1], SeqKind.LIST)
                out.append(st.with_changes(body=[small.with_changes(value=value)]))
                return
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

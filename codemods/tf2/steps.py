"""Step functions: each distinct `sess.run` fetch set becomes one `@tf.function`.

A step computes exactly its fetches from its feeds: the value statements (`Comp`s) they need,
found backwards from the fetched names (the slice), in source order; the forward pass of every
loss a gradient is taken of under `tf.GradientTape()`; updates after everything that does not
depend on them (TF 1.x ran a fetched loss from the weights before the update). Its arguments
are the placeholders fed at the call (`tf.TensorSpec` with their dtype and shape, so a feed
converts as `feed_dict` did); a `placeholder_with_default` not fed takes its default. The
step is defined just before the statement that first calls it and traced there once, where
TF 1.x had built its graph (`f = f.get_concrete_function()`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Protocol

import libcst as cst

from codemods.tf2 import assign_ops, batch_norm, emit, random_draws, step_locals, step_reads
from codemods.tf2._base import Refuse
from codemods.tf2.interfaces import FetchKind, Leaf
from codemods.tf2.model import HOST, Seq, StateKind, StateRef, Tensor
from codemods.tf2.program import Start, earliest_start
from codemods.tf2.reaching import free_names
from codemods.tf2.syntax import bound_names, names_of, replace_names
from codemods.tf2.variables import variables_expr

if TYPE_CHECKING:
    from codemods.tf2.program import Program


class Shape(Protocol):
    """A fetch structure (`session.FetchShape`): the return expression from what each leaf returns."""

    def expression(self, nodes: list) -> cst.BaseExpression:
        """The structure with each leaf's node in its place (None: the `None` an op fetched gave)."""


@dataclass
class Step:
    name: str
    params: list                    # placeholder names, in the order of the first call's feed
    returns: list                   # the leaves whose values come back (in fetch order)
    definition: cst.FunctionDef
    calls: int = 0
    before: Optional[Start] = None  # the earlier statement it is defined before, if not its first call's


@dataclass
class Steps:
    tr: "Program"
    by_key: dict = field(default_factory=dict)
    var_lists: dict = field(default_factory=dict)   # tuple of TF 1.x variable names -> list name
    members: dict = field(default_factory=dict)     # list name -> tuple of TF 1.x variable names
    materialized: set = field(default_factory=set)  # comp indices already computed at module level
    drawn: dict = field(default_factory=dict)       # comp index running a random op -> the step that runs it
    drawing: Optional[frozenset] = None             # the script's functions that run a random op

    # -- variable lists -----------------------------------------------------------------------------
    def var_list(self, pairs: list, name: Optional[str] = None) -> cst.BaseExpression:
        """A name for the variables `pairs` (TF 1.x's default var_list), made once, at module level
        (inside a method: on the instance), under `name` when the script names that list itself."""
        key = tuple(n for n, _ in pairs)
        frame = self.tr.classes.frame
        if frame is not None:
            lists = frame.instance.__dict__.setdefault("_var_lists", {})
            if key not in lists:
                base, attr, i = name or "variables", name or "variables", 2
                while attr in frame.instance.attrs:
                    attr, i = f"{base}_{i}", i + 1
                ref = cst.Attribute(cst.Name(frame.self_name), cst.Name(attr))
                self.tr.pending.append(emit.assign(ref, variables_expr(self.tr, pairs)))
                frame.instance.attrs[attr] = HOST
                lists[key] = ref
                self.members[emit.code(ref)] = key
            return lists[key]
        if name is not None and self.var_lists.get(key) != name:
            self.tr.pending.append(emit.assign(name, variables_expr(self.tr, pairs)))
            self.var_lists.setdefault(key, name)
            self.members[name] = key
            return cst.Name(name)
        if key not in self.var_lists:
            same = self.named_list(key)
            if same is not None:
                return cst.Name(same)
            name = self.tr.namer.fresh("variables")
            self.tr.pending.append(emit.assign(name, variables_expr(self.tr, pairs)))
            self.var_lists[key] = name
            self.members[name] = key
            self.tr.note(f"the variables TF 1.x differentiated by default: `{name}` (in creation order)")
        return cst.Name(self.var_lists[key])

    def named_list(self, key: tuple) -> Optional[str]:
        """A name of the script already bound, once, to exactly these variables."""
        if self.tr.classes.frame is not None:
            return None
        for name, members in self.members.items():
            if members == key and name in self.var_lists.values():
                return name
        for name, av in self.tr.env.items():
            if self.list_members(cst.Name(name), av) != key:
                continue
            if len(self.tr.bindings_of(name)) == 1:
                return name
        return None

    def var_list_of(self, node: cst.BaseExpression) -> cst.BaseExpression:
        value = node if isinstance(node, cst.List) else emit.call(cst.Name("list"), node)
        frame = self.tr.classes.frame
        if frame is not None:
            attr, i = "variables", 2
            while attr in frame.instance.attrs:
                attr, i = f"variables_{i}", i + 1
            ref = cst.Attribute(cst.Name(frame.self_name), cst.Name(attr))
            frame.instance.attrs[attr] = HOST
            self.tr.pending.append(emit.assign(ref, value))
            return ref
        name = self.tr.namer.fresh("variables")
        self.tr.pending.append(emit.assign(name, value))
        return cst.Name(name)

    def list_members(self, node: cst.BaseExpression, av=None) -> Optional[tuple]:
        """The TF 1.x names of the variables a variable list holds, when known."""
        if emit.code(node) in self.members:
            return self.members[emit.code(node)]
        if isinstance(av, Seq) and av.items and all(isinstance(i, StateRef) for i in av.items):
            return tuple(dict.fromkeys(n for i in av.items for n, _ in i.state.info.get("vars", [])))
        return None

    def bind_list(self, name: str, pairs: list) -> None:
        self.members[name] = tuple(n for n, _ in pairs)

    # -- values needed at module level ------------------------------------------------------------
    def materialize(self, names: set) -> None:
        """Compute the value statements `names` need right here, once (an initial value TF 1.x
        computed when it initialized the variables)."""
        comps = self.slice(set(names))
        for c in comps:
            if c.train or c.grads or names_of(cst.Module(body=c.body)) & set(self.tr.placeholders):
                self.tr.refuse("a variable's initial value depends on a placeholder or an update: not converted")
        for c in comps:
            if c.index not in self.materialized:
                self.materialized.add(c.index)
                self.tr.pending.extend(c.body)

    # -- slicing ------------------------------------------------------------------------------------
    def slice(self, need: set, upto: Optional[int] = None, fed: frozenset = frozenset()) -> list:
        """The value statements `need` depends on, in source order; a fed placeholder's default is not one."""
        comps = self.tr.comps[:upto]
        chosen = []
        need = set(need)
        for c in reversed(comps):
            if c.default_of in fed:
                continue
            hit = need & c.defs
            if hit:
                chosen.append(c)
                need -= c.defs
                need |= c.uses | set(c.deps)
        chosen.reverse()
        return chosen

    # -- steps --------------------------------------------------------------------------------------
    def step_for(self, leaves: list, feeds: list, shape: Optional[Shape] = None) -> tuple:
        """(Step, its call expression) for fetching `leaves` with `feeds` [(placeholder name, value node)].
        With `shape`, the step returns the fetch's whole structure: `shape` is given what each leaf
        returns (its node, or None for an op that gives nothing) and makes the return expression."""
        fed = [n for n, _ in feeds]
        key = (tuple((l.kind, emit.code(l.node), l.value) for l in leaves), tuple(sorted(fed)),
               None if shape is None else emit.code(shape.expression([l.node for l in leaves])))
        step = self.by_key.get(key)
        if step is None:
            step = self.build(leaves, fed, shape)
            self.by_key[key] = step
            place = self.tr.new_steps if step.before is None else step.before.steps
            for block in self.tr.region_blocks if step.before is not None else ():
                if any(s is step.before for s in block.starts):
                    block.place(step.before)
            place.append(step.definition)
            trace = emit.stmt("{f} = {f}.get_concrete_function()", f=step.name)
            place.append(trace.with_changes(leading_lines=[
                *emit.blank_lines(),
                *emit.comment_lines("traced once, here, where TF 1.x had built the graph of this step")]))
        step.calls += 1
        values = dict(feeds)
        for p in step.params[len(fed):]:  # iterator elements, pulled here as sess.run pulled them
            values[p] = emit.call(cst.Attribute(self.tr.placeholders[p].source, cst.Name("get_next")))
        if fed == step.params[:len(fed)] and not (set(step.params) - set(values)):
            args = [cst.Arg(values[p]) for p in step.params]
        else:
            args = [emit.keyword(n, v) for n, v in feeds] + [emit.keyword(p, values[p]) for p in step.params[len(fed):]]
        return step, emit.with_args(emit.call(cst.Name(step.name)), args)

    def build_time_print(self, st, printed: cst.BaseStatement, graph: set) -> list:
        """A `print` of gradient types while TF 1.x built the graph: the same print, in a function
        computing those gradients that is traced (not run) right here, once."""
        tr = self.tr
        comps = self.slice(set(graph))
        used = set()
        for c in comps:
            used |= names_of(cst.Module(body=c.body))
        params = [p for p in tr.placeholders if p in used]
        name = tr.namer.fresh("build_time_print")
        body = self.body(comps) + [emit.with_comment(printed.with_changes(leading_lines=[]),
                                                     "TF1 printed this once, when it built the graph: here when the "
                                                     "function is traced")]
        definition = self._define(name, params, body)
        trace = emit.stmt("{f}.get_concrete_function()  # traced once, not run: TF1 printed this when it built "
                          "the graph", f=name)
        tr.note(f"the build-time print of gradient types → printed when `{name}` (the graph up to the gradients) is "
                "traced, once, where TF 1.x printed it")
        return [definition, trace.with_changes(leading_lines=emit.blank_lines())]

    def _define(self, name: str, params: list, body: list) -> cst.FunctionDef:
        tr = self.tr
        specs = []
        for p in params:
            ph = tr.placeholders[p]
            if ph.spec is not None:
                specs.append(cst.Element(ph.spec))
                continue
            shape = ph.shape if ph.shape is not None else cst.Name("None")
            specs.append(cst.Element(emit.call(tr.tf("tensorflow.TensorSpec"), shape, ph.dtype)))
        decorator = emit.call(tr.tf("tensorflow.function"), input_signature=cst.List(specs)) if params \
            else tr.tf("tensorflow.function")
        return cst.FunctionDef(
            name=cst.Name(name), params=cst.Parameters([cst.Param(cst.Name(p)) for p in params]),
            body=cst.IndentedBlock(body=body or [cst.SimpleStatementLine([cst.Pass()])]),
            decorators=[cst.Decorator(decorator)], leading_lines=emit.blank_lines())

    def build(self, leaves: list, fed: list, shape: Optional[Shape] = None) -> Step:
        tr = self.tr
        need = set()
        for leaf in leaves:
            need |= {leaf.name} if leaf.kind == FetchKind.TRAIN else names_of(leaf.node)
        comps = self.slice(need, fed=frozenset(fed))
        assign_ops.refuse_unordered(self.tr, leaves, comps, self.statements, self.slice)
        if self.drawing is None:
            self.drawing = random_draws.drawing_functions(tr.module, tr.names.qualified)
        what = ", ".join(f"`{leaf.name or emit.code(leaf.node)}`" for leaf in leaves)
        random_draws.one_stream(self.drawn, comps, what, tr.alias, self.drawing, tr.refuse)
        batch_norm.one_update_per_layer(comps, what, tr.refuse)
        used = set()
        for c in comps:
            used |= names_of(cst.Module(body=c.body))
        for leaf in leaves:
            used |= names_of(leaf.node)
        needed = [p for p in tr.placeholders if p in used]
        prologue = []
        pulled = []
        for p in needed:
            if p not in fed:
                ph = tr.placeholders[p]
                if ph.source is not None:
                    pulled.append(p)  # an iterator's element: pulled at the call, once per run
                    continue
                if ph.computed:
                    continue  # its default is computed in the step (a value statement of the slice)
                if ph.default is None:
                    chosen = sorted(n for c in comps for n in c.defs if isinstance(tr.env.get(n), Tensor) and tr.env[n].chosen)
                    if chosen:  # TF 1.x's graph may not have needed the feed: Python made the choice
                        tr.refuse(f"`{chosen[0]}` is a list TF 1.x chose by Python while it built the graph, from "
                                  "graph values (e.g. gradients tested for None); TF 2 chooses it again in each step "
                                  f"that reads it, and this run does not feed placeholder `{p}` that the choice "
                                  "needs: not converted")
                    tr.refuse(f"placeholder `{p}` is needed here but not fed (TF 1.x raised InvalidArgumentError)")
                prologue.append(emit.assign(p, ph.default))
        params = list(fed) + pulled
        train = any(l.kind == FetchKind.TRAIN for l in leaves)
        preferred = "train_step" if train else "compute_" + "_and_".join(
            l.name or "value" for l in leaves if l.kind == FetchKind.VALUE)[:40]
        name = tr.namer.fresh(preferred)
        returned, early, per_leaf = [], [], []
        for leaf in leaves:
            if leaf.kind == FetchKind.VALUE and train and self._reads_schedule(leaf.node):
                # TF 1.x computed a schedule's value once, before the update that used it and the global
                # step's increment: read it there, not after them
                local = tr.namer.fresh(f"{leaf.name or 'value'}_value")
                early.append(emit.assign(local, leaf.node))
                returned.append(Leaf(FetchKind.VALUE, cst.Name(local), leaf.name))
            elif leaf.kind == FetchKind.VALUE:
                returned.append(leaf)
            else:
                comp = next(c for c in reversed(comps) if leaf.name in c.defs)
                if comp.returns is not None:
                    returned.append(Leaf(FetchKind.VALUE, comp.returns, leaf.name))
                elif leaf.value:  # an assign op whose value the run keeps: its variable after the assignment
                    returned.append(Leaf(FetchKind.VALUE, assign_ops.value(self.statements(comp)), leaf.name))
                else:
                    per_leaf.append(None)
                    continue
            per_leaf.append(returned[-1].node)
        body = prologue + self.body(comps, early)
        if shape is not None:
            body.append(cst.SimpleStatementLine([cst.Return(shape.expression(per_leaf))]))
        elif returned:
            value = returned[0].node if len(returned) == 1 else cst.Tuple(
                [cst.Element(l.node) for l in returned], lpar=[], rpar=[])
            body.append(cst.SimpleStatementLine([cst.Return(value)]))
        definition = self._define(name, params, body)
        before = None
        if tr.regions:
            definition, before = self._traced(definition, comps, leaves)
        traced = before.line if before is not None else tr.regions[-1] if tr.regions else tr.line
        for p in params:  # its input signature reads each placeholder's shape where it is traced
            step_reads.check_placeholder_shape(tr, tr.placeholders[p], traced, f"the input signature of `{name}`")
        shadowed = step_locals.read_then_bound(definition)
        while shadowed is not None:
            renamed = step_locals.split(definition, shadowed, tr.namer.fresh(shadowed))
            if renamed is None:
                line = next((c.line for c in comps if shadowed in c.defs), None)
                tr.refuse(f"`{shadowed}` is read by the step and bound again inside it, not by one assignment "
                          "run once in order (in a loop, under an `if`, by a function of the step, or with "
                          "`+=`): the two values cannot be told apart in the step function: not converted", line)
            definition = renamed
            shadowed = step_locals.read_then_bound(definition)
        tr.note(f"sess.run of {', '.join(emit.code(l.node) for l in leaves)} → `{name}`, a tf.function"
                + (" with the tape, the gradients and the update" if train else ""))
        return Step(name, params, returned, definition, before=before)

    def _traced(self, definition: cst.FunctionDef, comps: list, leaves: list) -> tuple:
        """(`definition` as `step_reads` checks it, the `program.Start` of an earlier statement it goes before,
        or None). A step is traced before the statement that first calls it. When the script binds a name
        it reads again before that, it is traced before the first earlier statement that began after its
        whole graph was built (`program.earliest_start`), if what it reads there is what TF 1.x built with,
        what the fetch computes itself reads the same there as at the run, and nothing the translation
        writes after that statement is read by it. Else the check's refusal stands."""
        tr = self.tr
        try:
            return step_reads.check_step(tr, definition, comps, tr.regions[-1]), None
        except Refuse as refused:
            block = tr.region_blocks[-1] if tr.region_blocks else None
            start = earliest_start(tr.region_blocks, comps) if block is not None else None
            if start is None:
                raise
            if not step_reads.read_alike(tr, [l.node for l in leaves if l.kind == FetchKind.VALUE], start.line,
                                         tr.regions[-1]):
                raise  # what the fetch itself computes was built here, where the script binds what it reads
            made = free_names(definition) - names_of(tr.module)  # names only the translation binds
            if made & (block.bound_from(start) | set().union(*(bound_names(st) for st in tr.pending))):
                raise  # written after that statement: not there yet when the step would be traced
            try:
                return step_reads.check_step(tr, definition, comps, start.line), start
            except Refuse:
                raise refused from None

    def _reads_schedule(self, node: cst.BaseExpression) -> bool:
        return any(isinstance(self.tr.env.get(n), StateRef) and self.tr.env[n].state.kind == StateKind.SCHEDULE
                   for n in names_of(node))

    def statements(self, comp) -> list:
        """A value statement's code where the step is defined (`self` of another scope → the instance's name)."""
        if comp.owner is None:
            return comp.body
        instance, self_name = comp.owner
        expr = self.tr.classes.instance_expr(instance, self_name)
        if isinstance(expr, cst.Name) and expr.value == self_name:
            return comp.body
        return [replace_names(s, {self_name: expr}) for s in comp.body]

    def _watched(self, comps: list, tape: set) -> list:
        """`tape.watch(x)` for each floating placeholder the forward pass reads, when a gradient of the step is
        taken with respect to a value (`tf.gradients(loss, x)`): TF 1.x's graph differentiated with respect to
        any tensor; a tape only through what it watches (the variables, and what is computed from them)."""
        if not any(c.watch_inputs for c in comps if c.grads):
            return []
        read = {u for c in comps if c.index in tape for u in c.uses}
        floats = ("float16", "float32", "float64", "bfloat16")
        watched = [p.name for p in sorted(self.tr.placeholders.values(), key=lambda p: p.order)
                   if p.name in read and emit.code(p.dtype).endswith(floats)]
        return [emit.stmt("tape.watch({x})", x=cst.Name(name)) for name in watched]

    def body(self, comps: list, early: list = ()) -> list:
        """The statements of `comps` in step order: the forward pass of every differentiated loss
        under the tape, then what does not depend on an update (and `early`), then the updates and
        what follows."""
        after, by_def = set(), {}
        for c in comps:
            deps = {by_def[u] for u in c.uses if u in by_def}
            if c.train or deps & after:
                after.add(c.index)
            for d in c.defs:
                by_def[d] = c.index
        losses = {g for c in comps for g in c.grads}
        tape, need = set(), set(losses)
        for c in reversed(comps):
            if c.index in after or c.grads and not need & c.defs:
                continue
            if need & c.defs:
                # a gradient a differentiated loss reads (a gradient penalty) is taken inside the tape, which
                # records it (persistent): the outer gradient goes through it, as TF 1.x's graph did
                tape.add(c.index)
                need |= c.uses
        pre = [c for c in comps if c.index not in after]
        ordered = [c for c in pre if c.index in tape] + [c for c in pre if c.index not in tape] + \
                  [c for c in comps if c.index in after]
        out = []
        if tape:
            calls = sum(c.gradient_calls for c in comps)
            options = "persistent=True" if calls > 1 else ""
            inner = [s for c in ordered if c.index in tape for s in self.statements(c)]
            inner = self._watched(comps, tape) + inner
            out.append(cst.With(items=[cst.WithItem(emit.expr("{tf}.GradientTape(" + options + ")", tf=self.tr.alias),
                                                    asname=cst.AsName(cst.Name("tape")))],
                                body=cst.IndentedBlock(body=inner)))
        elif losses:
            self.tr.refuse("a gradient of a loss that does not depend on the variables", comps[0].line)
        out += [s for c in pre if c.index not in tape for s in self.statements(c)]
        out += list(early)
        out += [s for c in comps if c.index in after for s in self.statements(c)]
        return out

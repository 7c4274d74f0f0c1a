"""The script's own functions, as the graph code uses them.

TF 1.x ran a helper's body each time it was called while the graph was built, so a helper is
read at each call, for what that call did:
- a helper that only computes values from its arguments (`def model(X, w, ...)`) is kept and
  called inside the steps (its TF calls rewritten to TF 2);
- a helper that creates state (`init_weights`, a layer-building `generator(z)`) is read at each
  call as if its body stood there (`inline`): each call creates its own state, or finds the
  state it reuses (`reuse=True`), exactly as TF 1.x did; values it computes go into the steps;
- a function that runs the session (`main()`, `train()`) is read where it is first called, as
  a region of its own: its state is created in it, its step functions are defined in it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import arguments, helper_results, unroll, versions
from codemods.tf2.constructs import CREATORS, STATE_OBJECTS
from codemods.tf2.expressions import Evaluator
from codemods.tf2.inline import Rename, inline_call
from codemods.tf2.interfaces import HelperInfo
from codemods.tf2.model import HOST, Class, Func, Input, Op, Session, StateRef, Tensor
from codemods.tf2.names import host_utility
from codemods.tf2.reaching import statements_reading
from codemods.tf2.syntax import bound_names, function_locals, names_of, taken_names, walk_nodes

if TYPE_CHECKING:
    from codemods.tf2.program import Program
    from codemods.tf2.call_site import CallSite

# Calls and methods that create graph state or ops with effects (a helper containing one is inlined).
STATE_METHODS = frozenset({"minimize", "apply_gradients", "compute_gradients", "make_one_shot_iterator",
                           "make_initializable_iterator", "get_next", "make_initializer", "reuse_variables"})
# Scopes whose name must be a literal where they are read (a helper opening one named by a parameter is inlined).
SCOPES = frozenset({"tensorflow.variable_scope", "tensorflow.name_scope"})


class Functions:
    def __init__(self, tr: "Program"):
        self.tr = tr
        self.defs: dict = {}          # name -> FunctionDef at the region's level
        self.inlined_calls: dict = {}  # name -> number of calls read as inlined
        self.pure: set = set()        # helpers called inside the steps
        self.walked: dict = {}        # name -> the def with its body read as a region
        self.walked_with: dict = {}   # name -> what its first call gave (arguments.Given.keys)
        self.dropped: dict = {}       # name -> its parameters gone in TF 2 (the session, graph things)
        self._walking: set = set()
        self._stack: list = []        # the functions being read as regions, the innermost last
        self.shared: dict = {}        # caller -> names it makes that a function it calls reads (`global`)
        self._program_facts = None    # unroll.program_facts, read once, when a helper's loop is first read
        self._shaping: set = set()    # kept helpers whose result is being read for its shape (helper_results)

    # -- analysis -------------------------------------------------------------------------------
    def analyze(self, fn: cst.FunctionDef, seen: Optional[set] = None) -> HelperInfo:
        seen = (seen or set()) | {fn.name.value}
        info = HelperInfo()
        local = function_locals(fn)
        host_parts: set = set()  # ids of the TF names that spell a host utility's call or a dtype
        for n in walk_nodes(fn.body):
            if type(n) is cst.Call:
                q = self.tr.names.qualified(n.func)
                if q is not None:
                    info.uses_tf = info.uses_tf or q.split(".")[0] in ("tensorflow", "slim")
                    if host_utility(q):
                        host_parts.update(id(part) for part in walk_nodes(n.func))
                    if q in CREATORS:
                        info.creates_state = True
                    if q in ("tensorflow.Session", "tensorflow.InteractiveSession"):
                        info.session = True
                    if q in SCOPES and n.args and not isinstance(n.args[0].value, cst.SimpleString):
                        info.scoped = True  # a scope named by a parameter: its name is known at each call
                elif isinstance(n.func, cst.Attribute) and n.func.attr.value in STATE_METHODS:
                    info.creates_state = True
                elif isinstance(n.func, cst.Name) and n.func.value not in seen:
                    inner = self.tr.env.get(n.func.value)
                    if isinstance(inner, Func) and n.func.value not in local:
                        sub = self.analyze(inner.node, seen)
                        info.creates_state |= sub.creates_state
                        info.scoped |= sub.scoped
                        info.session |= sub.session
                        info.uses_tf |= sub.uses_tf
                        info.graph_values |= sub.graph_values
                        info.reads_graph_globals |= sub.reads_graph_globals
                    elif isinstance(inner, Class) and n.func.value not in local:
                        # an object of the script's own classes: what its methods do, this function does
                        # when it makes one and calls them (main() building a model object and training it)
                        for method in inner.node.body.body:
                            if isinstance(method, cst.FunctionDef):
                                sub = self.analyze(method, seen | {n.func.value})
                                info.creates_state |= sub.creates_state
                                info.session |= sub.session
                                info.uses_tf |= sub.uses_tf
                                info.graph_values |= sub.graph_values
            kind = type(n)  # (Call, Name and Attribute have no subclasses: `is` is faster than isinstance)
            if kind is cst.Attribute and n.attr.value in ("eval",) or (
                    kind is cst.Attribute and n.attr.value == "run" and isinstance(n.value, cst.Name)
                    and isinstance(self.tr.env.get(n.value.value), Session)):
                info.session = True
            if (kind is cst.Name or kind is cst.Attribute) and id(n) not in host_parts and self.tr.names.is_tf(n):
                info.uses_tf = True
                if host_utility(self.tr.names.qualified(n)):
                    host_parts.update(id(part) for part in walk_nodes(n))
                else:
                    info.graph_values = True
        for name in names_of(fn.body) - local:
            av = self.tr.env.get(name)
            if isinstance(av, (Input, Tensor, Op)):
                info.reads_graph_globals.add(name)
        return info

    # -- definitions ------------------------------------------------------------------------------
    def define(self, st: cst.FunctionDef, out: list) -> None:
        self.tr.env[st.name.value] = Func(st)
        self.defs[st.name.value] = st
        out.append(st)

    def inlined(self, value: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        """The helper to read inline at this statement-level call, if it must be (it creates state,
        or reads graph values of the module that a step function has as locals)."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return None
        func = self.tr.env.get(value.func.value)
        if not isinstance(func, Func):
            return None
        info = self.analyze(func.node)
        if info.session:
            return None
        if info.creates_state or info.reads_graph_globals or info.scoped:
            return func.node
        return None

    def state_helper_in(self, loop: cst.CSTNode) -> Optional[str]:
        """The first helper called in the body of `loop` (a `for` or `while` the rewrite did not read as
        its passes, `unroll`) that creates state: TF 1.x made that state once per pass."""
        for n in walk_nodes(loop.body):
            if type(n) is cst.Call and isinstance(n.func, cst.Name):
                func = self.tr.env.get(n.func.value)
                if isinstance(func, Func):
                    info = self.analyze(func.node)
                    if info.creates_state and not info.session:
                        return n.func.value
        return None

    def helper_call(self, site: "CallSite", func: Func) -> tuple:
        fn = func.node
        name = fn.name.value
        info = self.analyze(fn)
        if info.session or arguments.given_session(site):
            self.walk_program(fn, site)
            return HOST, arguments.call_without(site, fn, self.dropped.get(name, set()))
        if info.creates_state or info.reads_graph_globals:
            self.tr.refuse(f"helper `{name}` creates state (or reads graph values of the module) and is called "
                           "inside an expression: it is converted when called as a statement (`x = "
                           f"{name}(...)`)")
        args_graph = any(site.ev.value_of(a.value).graph or isinstance(site.ev.value_of(a.value), StateRef)
                         for a in site.node.args)
        if info.graph_values or args_graph:
            self.pure.add(name)
            return helper_results.returned(self.tr, site, fn, self._shaping, self.pure), site.node
        return HOST, site.node

    def walk_program(self, fn: cst.FunctionDef, site: Optional["CallSite"] = None) -> None:
        """A function that runs the session: its body read as a region, where it is first called.

        Its parameters stand for what that call gave (`arguments`): the session, graph things and
        host state; the function is read once, so a later call must give the same things."""
        name = fn.name.value
        given = arguments.bind(fn, site, function_locals(fn), bound_names(fn.body)) if site is not None else arguments.Given()
        if name in self.walked or name in self._walking:
            if not arguments.same_as_before(self.walked_with.get(name), given):
                self.tr.refuse(f"`{name}(...)` runs the session and is called again with other kinds of objects "
                               "(or other graph things) than at its first call, where it was read: one TF 2 "
                               "definition cannot do both")
            return
        self._walking.add(name)
        self._stack.append([])  # the functions read as regions while this one is: (name, def, free names)
        self.walked_with[name] = given.keys
        self.dropped[name] = given.dropped
        saved, saved_locals = self.tr.env, self.tr.region_locals
        env = dict(saved)
        for p in function_locals(fn):
            env.pop(p, None)
        env.update(given.objects)
        env.update({r: av for r, av in given.roots.items() if av is not None})
        self.tr.sessions |= given.sessions
        self.tr.env, self.tr.region_locals = env, function_locals(fn)
        stmts = [s.visit(Rename(given.substitute, self.tr)) for s in fn.body.body]
        body: list = []
        try:
            self.tr.block(stmts, body, region=True)
            body = self.finish(body)  # the functions it defines, as they end up (walked, rewritten, gone)
        finally:
            self.tr.env, self.tr.region_locals = saved, saved_locals
            self._walking.discard(name)
            callees = self._stack.pop()
        new = arguments.drop_params(fn.with_changes(body=fn.body.with_changes(body=body)), given.dropped)
        free = arguments.free_names(new)
        for frame in self._stack:
            frame.append((name, fn, free))
        if saved_locals and not self._stack:  # called from a method: its locals are out of reach
            made = saved_locals | {s.name for s in self.tr.states if s.info.get("local_to") is saved_locals}
            if free & made:
                self._unseen(name, free & made, fn)
        nested = {n.name.value for n in walk_nodes(fn.body) if isinstance(n, cst.FunctionDef)}
        closed = arguments.closed_over(new, {n for c, _, names in callees if c in nested for n in names})
        wanted = {n for c, _, names in callees for n in names if c not in nested or n not in closed}
        if wanted:
            declared, shared = arguments.share(new, wanted, taken_names(self.tr.module) - function_locals(fn))
            if declared is None:
                inner = [(c, f, names & shared - closed) for c, f, names in callees if c in nested]
                callee, callee_fn, names = next((c for c in inner if c[2]), None) or next(
                    c for c in callees if c[2] & shared)
                if callee in nested:
                    self.tr.refuse(f"`{callee}(...)`, a function `{name}` defines, reads `{sorted(names)[0]}` in its "
                                   f"TF 2 body, which `{name}` binds more than once or takes as a parameter: which "
                                   "binding it reads when it runs is not followed: not converted",
                                   self.tr.line_of(callee_fn))
                self._unseen(callee, shared, callee_fn)
            if shared:
                new = declared
                self.tr.note(f"`{name}` makes {', '.join(sorted(shared))}, which the functions it calls read: "
                             "declared global there")
        self.walked[name] = new

    def _unseen(self, name: str, unseen: set, fn: cst.FunctionDef):
        self.tr.refuse(f"`{name}(...)` is given what the function calling it made, and its TF 2 body reads "
                       f"`{sorted(unseen)[0]}` there, a local of that function it cannot see in Python: not "
                       "converted (build the graph at module level or on an object)", self.tr.line_of(fn))

    # -- inlining ----------------------------------------------------------------------------------
    def inline(self, st, fn: cst.FunctionDef, call: cst.Call, target) -> list:
        name = fn.name.value
        self.inlined_calls[name] = self.inlined_calls.get(name, 0) + 1
        self.tr.note(f"`{name}(...)` read where it is called: TF 1.x ran its body there (it creates state, or "
                     "adds to or reads the graph's collections)")
        stmts = inline_call(self.tr, st, fn, call, target)
        # a loop that makes state over values this call fixes (`for n in sizes:`, `sizes` given): its passes
        if self._program_facts is None:
            self._program_facts = unroll.program_facts(self.tr.module, self.tr.names.qualified, CREATORS)
        stmts, loops = unroll.inlined(stmts, self._program_facts, self.tr.names.qualified, CREATORS, self.tr.origins,
                                      self._pass_name)
        for line, passes in loops:
            self.tr.note(f"the loop at line {line} makes state over values this call of `{name}` fixes → its "
                         f"{passes} passes, in order (TF 1.x ran it once, while it built the graph)")
        # a name of its state bound again (`W = tf.Variable(...)` twice): each binding its own spelling
        return versions.renamed(stmts, self._state_object, self._pass_name, self.tr.origins)

    def _state_object(self, value) -> bool:
        """Is `value` state itself: a call that makes a variable, layer, cell, optimizer, iterator or variable
        list (`STATE_OBJECTS`), or of a helper that makes state (what it returns may be that state)?"""
        if not isinstance(value, cst.Call):
            return False
        if self.tr.names.qualified(value.func) in STATE_OBJECTS:
            return True
        func = self.tr.env.get(value.func.value) if isinstance(value.func, cst.Name) else None
        return isinstance(func, Func) and self.analyze(func.node).creates_state

    def _pass_name(self, name: str) -> str:
        """A fresh name for a pass's binding of the inlined local `name`, which stands for the input's."""
        made = self.tr.namer.fresh(name, self.tr.region_locals)
        self.tr.inlined_names[made] = self.tr.inlined_names.get(name, name)
        return made

    # -- the end ----------------------------------------------------------------------------------
    def finish(self, out: list) -> list:
        """The region's definitions as they end up: walked, rewritten for the steps, or gone."""
        uses: dict = {}
        for st in out:
            if isinstance(st, cst.FunctionDef) and self.defs.get(st.name.value) is st:
                continue
            for n in names_of(st):
                uses[n] = uses.get(n, 0) + 1
        new = []
        for st in out:
            name = st.name.value if isinstance(st, cst.FunctionDef) else None
            if name is None or self.defs.get(name) is not st:
                new.append(st)
                continue
            if name in self.walked:
                new.append(self.walked[name])
            elif name in self.inlined_calls and name not in self.pure and (
                    not uses.get(name) or self._reads_reached(name) <= self.inlined_calls[name]):
                continue  # read only where it was inlined (`for neural_net in ...` later binds another value)
            elif name in self.inlined_calls and self.analyze(st).creates_state:
                self.tr.refuse(f"helper `{name}` creates state; its calls were read as its body, where TF 1.x ran it, "
                               "and its name is read elsewhere too: kept as a function it would create that state "
                               "again each time it runs: not converted", self._def_line(name))
            elif name in self.pure or self.analyze(st).uses_tf:
                new.append(self.rewrite(st))
            else:
                new.append(st)
        return new

    def _input_def(self, name: str) -> Optional[cst.FunctionDef]:
        """The input's one module-level `def name` (None: none, or more than one)."""
        found = [st for st in self.tr.module.body if isinstance(st, cst.FunctionDef) and st.name.value == name]
        return found[0] if len(found) == 1 else None

    def _def_line(self, name: str) -> Optional[int]:
        original = self._input_def(name)
        return None if original is None else self.tr.line_of(original)

    def _reads_reached(self, name: str) -> float:
        """How many reads of `name` in the input its `def` reaches (reaching definitions at module level;
        every occurrence of the name in another function or class counts, read whenever that runs);
        infinity where the input defines it more than once (not followed)."""
        tr = self.tr
        original = self._input_def(name)
        if original is None:
            return float("inf")
        line = tr.line_of(original)
        defs = tr.definitions()
        module = defs.scopes[0]
        count = 0
        for top in tr.module.body:
            for st, read in statements_reading(top):
                if name not in read or st is original:
                    continue
                if isinstance(st, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    count += sum(isinstance(n, cst.Name) and n.value == name for n in walk_nodes(st))
                elif line in defs.reaching(module, tr.line_of(st), name):
                    count += 1
        return count

    def rewrite(self, fn: cst.FunctionDef) -> cst.FunctionDef:
        """A helper kept as it is: its TensorFlow calls in their TF 2 form."""
        env = dict(self.tr.env)
        local = function_locals(fn)
        graph = fn.name.value in self.pure or self.analyze(fn).graph_values
        for p in local:  # a helper computing on the host only (`tf.gfile`, dtypes) is given host values
            env[p] = Tensor() if graph else HOST
        env.update(_local_functions(fn, local))
        ev = Evaluator(self.tr, env)
        saved_line = self.tr.line
        self.tr.line = self.tr.line_of(fn)
        body = fn.body.visit(ev)
        self.tr.line = saved_line
        if self.tr.pending:
            self.tr.refuse(f"helper `{fn.name.value}` creates state where it is not read as a call")
        return fn.with_changes(body=body)


def _local_functions(fn: cst.FunctionDef, local: set) -> dict:
    """The functions `fn`'s body defines by a `def` of its own block and binds nowhere else (`local`: the
    names its body binds otherwise, `function_locals`; a helper's
    `def act(t): ...`, or a lambda bound to a name, read as its `def`): name → Func. The helper is kept
    and runs inside the steps, so such a function runs there too, each time the helper does."""
    defs = [st for st in fn.body.body if isinstance(st, cst.FunctionDef)]
    names = [st.name.value for st in defs]
    return {st.name.value: Func(st) for st in defs if names.count(st.name.value) == 1 and st.name.value not in local}

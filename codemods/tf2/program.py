"""The program being translated: one file's model and output, and the services the readers use.

`Program` holds what the TF2 tier has learnt of a TF 1.x file so far (the state it creates, its
placeholders, the values recomputed in steps, TF 1.x's scopes, the step functions) and what the
output needs (statements waiting for their place, definitions written once after the imports,
imports). The modules that read constructs (`variables`, `layers`, `training`, `checkpoints`,
...) reach it as `tr`; `interpret.Translator` adds the walk over the statements (`block`,
`assign`, `evaluator`: declared here, so a converter can ask for them without importing the
interpreter) and makes the parts a converter reaches through `tr` (`steps`, `classes`,
`functions`: their interfaces are in `interfaces`).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.tf2 import effects, fixed_values, host_shapes, list_growth, reaching
from codemods.tf2._base import Note, Refuse, walk
from codemods.tf2.emit import Namer, code
from codemods.tf2.interfaces import HelperReader, MethodReader, StepBuilder
from codemods.tf2.model import Comp, Func, Input, Op, Other, Placeholder, Session, State, StateRef, Tensor
from codemods.tf2.names import ImportTable, tf_expr
from codemods.tf2.scopes import VarScopes
from codemods.tf2.syntax import (assignments, bound_names, names_of, replace_names, root_name, taken_names, walk_nodes,
                                 walk_statements)

RULE = "tf2"


class Trial:
    """A program's fields as they were (`Program.trial`)."""

    def __init__(self, tr: "Program"):
        self.tr = tr
        self.fields = {k: (v, v.copy() if isinstance(v, (list, set, dict)) else None) for k, v in vars(tr).items()}
        self.names = (tr.namer.taken.copy(), tr.namer.preferred.copy())  # fresh names taken meanwhile are free again

    def restore(self) -> None:
        for k, (value, copied) in self.fields.items():
            if isinstance(value, list):
                value[:] = copied
            elif isinstance(value, (set, dict)):
                value.clear()
                value.update(copied)
            setattr(self.tr, k, value)
        taken, preferred = self.names
        self.tr.namer.taken.clear()
        self.tr.namer.taken.update(taken)
        self.tr.namer.preferred.clear()
        self.tr.namer.preferred.update(preferred)


class Start:
    """A statement of a region block where it began: its input `line`, its place `index` in the block's
    output (step definitions put before it move it), how many value statements (`comps`) had been read
    then, and the step definitions waiting to be put before it (`steps`)."""

    def __init__(self, line: int, index: int, comps: int):
        self.line, self.index, self.comps = line, index, comps
        self.steps: list = []


class RegionBlock:
    """The statements of a region block read so far, as `Start`s, and which of them is the first that got
    step definitions put before it (`placed`). A step whose graph was all built before an earlier statement
    may be defined there (`Start.steps`, `earliest_start`): traced where what it reads is what TF 1.x built
    with."""

    def __init__(self, out: list):
        self.out = out  # the block's output, as it is written
        self.starts: list = []
        self.placed: Optional[int] = None

    def place(self, start: Start) -> None:
        """Steps will be put before `start`, a statement of this block: the block's first placement may be it."""
        i = next(k for k, s in enumerate(self.starts) if s is start)
        self.placed = i if self.placed is None else min(self.placed, i)

    def bound_from(self, start: Start) -> set:
        """The names the output written from `start` on binds."""
        return set().union(*(bound_names(st) for st in self.out[start.index:]))

    def insert(self, at: int, defs: list) -> None:
        """`defs` put into the output at `at`; the statements there and after it move."""
        self.out[at:at] = defs
        for s in self.starts:
            if s.index >= at:
                s.index += len(defs)


def earliest_start(blocks: list, comps: list) -> Optional[Start]:
    """The first statement of the region blocks `blocks` (outermost first) that write the innermost one's
    output (a Session block's body is read into its enclosing block's), before the statement being read
    and from the first step placement of those blocks on (from their first statement if none has one),
    that began after every comp of `comps` was read. None if there is none."""
    chain = []
    for block in reversed(blocks):
        if block.out is not blocks[-1].out:
            break
        chain.insert(0, block)
    candidates = []  # (the statement, whether steps were placed before it or a statement of its block before it)
    for block in chain:
        starts = block.starts[:-1] if block is blocks[-1] else block.starts  # an enclosing statement may take some
        candidates += [(s, block.placed is not None and i >= block.placed) for i, s in enumerate(starts)]
    first = next((k for k, (_, placed) in enumerate(candidates) if placed), 0)
    last = max((c.index for c in comps), default=-1)
    return next((s for s, _ in candidates[first:] if s.comps > last), None)


class Program:
    """The state of one file's translation: its model (state, inputs, values, scopes) and its output
    (statements waiting for their place, definitions written once), with what the readers of
    constructs ask of it (refuse, note, add_state, preamble_function, ...)."""

    def __init__(self, module: cst.Module, names: ImportTable):
        self.module = module
        self.names = names
        self.alias = names.tf_name()
        self.namer = Namer(taken_names(module))
        self.env: dict = {}
        self.states: list = []
        self.placeholders: dict = {}
        self.comps: list = []
        self.notes: list = []
        self.scopes = VarScopes()
        self.pending: list = []          # state statements made while evaluating the current statement
        self.line = 0
        # generated statement -> line of the input it comes from (keyed by the node itself, which
        # keeps it alive: an id() key could be reused by a later node once this one is freed)
        self.origins: dict = {}
        self.steps: StepBuilder = None   # the parts the interpreter makes (interpret.Translator)
        self.control: list = []          # names of ops under `with tf.control_dependencies(...)`
        self.update_ops: list = []       # the UPDATE_OPS collection: batch normalization updates (GraphOp)
        self.loop_depth = 0
        self.functions: HelperReader = None
        self.classes: MethodReader = None
        self.new_steps: list = []        # step definitions waiting for their place
        self.emitted: dict = {}          # construct -> definitions emitted once at module level
        self.runs_seen = False           # a step has been called (an initializer after it re-initializes)
        self.carry: list = []            # blank lines of removed statements, for the next one kept
        self._assigned = None            # name -> values it is assigned in the file (bindings_of)
        self._parameters = None          # names functions of the file take as parameters
        self.region_locals: set = set()  # names local to the function being read as a region
        self.folded: dict = {}           # host name bound once in the file -> the number it holds (static dims)
        self.dropped: dict = {}          # name bound to a static shape whose statement went -> why a read is refused
        self.fresh: dict = {}            # host name -> (its block's output, the statement there that last bound it
                                         # to a new literal: `grads = []`, `l2 = 0.0`), while nothing else read it
        self.graph_seed = None           # the argument of tf.set_random_seed, once seen
        self.sparse_reads: list = []     # lines reading a variable by index (gather, embedding_lookup)
        self.feeds: set = set()          # names bound to feed dicts (read where they are fed)
        self.runtime_feed_names: set = set()  # dicts that may be feeds extended later (runtime_feeds)
        self.runtime_feeds: list = []    # those bound to feed dicts (runtime_feeds)
        self.sessions: set = set()       # names bound to the Session (gone in TF 2)
        self.losses: list = []           # the LOSSES collection: names of the tf.losses results
        self.regularization: list = []   # the REGULARIZATION_LOSSES collection: names of its terms
        self.summaries: list = []        # the SUMMARIES collection: (tag, tf.summary function, value name, max_outputs)
        self.bindings: dict = {}         # what the targets of the current sess.run denote (fetched summaries)
        self.gradient_lists: set = set() # names bound to a tf.gradients(...) result
        self.preamble: list = []         # definitions that go after the imports
        self.imports: set = set()        # modules the output needs imported
        self.step_prelude: list = []     # statements the current value statement needs before it, in its steps
        self.reading: list = []          # input lines of the statements being read, outermost first
        self.regions: list = []          # of those, the ones where new step functions are placed
        self.region_blocks: list = []    # the region blocks being read (`RegionBlock`), innermost last
        self.inlined_names: dict = {}    # fresh name of a helper's local read in place -> the input's name
        # id of a node of a static dimension written in the input -> (the node, the line and the statements being
        # read where TF 1.x read it): a layer built later on that dimension reads it as TF 1.x did (`step_reads`)
        self.dim_origins: dict = {}
        self._definitions = None         # reaching definitions of the input (reaching.Definitions)
        self._followed_lists = None      # lists filled statement by statement, followed (list_growth)
        self._fixed = None               # the values the file fixes (fixed_values.Fixed)
        self._host_shapes = None         # the shapes of the NumPy arrays it makes (host_shapes.HostShapes)
        self.followed_locals: frozenset = frozenset()  # lists of helpers read in place, followed (their fresh names)

    # -- errors, notes, small builders ------------------------------------------------------------
    def trial(self) -> "Trial":
        """What this program holds now, to put back after reading something only for what it computes
        (`Trial.restore`): its lists, sets and dicts in place (readers hold them), its other fields."""
        return Trial(self)

    def refuse(self, reason: str, line: Optional[int] = None):
        raise Refuse(self.line if line is None else line, reason)

    def note(self, message: str, line: Optional[int] = None) -> None:
        n = Note(self.line if line is None else line, RULE, "change", message)
        if n not in self.notes:
            self.notes.append(n)

    def tf(self, qname: str) -> cst.BaseExpression:
        return tf_expr(self.alias, qname)

    @staticmethod
    def code(node: cst.CSTNode) -> str:
        return code(node)

    def mark_dims(self, dims) -> None:
        """Note where TF 1.x read the expressions of static dimensions `dims` (the statement being read now)."""
        for dim in dims or ():
            if dim is not None and not isinstance(dim, cst.Integer):
                for node in walk_nodes(dim):
                    self.dim_origins.setdefault(id(node), (node, self.line, tuple(self.reading)))

    def line_of(self, node: cst.CSTNode) -> int:
        return self.origins.get(node) or self.names.line(node) or self.line

    # -- what a piece of the input reads ------------------------------------------------------------
    def graph_names(self) -> set:
        return {n for n, v in self.env.items() if v.graph and not isinstance(v, StateRef)}

    def tf_callable(self, func) -> bool:
        """`func` (host code, not yet read) is TensorFlow's, or a method of a TensorFlow object or the session."""
        return self.names.is_tf(func) or isinstance(self.env.get(root_name(func)),
                                                    (StateRef, Tensor, Input, Other, Op, Session))

    def mentions_tf(self, node) -> bool:
        """`node` names a TensorFlow symbol."""
        return any(isinstance(n, (cst.Name, cst.Attribute)) and self.names.is_tf(n) for n in walk_nodes(node))

    def runs_session(self, node) -> bool:
        """`node` runs the session (or makes one, or gives it to a function of the script)."""
        for n in walk_nodes(node):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute):
                attr = n.func.attr.value
                if attr == "eval":
                    return True
                if attr == "run" and isinstance(n.func.value, cst.Name) and isinstance(self.env.get(n.func.value.value),
                                                                                          (Session, Op)):
                    return True
                if attr == "run" and isinstance(n.func.value, cst.Call) and self.names.is_tf(n.func.value.func):
                    return True
            if isinstance(n, cst.Call) and any(isinstance(a.value, cst.Name) and isinstance(self.env.get(a.value.value),
                                                                                            Session) for a in n.args):
                return True  # the session given to a function of the script, which runs it
            if isinstance(n, cst.Call) and self.names.qualified(n.func) in ("tensorflow.Session",
                                                                           "tensorflow.InteractiveSession"):
                return True
        return False

    def reads_graph(self, node) -> bool:
        """`node` reads a graph value of the program, or calls TensorFlow."""
        graph = self.graph_names()
        read = self.definitions().outer_reads(node) if isinstance(node, cst.BaseCompoundStatement) else None
        return bool((names_of(node) if read is None else read) & graph) or any(
            isinstance(n, cst.Call) and self.names.is_tf(n.func) for n in walk_nodes(node))

    # -- the walk over the statements: interpret.Translator --------------------------------------------
    def evaluator(self, env: dict, target: Optional[str] = None):
        """A reader of one expression in `env` (an `expressions.Evaluator`; `call_site.Evaluation`)."""
        raise NotImplementedError

    def block(self, stmts: list, out: list, region: bool) -> None:
        """Read `stmts` in order, their TF 2 form appended to `out` (`region`: new steps are placed in it)."""
        raise NotImplementedError

    def assign(self, st: cst.SimpleStatementLine, small: cst.Assign, out: list) -> None:
        """Read the assignment `small` (of the statement `st`), its TF 2 form appended to `out`."""
        raise NotImplementedError

    def bind(self, target: cst.BaseExpression, av) -> None:
        """Bind an assignment target to the abstract value `av`."""
        raise NotImplementedError

    # -- the model --------------------------------------------------------------------------------
    def add_state(self, state: State, statements: list) -> StateRef:
        """`state` is created here: its TF 2 statements go in place, before the current statement
        (inside a method: on the instance, `self.<name>`)."""
        ref = self.classes.state_ref(state.name)
        if ref is not None and state.ref is None:
            mapping = {state.name: ref}
            statements = [replace_names(st, mapping) for st in statements]
            state.ref = ref
            if state.variables is not None:
                state.variables = replace_names(state.variables, mapping)
            if "vars" in state.info:
                state.info["vars"] = [(n, replace_names(e, mapping)) for n, e in state.info["vars"]]
            self.classes.frame.instance.attrs[ref.attr.value] = StateRef(state)
            state.info["owner"] = (self.classes.frame.instance, self.classes.frame.self_name)
        if state.ref is None and self.region_locals:
            state.info["local_to"] = self.region_locals  # made in a function read as a region: its local
        self.states.append(state)
        self.pending.extend(statements)
        self.namer.claim(state.name)
        return StateRef(state)

    def trainable(self) -> list:
        return [s for s in self.states if s.trainable]

    def add_comp(self, body: list, defs: set, uses: set, **kw) -> Comp:
        body, frame = self.classes.promote(body)
        read = reaching.read_names(cst.Module(body=body)) & (self.graph_names() | set(self.placeholders))
        comp = Comp(len(self.comps), self.line, body, set(defs), set(uses) | read, at=tuple(self.reading), **kw)
        if frame is not None:
            comp.owner = (frame.instance, frame.self_name)
        self.comps.append(comp)
        return comp

    def definitions(self) -> "reaching.Definitions":
        """Which definition of each name reaches each statement of the input (computed once)."""
        if self._definitions is None:
            self._definitions = reaching.Definitions(
                self.module, self.names.line, frozenset(self.names.aliases),
                list_growth.shared(self.module, self.names.is_tf, effects.MUTATORS), self.names.is_tf)
        return self._definitions

    def fixed(self) -> "fixed_values.Fixed":
        """The values the file fixes (`fixed_values`: names bound once and only read; computed once)."""
        if self._fixed is None:
            first = fixed_values.first_values(self.module)
            self._fixed = fixed_values.Fixed(self.module, self.names.sites or {}, first, reader=self.names.is_tf)
        return self._fixed

    def host_shapes(self) -> "host_shapes.HostShapes":
        """The shapes of the NumPy arrays the file makes where the file alone decides them (computed once)."""
        if self._host_shapes is None:
            self._host_shapes = host_shapes.HostShapes(self.fixed(), self.names.raw)
        return self._host_shapes

    def followed_lists(self) -> frozenset:
        """The lists the file fills statement by statement that are followed item by item (computed once)."""
        if self._followed_lists is None:
            self._followed_lists = list_growth.followed(self.module, self.names.is_tf)
        return self._followed_lists | self.followed_locals

    def bindings_of(self, name: str) -> list:
        """The values a name is assigned anywhere in the file (None for `for` targets and the like)."""
        if self._assigned is None:
            self._assigned = {}
            for st in walk_statements(self.module):
                for target, value in assignments(st):
                    if isinstance(target, cst.Name):
                        self._assigned.setdefault(target.value, []).append(value)
        return self._assigned.get(name, [])

    def parameter_names(self) -> set:
        """Every name a function or lambda of the file takes as a parameter (bound at each call)."""
        if self._parameters is None:
            self._parameters = {n.name.value for n in walk(self.module) if isinstance(n, cst.Param)}
        return self._parameters

    def host_literal(self, name: str):
        """The literal a module-level name is bound to once, and never rebound (else None)."""
        found = self.bindings_of(name)
        if len(found) == 1 and isinstance(found[0], (cst.Integer, cst.Float, cst.SimpleString)):
            return found[0]
        return None

    def numpy_name(self) -> str:
        return self.module_name("numpy")

    def module_name(self, module: str) -> str:
        """The script's name for a module (an `import <module>` is added when it has none)."""
        for local, dotted in self.names.bindings.items():
            if dotted == module:
                return local
        self.imports.add(module)
        return module

    def absl(self, module: str) -> str:
        """The output's name for `from absl import <module>` (added once; `absl_<module>` if taken)."""
        key = f"absl:{module}"
        if key not in self.emitted:
            local = module if module not in self.namer.taken else self.namer.fresh(f"absl_{module}")
            self.namer.claim(local)
            self.emitted[key] = local
            self.imports.add(f"absl:{module}:{local}")
        return self.emitted[key]

    def preamble_function(self, key: str, make, preferred: str, imports=()) -> str:
        """Definitions written once into the script after its imports (e.g. the MNIST reader); their name."""
        if key not in self.emitted:
            name = self.namer.fresh(preferred)
            self.emitted[key] = name
            self.preamble.extend(make(name))
            self.imports.update(imports)
        return self.emitted[key]

    def helper_call(self, site, func: Func):
        return self.functions.helper_call(site, func)

    def placeholder(self, ph: Placeholder) -> Input:
        if ph.name in self.placeholders:
            self.refuse(f"placeholder name `{ph.name}` is used for two placeholders: the step functions' "
                        "arguments would clash")
        self.placeholders[ph.name] = ph
        return Input(ph)

"""Reaching definitions: which binding of a name reaches a statement, in every scope of a file.

TF 1.x read a plain name once, where it built the graph; a TF 2 step reads it where it is
traced. The two agree only when the same definition of the name reaches both places:

    clip_norm = 1.0
    gvs = [(tf.clip_by_norm(g, clip_norm), v) for g, v in opt.compute_gradients(loss)]  # built: 1.0
    clip_norm = 100.0                                                  # the step, traced later: 100.0

`Definitions(module, lines)` runs the classic forward analysis once per scope (the module,
each function and method body; comprehensions, lambdas and nested defs are scopes of their
own), statement by statement, over the structured control flow: both branches of an `if` join,
a loop's body may run zero or more times (its exit sees every state reached inside it, so a
`break` is covered), a `try` joins everything. A definition is the line of the statement that
binds the name (an assignment or augmented assignment target, a `for` or `with` target, an
import, a `def`, a `class`, an `except ... as`, `del`). `reaching(line, name)` is the set of those
lines that reach the statement at `line`, in the scope holding it. `step_reads.check_step` asks it
for every name a step function reads, when the converters (`steps`) make a step.
Nothing here imports TensorFlow.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from codemods.children import children
from codemods.tf2 import effects, symbols
from codemods.tf2.syntax import BINDING_FIELD

_NESTED = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                     cst.GeneratorExp})


def _bound(node: cst.CSTNode) -> set:
    """The names a statement (header) binds in its own scope."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return {node.name.value}
    if isinstance(node, (cst.For,)):
        return _target_names(node.target)
    found: set = set()
    stack = [node]
    while stack:  # (a walk by the node's fields: a libcst visitor rebuilds every node it visits)
        n = stack.pop()
        kind = type(n)
        if n is not node and kind in _NESTED:
            if kind is cst.FunctionDef or kind is cst.ClassDef:
                found.add(n.name.value)
            continue
        field = _BINDS.get(kind)
        if field is not None and not (kind is cst.AnnAssign and n.value is None):
            found.update(_target_names(getattr(n, field)))
        elif kind is cst.ImportAlias and n.asname is None:
            name = n.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                found.add(name.value)
        stack.extend(children(n))
    return found


def _changed_in_place(line: cst.SimpleStatementLine) -> set:
    """The names a simple statement changes in place: `d.append(x)` (a call of a mutating method as a
    statement of its own), `d[k] = v`, `d[k] += v`, `del d[k]`."""
    out = set()
    for small in line.body:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                    func.attr.value in effects.MUTATORS:
                out.add(func.value.value)
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
            [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign, cst.Del)) else []
        for t in targets:
            for node in ([el.value for el in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]):
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
                    out.add(node.value.value)
    return out


# node class → its field that binds names in a header's scope: a statement's binders, less a nested
# `for` (its own statement), and `del`
_BINDS = {**{k: v for k, v in BINDING_FIELD.items() if k is not cst.For}, cst.Del: "target"}


def _target_names(target) -> set:
    return {n.value for n in target_nodes(target)}


State = dict  # name -> frozenset of definition lines


def _join(*states) -> State:
    out: dict = {}
    for s in states:
        for k, v in s.items():
            out[k] = out.get(k, frozenset()) | v
    return out


@dataclass
class Scope:
    node: Optional[cst.CSTNode]          # the FunctionDef (None: the module)
    before: dict = field(default_factory=dict)   # statement line -> the state reaching it
    local: set = field(default_factory=set)      # names bound in this scope
    first: int = 0
    last: int = 0


class Definitions:
    """Reaching definitions of every scope of `module`; `lines` maps its nodes to their lines."""

    def __init__(self, module: cst.Module, lines, aliases: frozenset = frozenset(), shared: frozenset = frozenset(),
                 is_tf=lambda node: False):
        """`aliases`: module-level names bound once, to a TensorFlow name (`T = tf`), and nowhere
        else (`names.ImportTable.aliases`): like imports, they denote no object of the script.
        `shared`: module-level names of lists, dicts or sets that other names, objects or functions may
        take (`list_growth.shared`): a statement that may change them (`effects.Effects.may_change`) is a
        definition of each of them too. `is_tf(node)`: the node names TensorFlow's."""
        self._line = lines
        self._aliases = aliases
        self._shared = shared
        self._effects = effects.Effects(module, shared, self.module_names, is_tf)
        self.changes: dict = {}  # (line, name) -> how that line changes what the name holds, not binding it
        self.scopes: list = []
        self.end: State = {}
        self._module = module
        self._modules: Optional[set] = None
        self._run(None, list(module.body), {})

    def _run(self, node, body: list, entry: State) -> Scope:
        scope = Scope(node)
        self.scopes.append(scope)
        end, _ = self._block(scope, body, dict(entry))
        if node is None:
            self.end = end
        if node is not None:
            scope.first, scope.last = self._line(node), self._end(node)
        return scope

    def _end(self, node) -> int:
        last = self._line(node)
        for n in _walk(node):
            last = max(last, self._line(n))
        return last

    def _block(self, scope: Scope, body: list, state: State) -> tuple:
        """(the state after the block, the join of every state met inside it)."""
        seen = dict(state)
        for st in body:
            state = self._stmt(scope, st, state)
            seen = _join(seen, state)
        return state, seen

    def module_names(self) -> set:
        """Names of the module scope every definition of which is an import of a module: calling
        `tf.add(...)` changes no object of the script."""
        if self._modules is None:
            defs: dict = {}
            for st in self._module.body:
                if not isinstance(st, cst.SimpleStatementLine):
                    for n in _bound(st):
                        defs.setdefault(n, []).append(None)
                    continue
                for small in st.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        for n in _bound(small):
                            defs.setdefault(n, []).append("import")
                        continue
                    alias = small.value.value if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.value, cst.Name) else None
                    for n in _bound(small):
                        defs.setdefault(n, []).append(alias)
            # only imports, or an alias the translator's names follow (`T = tf`, bound nowhere else)
            modules = {n for n, d in defs.items() if all(k == "import" for k in d)} | set(self._aliases)
            for scope in self.scopes[1:]:  # a function binding the name as its local does not make it a module
                modules -= {n for n in scope.local if n in modules and declares_global(scope.node, n)}
            self._modules = modules
        return self._modules

    def _header_changes(self, st, state: State, line: int) -> State:
        """A compound statement's header that may change a shared container defines it, as a simple
        statement does (`effects`)."""
        header = [st.test] if isinstance(st, (cst.If, cst.While)) else [st.iter] if isinstance(st, cst.For) \
            else [item.item for item in st.items]
        maybe = {n for n in self._shared if n in state}
        if not maybe or not any(self._effects.may_change(h) for h in header):
            return state
        return self._changed(state, set(), maybe, line)

    def _changed(self, state: State, in_place: set, maybe: set, line: int) -> State:
        """`state` with the names a line changes in place, or may change, defined there (said in `changes`)."""
        for n in in_place | maybe:
            self.changes[(line, n)] = f"changes `{n}` in place" if n in in_place else \
                f"may change `{n}` (another name, object or function of the script can hold it)"
        return {**state, **{n: frozenset([line]) for n in in_place | maybe}}

    def outer_reads(self, st: cst.CSTNode) -> Optional[set]:
        """The names `st` (a compound statement of the input) reads that a definition made before it may
        reach: `with open(p) as f: pickle.dump(args, f)` reads no `f` of before. None: `st` is not the input's."""
        first = self._line(st)
        if not first:
            return None
        scope = self.scope_at(first)
        last = self._end(st)
        out: set = set()
        for part, names in statements_reading(st):
            line = self._line(part)
            if line not in scope.before:
                return None
            for n in names:
                defs = self.reaching(scope, line, n)
                if not defs or any(not first <= d <= last for d in defs):
                    out.add(n)
        return out

    def _define(self, scope: Scope, state: State, names: set, line: int) -> State:
        state = dict(state)
        for n in names:
            state[n] = frozenset([line])
            scope.local.add(n)
        return state

    def _stmt(self, scope: Scope, st, state: State) -> State:
        line = self._line(st)
        if line not in scope.before:
            scope.before[line] = dict(state)
        else:
            scope.before[line] = _join(scope.before[line], state)
        if isinstance(st, cst.SimpleStatementLine):
            state = self._define(scope, state, _bound(st), line)
            # a list or dict changed in place (`d.pop()`, `d[1] = w`): what the name holds from here on is a
            # new value, so this is a definition of it too; it does not make the name a local
            in_place = {n for n in _changed_in_place(st) if n in state}
            maybe = {n for n in self._shared if n in state} - in_place \
                if self._shared and self._effects.may_change(st) else set()
            return self._changed(state, in_place, maybe, line)
        if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            if isinstance(st, cst.FunctionDef):
                params = {p.name.value for p in _walk(st.params) if isinstance(p, cst.Param)}
                self._run(st, list(st.body.body), {p: frozenset([self._line(st)]) for p in params})
            else:
                self._block(Scope(st), list(st.body.body), {})
            return self._define(scope, state, {st.name.value}, line)
        if isinstance(st, (cst.If, cst.For, cst.While, cst.With)):  # `if drop():`, `for v in take(d):`, `with f(d):`
            state = self._header_changes(st, state, line)
        if isinstance(st, cst.If):
            then, _ = self._block(scope, list(st.body.body), self._define(scope, state, _bound(st.test), line))
            other = state
            if isinstance(st.orelse, cst.If):
                other = self._stmt(scope, st.orelse, state)
            elif st.orelse is not None:
                other, _ = self._block(scope, list(st.orelse.body.body), state)
            return _join(then, other)
        if isinstance(st, (cst.For, cst.While)):
            head = self._define(scope, state, _bound(st.iter) if isinstance(st, cst.For) else _bound(st.test), line)
            loop = head
            for _ in range(3):  # the body runs again with what it bound: iterate to the fixed point
                entry = self._define(scope, loop, _target_names(st.target), line) if isinstance(st, cst.For) else loop
                _, seen = self._block(scope, list(st.body.body), entry)
                new = _join(head, seen, entry)
                if new == loop:
                    break
                loop = new
            if st.orelse is not None:
                _, more = self._block(scope, list(st.orelse.body.body), loop)
                loop = _join(loop, more)
            return loop
        if isinstance(st, cst.With):
            state = self._define(scope, state, {n for item in st.items for n in _bound(item)}, line)
            return self._block(scope, list(st.body.body), state)[0]
        if isinstance(st, cst.Try):
            after, seen = self._block(scope, list(st.body.body), state)
            seen = _join(seen, state)
            for h in st.handlers:
                out, inner = self._block(scope, list(h.body.body),
                                         self._define(scope, seen, _bound(h.name) if h.name else set(), line))
                seen = _join(seen, inner, out)
            for extra in (st.orelse, st.finalbody):
                if extra is not None:
                    _, inner = self._block(scope, list(extra.body.body), seen)
                    seen = _join(seen, inner)
            return seen
        # anything else (match, async forms): every name it binds may or may not be bound
        return _join(state, self._define(scope, state, _bound(st), line))

    # -- queries ------------------------------------------------------------------------------------
    def scope_at(self, line: int) -> Scope:
        """The innermost function scope whose body holds `line` (the module otherwise)."""
        best = self.scopes[0]
        for s in self.scopes[1:]:
            if s.first < line <= s.last and line in s.before and (best.node is None or s.first > best.first):
                best = s
        return best

    def reaching(self, scope: Scope, line: int, name: str) -> frozenset:
        return scope.before.get(line, {}).get(name, frozenset())


def statements_reading(st):
    """(statement or compound header, the names it reads) under `st`, nested defs left out."""
    if isinstance(st, cst.SimpleStatementLine):
        yield st, read_names(st)
        return
    if isinstance(st, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        yield st, read_names(st)
        return
    header = [getattr(st, f) for f in ("test", "iter") if getattr(st, f, None) is not None]
    if isinstance(st, cst.With):
        header = [item.item for item in st.items]
    yield st, set().union(*(read_names(h) for h in header)) if header else set()
    for f in ("body", "orelse", "finalbody"):
        child = getattr(st, f, None)
        if isinstance(child, cst.If):
            yield from statements_reading(child)
        elif child is not None:
            for inner in child.body.body if isinstance(child, (cst.Else, cst.Finally)) else child.body:
                yield from statements_reading(inner)
    for h in getattr(st, "handlers", ()):
        for inner in h.body.body:
            yield from statements_reading(inner)


def declares_global(node, name: str) -> bool:
    return any(isinstance(n, cst.Global) and any(g.name.value == name for g in n.names) for n in _walk(node))


def _walk(node):
    yield node
    for child in children(node):
        yield from _walk(child)


def read_names(node) -> set:
    """The names read under `node`: `names_of` without the names only bound there (`_, logits = P(z)` reads
    neither `_` nor `logits`; `x += 1` and `x[i] = v` read `x`)."""
    stores = set()
    for n in _walk(node):
        targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else \
            [n.target] if isinstance(n, (cst.For, cst.CompFor, cst.AnnAssign)) else \
            [n.name] if isinstance(n, cst.AsName) else []
        for t in targets:
            stores |= {id(x) for x in target_nodes(t)}
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            if id(n) not in stores:
                out.add(n.value)
        elif isinstance(n, cst.Attribute):
            stack.append(n.value)
        elif isinstance(n, cst.Arg):
            stack.append(n.value)
        else:
            stack.extend(children(n))
    return out


def target_nodes(target) -> list:
    """The Name nodes an assignment or `for` target binds (`a, (b, *c)`; not `x[i]` or `x.a`)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [x for el in target.elements for x in target_nodes(el.value)]
    if isinstance(target, cst.StarredElement):
        return target_nodes(target.value)
    return []


def free_names(definition: cst.FunctionDef) -> set:
    """The names a function reads that it does not bind itself, builtins included: the module may bind
    them (CPython's symbol tables; libcst's ScopeProvider for a text CPython rejects)."""
    module = cst.Module(body=[definition])
    try:
        return symbols.free_names(module.code, module_bound_too=True, builtins_too=True)
    except SyntaxError:
        pass
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    out = set()
    for scope in {s for s in scopes.values() if s is not None}:
        for access in scope.accesses:
            if isinstance(access.node, cst.Name) and all(a.scope is a.scope.globals for a in access.referents):
                out.add(access.node.value)
    return out

"""What a step function reads, against what TF 1.x built its graph with (reaching definitions).

TF 1.x read a plain name once, where it built the graph; a TF 2 step reads it where it is traced.
`check_step` asks `reaching.Definitions`, for every name the step reads (directly, or through the
module's functions it calls), which definitions reach the statements TF 1.x built and the one
where the step is traced. When a later definition reaches the trace:

    clip_norm = 1.0
    gvs = [(tf.clip_by_norm(g, clip_norm), v) for g, v in opt.compute_gradients(loss)]  # built: 1.0
    clip_norm = 100.0                                                  # the step, traced later: 100.0

- if one definition reached what TF 1.x built, binding the name to a literal (`1.0`, `"adam"`,
  `True`), and the step reads the name itself, the step reads that literal instead: the value TF 1.x
  built with, the later binding left to the host code that reads it;
- otherwise the file is refused at the later binding.
"""
from __future__ import annotations

import libcst as cst

from codemods.children import children
from codemods.tf2._base import NameTransformer
from codemods.tf2.reaching import free_names, read_names
from codemods.tf2.syntax import assignments, is_literal, walk_nodes, walk_statements


def check_step(tr, definition: cst.FunctionDef, comps: list, trace_line: int) -> cst.FunctionDef:
    """`definition`, reading the literal TF 1.x built with where a name is bound again before the trace;
    refused where that is not one literal (see the module's docstring)."""
    defs = tr.definitions()
    scope = defs.scope_at(trace_line)
    free = free_names(definition)
    functions = {st.name.value: st for st in tr.module.body if isinstance(st, cst.FunctionDef)}
    reads: dict = {}  # function name -> the names it reads, computed once for all the comps
    literals: dict = {}  # name -> the literal TF 1.x built with
    for comp in comps:
        direct = free & _loaded(comp.body)
        read = through_functions(direct, functions, reads)
        if not read:
            continue
        at = [line for line in comp.at if line in scope.before and defs.scope_at(line) is scope]
        for name in sorted(read):
            at_trace = defs.reaching(scope, trace_line, name)
            if at:
                built = defs.reaching(scope, at[-1], name)
            elif name in direct and name in scope.local and scope.node is not None:
                tr.refuse(f"the step traced at line {trace_line} reads `{name}`, which the function there binds "
                          f"itself, while TF 1.x built line {comp.line} with the module's `{name}`", trace_line)
            else:
                module = defs.scopes[0]
                outer = [line for line in comp.at if line in module.before]
                if not outer:
                    continue
                built = defs.reaching(module, outer[-1], name) | {outer[-1]}
                at_trace = defs.end.get(name, frozenset()).union(
                    *(s.get(name, ()) for line, s in module.before.items() if line > outer[-1]))
            own = {at[-1]} if at else set()  # what the building statement binds itself (the state it makes)
            later = sorted(at_trace - built - own)
            if not later:
                continue
            literal = _literal_at(tr, built - own, name) if name in direct else None
            if literal is None or name in literals and not literals[name].deep_equals(literal):
                changed = sorted(line for line in built - own if (line, name) in defs.changes)
                if changed:  # TF 1.x built after a change (in a loop): what it read is not what the trace reads
                    later = changed
                change = defs.changes.get((later[0], name))
                if change:  # not a binding: `d.pop()`, or a call that may reach a list another name holds
                    tr.refuse(f"line {later[0]} {change}, and TF 1.x built the graph that reads it at line "
                              f"{comp.line}: TF 1.x kept what it held there, the TF 2 step (traced at line "
                              f"{trace_line}) would read it as it is then", later[0])
                tr.refuse(f"`{name}` is bound again at line {later[0]} after TF 1.x built the graph that reads it "
                          f"(line {comp.line}): TF 1.x kept the value it had there, the TF 2 step (traced at line "
                          f"{trace_line}) would read the later binding", later[0])
            literals[name] = literal
    if not literals:
        return definition
    for name, literal in sorted(literals.items()):
        tr.note(f"`{name}` read in the step as {tr.code(literal)}, the value TF 1.x built the graph with (it is "
                "bound again before the step is traced)")
    return definition.visit(_Literals(literals))


def rebound_between(tr, node, built: int, at: tuple, line: int):
    """(name, line) of a name `node` reads (directly, or through the module's functions it calls) that another
    definition reaches at the statement at `line` than reached the statement at `built`, where TF 1.x read
    it, with the line of that other definition; None when every name reads alike there. When `built` is in
    a function read from the statements `at` (`Comp.at`), a global is compared at the last of those in the
    scope of `line`; the function's own names are its own (bound there, not by the script later)."""
    defs = tr.definitions()
    scope = defs.scope_at(line)
    inner = defs.scope_at(built)
    if inner is not scope:
        outer = [a for a in at if a in scope.before and defs.scope_at(a) is scope]
        if not outer:
            return None
        built = outer[-1]
    functions = {st.name.value: st for st in tr.module.body if isinstance(st, cst.FunctionDef)}
    for name in sorted(through_functions(read_names(node), functions, {})):
        if inner is not scope and name in inner.local:
            continue
        then, now = defs.reaching(scope, built, name), defs.reaching(scope, line, name)
        if now != then:
            return name, min(now - then, default=line)
    return None


def check_placeholder_shape(tr, placeholder, line: int, what: str) -> None:
    """Refuse when a name the shape of `placeholder` reads is bound again between where TF 1.x made the
    placeholder and the statement at `line`, where the TF 2 program evaluates that shape (`what`)."""
    if placeholder.shape is None or placeholder.spec is not None:
        return
    changed = rebound_between(tr, placeholder.shape, placeholder.line, placeholder.at, line)
    if changed is not None:
        name, later = changed
        tr.refuse(f"`{name}` is bound again at line {later} after TF 1.x made placeholder `{placeholder.name}` with "
                  f"the shape it read (line {placeholder.line}): the TF 2 program reads that shape later, in "
                  f"{what} (line {line}), and would get the later binding's", later)


def check_dims(tr, dims: list, line: int, what: str) -> None:
    """`check_placeholder_shape` for the placeholder each dimension expression of `dims` comes from (a
    dimension written as an expression of the placeholder's shape, `[None, X.shape[1]]`); for a dimension of
    another origin, each name in it from where TF 1.x read it."""
    for dim in dims:
        if dim is None or isinstance(dim, cst.Integer):
            continue
        owners = [p for p in tr.placeholders.values() if p.dims is not None and any(d is dim for d in p.dims)]
        for placeholder in owners:
            check_placeholder_shape(tr, placeholder, line, what)
        if owners:
            continue
        # a dimension another op's arguments gave (`tf.reshape(x, [-1, n])`): each name in it against the definitions
        # that reached where TF 1.x read it (`Program.mark_dims`)
        for node in (n for n in walk_nodes(dim) if isinstance(n, cst.Name)):
            origin = tr.dim_origins.get(id(node))
            if origin is None or origin[0] is not node:
                continue
            changed = rebound_between(tr, node, origin[1], origin[2], line)
            if changed is not None:
                name, later = changed
                tr.refuse(f"`{name}` is bound again at line {later} after TF 1.x read it at line {origin[1]} for the "
                          f"width `{tr.code(dim)}`: the TF 2 program reads it later, in {what} (line {line}), and "
                          "would get the later binding's", later)


def read_alike(tr, nodes: list, earlier: int, line: int) -> bool:
    """Whether every name `nodes` read (directly, or through the module's functions they call) has the same
    definitions reaching the statement at `earlier` as the one at `line`: a fetch expression TF 1.x built
    at `line` reads the same there (`steps` moving a step's trace earlier)."""
    defs = tr.definitions()
    scope = defs.scope_at(line)
    if defs.scope_at(earlier) is not scope:
        return False
    functions = {st.name.value: st for st in tr.module.body if isinstance(st, cst.FunctionDef)}
    read = through_functions(_loaded(nodes), functions, {})
    return all(defs.reaching(scope, earlier, name) == defs.reaching(scope, line, name) for name in read)


def literal_reaching(tr, name: str, line: int):
    """The literal of the one definition of `name` that reaches the statement at `line` (`clip = 1.0` alone
    on its line), else None: the value TF 1.x built with there, whatever binds the name later. A helper's
    local read in place goes by its fresh name: the input's name is looked up, at the input's line."""
    name = tr.inlined_names.get(name, name)
    defs = tr.definitions()
    scope = defs.scope_at(line)
    module = defs.scopes[0]
    enclosing = [s for s in defs.scopes[1:] if s.first < line <= s.last]
    if scope is not module and not any(name in s.local for s in enclosing) and tr.reading \
            and defs.scope_at(tr.reading[0]) is module:
        # a global of the functions being read (a method called from the module's statement at reading[0]):
        # the module's definition that reaches that statement
        scope, line = module, tr.reading[0]
    return _literal_at(tr, defs.reaching(scope, line, name), name)


def _literal_at(tr, lines: frozenset, name: str):
    """The literal `name` is bound to by the one statement at `lines` (`name = 1.0` alone on its line), else None."""
    if len(lines) != 1:
        return None
    (line,) = lines
    for st in walk_statements(tr.module):
        if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and tr.line_of(st) == line:
            found = [value for target, value in assignments(st) if isinstance(target, cst.Name)
                     and target.value == name]
            small = st.body[0]
            if len(found) == 1 and isinstance(small, cst.Assign) and len(small.targets) == 1 and is_literal(found[0]):
                return found[0]
    return None


class _Literals(NameTransformer):
    """Reads of the names in `literals` → the literals (attribute members and keywords are not reads)."""

    def __init__(self, literals: dict):
        super().__init__()
        self.literals = literals

    def leave_Name(self, original, updated):
        literal = self.literals.get(original.value)
        return literal if literal is not None and not self.skipped(original) else updated


def through_functions(names: set, functions: dict, reads: dict) -> set:
    """`names` and, transitively, the globals the module's functions among them read (`reads` caches
    each function's): a step calling `inference(x)` reads `inference`'s `keep_prob` when traced."""
    out, stack, seen = set(names), [n for n in names if n in functions], set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in reads:
            reads[name] = free_names(functions[name])
        for read in reads[name]:
            out.add(read)
            if read in functions:
                stack.append(read)
    return out


def _loaded(body: list) -> set:
    out = set()
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
        stack.extend(children(n))
    return out

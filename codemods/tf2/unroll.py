"""A build-time loop that makes state, over values fixed in the file: read as the passes TF 1.x ran.

    hidden_units = [12, 8]
    for units in hidden_units:
        h = tf.layers.dense(h, units, activation=tf.nn.relu)

TF 1.x ran the loop once, while it built the graph: two dense layers, made in that order. A TF 2
step must not make state, so a loop that makes it cannot move into a step as it is. When the
passes are known from the file alone, the loop is read as the passes themselves, each one the
target bound to its value and then the body, which is exactly what Python ran:

    units = 12
    h = tf.layers.dense(h, units, activation=tf.nn.relu)
    units = 8
    h = tf.layers.dense(h, units, activation=tf.nn.relu)

This is a rewrite of the program before anything reads it (`module`): the analyses (reaching
definitions, what a step reads) then answer for the passes, so a name bound again in the next pass
(`W = tf.Variable(...)` twice) is seen as the rebinding it is. The passes are known when the loop
iterates over:
- a list or tuple literal of plain constants, or of names the file binds once to a number;
- `range(...)` of such numbers, `len(...)` of such a list, and `+ - *` of them;
- a name the file binds once, to such a list or tuple, and reads nowhere but as an iterable, an
  indexed value or an argument of `len`, `enumerate` or `zip` (nothing can change it in between);
- `enumerate(...)` or `zip(...)` of those.

The same rewrite reads a graph helper called inside an expression as its own statement first
(`hoist`): `module` returns those calls too, so that every line said is still the input's.

Anything else (a loop with `break`, `continue`, `else`, `return` or `yield`; more than
MAX_PASSES passes; a target that is not names) keeps today's reading: a refusal that says why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst

from codemods.tf2 import constants, fixed_values, hoist, named_lambdas, symbols
from codemods.tf2.lines import start_lines
from codemods.tf2.syntax import bound_names, closed_under_calls, names_only, plain_assign, replace_names, walk_nodes



@dataclass
class _File:
    """What the rewrite asks of the file: its values fixed in it (`fixed_values`), the names of its
    functions and classes, the lines of its nodes, which TensorFlow calls make state."""
    fixed: fixed_values.Fixed
    defined: set
    positions: dict
    qualified: Callable
    creators: frozenset
    graph_helpers: frozenset = frozenset()         # functions whose calls in expressions are hoisted (`hoist`)
    unrolled: list = field(default_factory=list)  # (line, passes) of the loops read as their passes
    hoisted: list = field(default_factory=list)   # (line, helper) of the helper calls read as statements
    closures: Optional[set] = None                 # names read inside a function, lambda or class, or global
    taken: set = field(default_factory=set)        # every name of the file, and those made here
    namer: Optional[Callable] = None               # the fresh names, when the reader of the statements makes them

    def closure_names(self) -> set:
        if self.closures is None:
            self.closures = set()
            for n in walk_nodes(self.fixed.module):
                if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    self.closures |= _names_in(n.body if not isinstance(n, cst.Lambda) else n.body)
                elif isinstance(n, (cst.Global, cst.Nonlocal)):
                    self.closures |= {a.name.value for a in n.names}
        return self.closures

    def fresh(self, name: str) -> str:
        """A name for one pass's binding of `name` that nothing in the file uses."""
        if self.namer is not None:
            return self.namer(name)
        if not self.taken:
            self.taken = _names_in(self.fixed.module) | set(self.fixed.sites)
        k = 1
        while f"{name}_{k}" in self.taken:
            k += 1
        self.taken.add(f"{name}_{k}")
        return f"{name}_{k}"


def module(tree: cst.Module, source: str, names, creators) -> tuple:
    """(`tree` with every loop that makes state over values fixed in the file read as its passes, every
    graph helper called inside an expression read first (`hoist`) and every lambda over TensorFlow bound to
    a name read as its `def` (`named_lambdas`), a map from the lines of the new program to the lines of
    `tree`, [(line, passes)] of those loops, [(line, helper)] of those calls, [(line, name)] of those
    lambdas), or (`tree`, None, [], [], []) when there is none. `names`: the file's ImportTable (the lines of `tree`'s nodes); `creators`: the canonical names
    of the TensorFlow calls that make state. The new program is read as the file itself (its own lines,
    each statement one line of its own, as the analyses need); what is said about a line is said about
    the line of `tree` it comes from."""
    tree, lambdas = named_lambdas.as_defs(tree, names.qualified)
    lambdas = sorted((names.positions.get(st, 0), name) for st, name in lambdas)
    sites = names.sites if names.sites is not None else symbols.binding_sites(source)
    graph_helpers = hoist.helpers(tree, names.qualified, sites)
    if not lambdas and not graph_helpers and not any(isinstance(n, cst.For) for n in walk_nodes(tree)):
        return tree, None, [], [], []
    values = fixed_values.first_values(tree)
    defined = _state_making(tree, names.qualified, frozenset(creators))
    file = _File(fixed_values.Fixed(tree, sites, values), defined, dict(names.positions),
                 names.qualified, frozenset(creators), graph_helpers=graph_helpers)
    body, changed = _block(file, tree.body)
    if not changed and not lambdas:
        return tree, None, [], [], []
    new = tree.with_changes(body=body)
    line_map: dict = {}
    for node, start in start_lines(new).items():
        line = file.positions.get(node)
        if line:
            line_map.setdefault(start, line)
    last, filled = 0, {}
    for line in range(1, new.code.count("\n") + 2):
        last = line_map.get(line, last)
        filled[line] = last
    return new, filled, sorted(file.unrolled), sorted(file.hoisted), lambdas


@dataclass(frozen=True)
class ProgramFacts:
    """What `inlined` reads of the program, the same at every call (`program_facts`)."""
    sites: dict          # each name's binding sites
    numbers: dict        # the numbers names are first bound to
    defined: frozenset   # its functions and classes that make state


def program_facts(program: cst.Module, qualified, creators) -> ProgramFacts:
    values = fixed_values.first_values(program)
    return ProgramFacts(symbols.binding_sites(program.code),
                        {n: v for n, v in values.items() if isinstance(v, (cst.Integer, cst.Float))},
                        _state_making(program, qualified, frozenset(creators)))


def inlined(statements: list, facts: ProgramFacts, qualified, creators, lines: dict, fresh: Callable) -> tuple:
    """(`statements`, a helper's body read at one call (`inline.inline_call`), with every loop that makes
    state over values they fix read as its passes; [(line, passes)]). A list the call gives (or the
    default) is bound once in them, to a fresh name; the program's numbers bound once count too, its lists
    do not (another name may hold them). `lines`: node → line; `fresh`: a name the program does not use."""
    if not any(isinstance(n, cst.For) for st in statements for n in walk_nodes(st)):
        return statements, []
    body = cst.Module(body=statements)
    sites, values = symbols.binding_sites(body.code), fixed_values.first_values(body)
    for name, found in facts.sites.items():
        if name not in sites:
            sites[name] = found
            if name in facts.numbers:
                values[name] = facts.numbers[name]
    file = _File(fixed_values.Fixed(body, sites, values), facts.defined, lines, qualified, frozenset(creators),
                 namer=fresh)
    new, changed = _block(file, statements)
    return (new, sorted(file.unrolled)) if changed else (statements, [])


def _block(file: _File, stmts) -> tuple:
    """(the statements of a block with its loops read as their passes, whether anything changed). Nodes
    not changed stay the same objects: their lines are still known."""
    out, changed = [], False
    for st in stmts:
        passes = _statements(file, st, st) if isinstance(st, cst.For) else None
        if passes is not None:
            inner, _ = _block(file, passes)  # a loop inside a pass: read as its passes too
            out.extend(inner)
            changed = True
            continue
        parts = hoist.split(st, file.graph_helpers, file.qualified, file.creators, file.fresh)
        if parts is not None:  # a helper call inside an expression: its own statement first
            line = file.positions.get(st, 0)
            for part in parts:
                _place(file, part, line)
            file.hoisted.extend((line, emit_name) for emit_name in _called(parts[:-1]))
            out.extend(parts)
            changed = True
            continue
        new = _inner_blocks(file, st)
        changed |= new is not st
        out.append(new)
    return out, changed


_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def _inner_blocks(file: _File, node):
    """`node` with the blocks under it read by `_block` (the same object when nothing changed)."""
    changes = {}
    for name in _BLOCKS:
        child = getattr(node, name, None)
        if child is None:
            continue
        if isinstance(child, (list, tuple)):  # a try's handlers
            new = [_inner_blocks(file, h) for h in child]
            if any(a is not b for a, b in zip(new, child)):
                changes[name] = new
        elif isinstance(child, cst.IndentedBlock):
            body, changed = _block(file, child.body)
            if changed:
                changes[name] = child.with_changes(body=body)
        elif isinstance(child, (cst.If, cst.Else, cst.Finally)):
            new = _inner_blocks(file, child)
            if new is not child:
                changes[name] = new
    if not changes:
        return node
    new = node.with_changes(**changes)
    if node in file.positions:
        file.positions[new] = file.positions[node]
    return new


def _statements(file: _File, original: cst.For, st: cst.For) -> Optional[list]:
    """The passes of `st` as statements, when it makes state (a call of `creators`, or of a function
    or class of the script) over values fixed in the file; else None."""
    if st.orelse is not None or st.asynchronous is not None or not names_only(st.target) or \
            not isinstance(st.body, cst.IndentedBlock):
        return None
    if any(isinstance(n, (cst.Break, cst.Continue, cst.Return, cst.Yield, cst.Await)) for n in walk_nodes(st.body)):
        return None
    if not _makes_state(file, st.body):
        return None
    values = fixed_values.passes(file.fixed, st.iter)
    if values is None or len(values) > fixed_values.MAX_PASSES:
        return None
    line = file.positions.get(original, 0)
    targets = _target_names(st.target)
    constant = not targets & _bound_in(st.body) and all(fixed_values.constant(file.fixed, v) for v in values)
    own = _own_names(file, st) - targets
    current = {name: name for name in own}  # the spelling of each pass's binding, read until the next one
    out: list = []
    for k, value in enumerate(values):
        bind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(st.target.deep_clone())], value.deep_clone())])
        _place(file, bind, line)
        out.append(bind)
        # names the body never binds, each pass a constant: read as that constant (`name='w%d' % i` is 'w0')
        mapping = constants.pairs(st.target, value) if constant else {}
        last = k == len(values) - 1
        for inner in st.body.body:
            copy = inner.deep_clone()  # each pass its own nodes: the reader keys answers by node
            _copy_lines(file, inner, copy)
            if mapping:
                copy = copy.visit(constants.Fold(mapping))
            if own:
                copy = _renamed(file, copy, current, own, last)
            if mapping or own:
                _place(file, copy, file.positions.get(inner, line))
            out.extend(_decided(file, copy, file.positions.get(inner, line)))
    if out:
        out[0] = out[0].with_changes(leading_lines=st.leading_lines)
        _place(file, out[0], line)
    file.unrolled.append((line, len(values)))
    return out


def _called(statements) -> list:
    """The helpers the hoisted `name = helper(...)` statements call."""
    return [st.body[0].value.func.value for st in statements]


def _straight(statements) -> list:
    """The statements a pass runs one after the other: the body's, and those of its `with` blocks."""
    out = []
    for st in statements:
        if isinstance(st, cst.With) and isinstance(st.body, cst.IndentedBlock):
            out.extend(_straight(st.body.body))
        else:
            out.append(st)
    return out


def _own_names(file: _File, st: cst.For) -> set:
    """Names each pass binds for itself: bound in the body only by plain assignments that run one after
    the other (directly in it, or in its `with` blocks), and read by no function, lambda or class of the
    file (nor declared global). Each pass but the last binds its own spelling of them (`W_1`, `W_2`,
    then `W`), so that what a pass built reads that pass's binding, as TF 1.x's graph did, and the code
    after the loop reads the last one."""
    direct, other = set(), set()
    for inner in _straight(st.body.body):
        if plain_assign(inner):
            direct |= {n for t in inner.body[0].targets for n in _names_in(t.target)}
            other |= _bound_in(inner.body[0].value)  # a walrus or a comprehension inside the value
        else:
            other |= _bound_in(inner)
    for inner in st.body.body:  # the `with` items' own `as` names
        if isinstance(inner, cst.With):
            other |= {n for item in inner.items if item.asname is not None for n in _names_in(item.asname.name)}
    return {name for name in direct - other if name not in file.closure_names()}


def _renamed(file: _File, statement, current: dict, own: set, last: bool):
    """`statement` of one pass with the pass's names spelt as `current` says; a plain assignment of them
    first reads the spellings in force, then binds the pass's own (the original one in the last pass)."""
    def spelled(node):
        return replace_names(node, {k: cst.Name(v) for k, v in current.items() if k != v})
    if plain_assign(statement):
        small = statement.body[0]
        value = spelled(small.value)
        for name in {n for t in small.targets for n in _names_in(t.target)} & own:
            current[name] = name if last else file.fresh(name)
        targets = [t.with_changes(target=spelled(t.target)) for t in small.targets]
        return statement.with_changes(body=[small.with_changes(targets=targets, value=value)])
    if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock):
        items = [spelled(item) for item in statement.items]
        body = [_renamed(file, inner, current, own, last) for inner in statement.body.body]
        return statement.with_changes(items=items, body=statement.body.with_changes(body=body))
    return spelled(statement)


def _decided(file: _File, statement, line: int) -> list:
    """A pass's `if` whose test compares constants (`if 0 < 2 - 1:` once the pass's names are its
    values): the branch Python took, else the statement itself."""
    if not isinstance(statement, cst.If):
        return [statement]
    taken = constants.decided(statement.test)
    if taken is None:
        return [statement]
    branch = statement.body if taken else statement.orelse
    if branch is None:
        return []
    if isinstance(branch, cst.If):  # elif
        return _decided(file, branch, line)
    if not isinstance(branch.body, cst.IndentedBlock) and not isinstance(branch, cst.IndentedBlock):
        return [statement]
    body = branch.body if isinstance(branch, cst.IndentedBlock) else branch.body.body
    out = []
    for st in body:
        _place(file, st, line)
        out.extend(_decided(file, st, line))
    return out


def _place(file: _File, node, line: int) -> None:
    """`node` and every node under it without a line of its own get `line`."""
    for n in walk_nodes(node):
        file.positions.setdefault(n, line)
    file.positions[node] = line


def _copy_lines(file: _File, original, copy) -> None:
    """The copy's nodes get the lines of the nodes they copy (the same tree, walked in the same order)."""
    for a, b in zip(walk_nodes(original), walk_nodes(copy)):
        if a in file.positions:
            file.positions[b] = file.positions[a]


def _target_names(target) -> set:
    if isinstance(target, cst.Name):
        return {target.value}
    return {n for e in target.elements for n in _target_names(e.value)}


def _bound_in(body) -> set:
    """Every name something in `body` binds: assignments, loop and `with` targets, parameters, comprehensions."""
    out = bound_names(body)
    for n in walk_nodes(body):
        if isinstance(n, cst.Param):
            out.add(n.name.value)
        elif isinstance(n, cst.CompFor):
            out |= _names_in(n.target)
        elif isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            out.add(n.name.value)
    return out


def _names_in(node) -> set:
    return {n.value for n in walk_nodes(node) if isinstance(n, cst.Name)}


def _makes_state(file: _File, body) -> bool:
    return _calls_into(body, file.qualified, file.creators, file.defined)


def _calls_into(body, qualified, creators, defined) -> bool:
    """Whether `body` calls a TensorFlow call that makes state, or a function or class of `defined`."""
    for n in walk_nodes(body):
        if isinstance(n, cst.Call):
            q = qualified(n.func)
            if q is not None and q in creators:
                return True
            if isinstance(n.func, cst.Name) and n.func.value in defined:
                return True
    return False


def _state_making(tree: cst.Module, qualified, creators) -> frozenset:
    """The module's functions and classes that make state when called: those whose body calls a
    TensorFlow call that makes state, or another of them (to a fixed point). A function that only runs
    the session (`run_epoch(sess, ...)`) is not one: a loop calling it is not read as its passes."""
    defs = {st.name.value: st for st in tree.body if isinstance(st, (cst.FunctionDef, cst.ClassDef))}
    return closed_under_calls(defs, lambda body, found: _calls_into(body, qualified, creators, found))

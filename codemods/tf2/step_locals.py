"""Names a step function reads from the script and then binds itself.

TF 1.x's graph code rebinds the script's names as it goes: after `grads = tf.gradients(loss, tvars)`,
`grads, tvars = [g for g, _ in pairs], [v for _, v in pairs]` makes `tvars` the filtered list, and the
reads before that line saw the first one. The same statements in a step function make `tvars` a local
of the whole function (Python decides that per function), unbound where it is first read.

`read_then_bound` finds such a name. `split` makes its two meanings two names where that is exact:
the reads up to the step's first binding of it keep the script's name; that binding, every later one
and every later read use a fresh local. It is exact when each binding is a plain assignment that runs
once, in order (in the function's body or in a `with` block of it: not under an `if`, a loop or a
`try`), and the name is not read by a function or lambda of the step nor bound by a comprehension of
it (those read it when they run, or have a scope of their own). Otherwise `split` answers None and the
translator refuses the step.
"""
from __future__ import annotations

import ast
import symtable
import textwrap
from typing import Iterator, Optional

import libcst as cst

from codemods.tf2 import emit


def _source(definition: cst.FunctionDef) -> str:
    return textwrap.dedent(emit.code(definition.with_changes(decorators=[], leading_lines=[])))


def read_then_bound(definition: cst.FunctionDef) -> Optional[str]:
    """A name the step binds that it reads before (in statement order): Python makes every name a
    function binds its local, so the first read raises UnboundLocalError when the step is traced."""
    source = _source(definition)
    function = ast.parse(source).body[0]
    table = symtable.symtable(source, "<step>", "exec").get_children()[0]
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() and s.is_local()}
    seen = {a.arg for a in function.args.args}

    def statements(body):
        for st in body:
            if isinstance(st, (ast.With, ast.For, ast.If, ast.While)):
                header = [*(i.context_expr for i in getattr(st, "items", [])), getattr(st, "iter", None),
                          getattr(st, "test", None)]
                targets = [*(i.optional_vars for i in getattr(st, "items", [])), getattr(st, "target", None)]
                yield [h for h in header if h is not None], [t for t in targets if t is not None]
                yield from statements(st.body)
                yield from statements(st.orelse if hasattr(st, "orelse") else [])
            else:
                yield [st], []

    def loads(node, hidden=frozenset()):
        """Names read, but not a comprehension's or a lambda's own (their scopes bind those)."""
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            hidden = hidden | {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            hidden = hidden | {a.arg for a in node.args.args}
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in hidden:
            yield node.id
        for child in ast.iter_child_nodes(node):
            yield from loads(child, hidden)

    for reads, binds in statements(function.body):
        for node in reads + binds:
            for name in loads(node):
                if name in bound and name not in seen:
                    return name
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    seen.add(n.id)
    return None


def _assignments_in_order(body: list) -> Iterator[ast.Assign]:
    """The assignments that run once each, in order: the body's own and those of its `with` blocks."""
    for st in body:
        if isinstance(st, ast.Assign):
            yield st
        elif isinstance(st, ast.With):
            yield from _assignments_in_order(st.body)


def _targets(assign: ast.Assign) -> Iterator[ast.Name]:
    """The names an assignment binds (through tuple and list targets and starred ones)."""
    stack = list(assign.targets)
    while stack:
        t = stack.pop()
        if isinstance(t, ast.Name):
            yield t
        elif isinstance(t, (ast.Tuple, ast.List)):
            stack.extend(t.elts)
        elif isinstance(t, ast.Starred):
            stack.append(t.value)


def _other_uses(function: ast.FunctionDef, name: str, bindings: set) -> bool:
    """Does the step use `name` other than by reads in its own scope and the `bindings`?"""
    for node in ast.walk(function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) \
                and node is not function:
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
                return True
        elif isinstance(node, ast.comprehension):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.target)):
                return True
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) \
                and id(node) not in bindings:
            return True  # bound by a loop, `with ... as`, `+=`, `:=`, `del`, or under an `if`
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
        elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
        elif isinstance(node, ast.ExceptHandler) and node.name == name:
            return True
        elif isinstance(node, ast.arg) and node.arg == name:
            return True
    return False


def split(definition: cst.FunctionDef, name: str, local: str) -> Optional[cst.FunctionDef]:
    """The step with `name`'s bindings, and its reads after the first of them, renamed `local`; None
    where that would not be exact (see the module's doc)."""
    source = _source(definition)
    function = ast.parse(source).body[0]
    assignments = [a for a in _assignments_in_order(function.body) if any(t.id == name for t in _targets(a))]
    if not assignments:
        return None
    bindings = {id(t): t for a in assignments for t in _targets(a) if t.id == name}
    if _other_uses(function, name, set(bindings)):
        return None
    first = assignments[0]
    after = (first.end_lineno, first.end_col_offset)
    renamed = list(bindings.values()) + [
        n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        and (n.lineno, n.col_offset) >= after]
    lines = source.splitlines(keepends=True)
    for n in sorted(renamed, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        line = lines[n.lineno - 1]
        # ast's columns count UTF-8 bytes
        raw = line.encode("utf-8")
        lines[n.lineno - 1] = (raw[:n.col_offset] + local.encode("utf-8") + raw[n.end_col_offset:]).decode("utf-8")
    new = cst.parse_statement("".join(lines))
    return new.with_changes(decorators=definition.decorators, leading_lines=definition.leading_lines)

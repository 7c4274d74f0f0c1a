"""Which names a module binds and reads, from CPython's own symbol tables (`symtable`, `ast`).

The translator asks three questions of every file it reads and of every program it writes:
which names are read where nothing binds them (`unbound`), where each name is bound
(`binding_sites`: an import or anything else), and which names a function reads from outside
itself (`free_names`). CPython answers them as its compiler does, from the source text, in a
fraction of the time libcst's ScopeProvider takes for the same file (measured in
benchmarks/RESULTS.md); the answers are the same ones (tests/test_tf2_symbols.py holds them
equal to the ScopeProvider's on every fixture). Text CPython rejects but libcst parses
(`nonlocal` with nothing to refer to in a function cut out of its module) raises SyntaxError:
callers fall back to the ScopeProvider.

Scoping rules are CPython's: a function's name is global when the function neither binds it nor
gets it from an enclosing function; a name declared `global` and assigned in a function is
bound at module level; comprehensions and lambdas are functions; builtins are bound.
"""
from __future__ import annotations

import ast
import builtins
import symtable
from dataclasses import dataclass
from functools import lru_cache

BUILTINS = frozenset(dir(builtins))


@lru_cache(maxsize=4)
def tree(source: str) -> ast.Module:
    """`ast.parse(source)`, once for the analyses that read the same text (the translator's binding
    sites, callees and copied definitions all read the file read). Readers never change the tree."""
    return ast.parse(source)


@dataclass(frozen=True)
class Site:
    """A place that binds a name: its line, whether it is an import, and what an import binds the
    name to (`import a.b` binds `a`: "a"; `import a.b as c`: "a.b"; `from m import x`: "m.x")."""
    line: int
    is_import: bool
    imported: str = ""


def _tables(table: symtable.SymbolTable):
    yield table
    for child in table.get_children():
        yield from _tables(child)


def _bound_at_module(top: symtable.SymbolTable) -> set:
    bound = {s.get_name() for s in top.get_symbols() if s.is_local()}
    for table in _tables(top):
        if table is not top:
            bound |= {s.get_name() for s in table.get_symbols() if s.is_declared_global() and s.is_assigned()}
    return bound


def _global_reads(top: symtable.SymbolTable) -> set:
    """Names read somewhere in `top` that resolve to its module scope (or to the builtins)."""
    out = set()
    for table in _tables(top):
        for s in table.get_symbols():
            if s.is_referenced() and (table is top or s.is_global()):
                out.add(s.get_name())
    return out


def unbound(source: str) -> frozenset:
    """Names the module reads where nothing binds them (neither the module, nor an enclosing
    function, nor the builtins)."""
    top = symtable.symtable(source, "<module>", "exec")
    return frozenset(_global_reads(top) - _bound_at_module(top) - BUILTINS)


def loaded(source: str) -> frozenset:
    """Every name the module reads somewhere (a load of it, in any scope)."""
    return frozenset(n.id for n in ast.walk(tree(source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))


def first_read(source: str, name: str) -> int:
    """The first line that reads `name` (0 if none)."""
    lines = [n.lineno for n in ast.walk(tree(source))
             if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return min(lines) if lines else 0


def free_names(function_source: str, module_bound_too: bool = False, builtins_too: bool = False) -> set:
    """The names a function (given as the text of its definition alone: decorators, defaults and
    annotations included) reads that neither it nor a function inside it binds; builtins left out.
    `module_bound_too`: also the names that resolve to the module level the definition makes: its
    own name, and names it declares `global` and assigns. `builtins_too`: builtins kept (a module
    that binds `abs` or `sum` makes them its globals)."""
    top = symtable.symtable(function_source, "<function>", "exec")
    reads = _global_reads(top)
    if builtins_too:
        return reads
    bound = _bound_at_module(top)
    return reads - (BUILTINS - bound) if module_bound_too else reads - bound - BUILTINS


def binding_sites(source: str) -> dict:
    """name → the `Site`s that bind it, in every scope of the module (assignment and `for`/`with`/
    `except`/walrus targets, parameters, `def`, `class`, imports, match captures)."""
    out: dict = {}

    def add(name, line, imported=""):
        out.setdefault(name, []).append(Site(line, bool(imported), imported))
    for node in ast.walk(tree(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            add(node.id, node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, node.decorator_list[0].lineno if node.decorator_list else node.lineno)
        elif isinstance(node, ast.arg):
            add(node.arg, node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name if alias.asname else alias.name.split(".")[0]
                add(alias.asname or target, node.lineno, target)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    add(alias.asname or alias.name, node.lineno, "." * node.level + ".".join(filter(None, (node.module, alias.name))))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, node.lineno)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            add(node.name, node.lineno)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            add(node.rest, node.lineno)
    return out

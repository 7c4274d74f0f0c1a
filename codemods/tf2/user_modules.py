"""The user's own modules as `imported_functions` needs them, read with `ast` (never imported).

For a module: what each name is bound to at its top level, what its imports bind (as absolute
dotted targets), and whether importing it is *inert*: it runs nothing but imports (of TensorFlow, of
packages known to stay out of it, or of user modules as inert), `def`s and `class`es without
decorators that run code, literal constants and an `if __name__ == "__main__":` block. For the
script: the names its module level binds, with what each import binds them to.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Optional

from codemods.tf2.module_kinds import TF_ROOTS, host_package, import_targets, main_guard

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.GeneratorExp, ast.ListComp,
          ast.SetComp, ast.DictComp)


@dataclass
class Source:
    """A user module: its text, its top-level bindings, its imports, and why importing it is not inert."""
    dotted: str
    display: str
    lines: list
    bindings: dict = field(default_factory=dict)    # name -> [top-level statements binding it]
    imports: dict = field(default_factory=dict)     # name -> the absolute dotted target of its one import
    declared_global: set = field(default_factory=set)  # names a function declares `global` or `nonlocal`
    why_not_inert: str = ""

    def definition(self, name: str):
        """The one `def` or `class` statement that binds `name`, else None."""
        sts = self.bindings.get(name, [])
        return sts[0] if len(sts) == 1 and isinstance(sts[0], (ast.FunctionDef, ast.ClassDef)) else None

    def constant(self, name: str):
        """The one `name = <immutable literal>` statement that binds `name`, else None."""
        sts = self.bindings.get(name, [])
        return sts[0] if len(sts) == 1 and literal(sts[0], immutable=True) else None

    def star_names(self) -> set:
        """The names `from m import *` binds: `__all__` when the module sets it to a literal, else its public names."""
        for st in self.bindings.get("__all__", []):
            if isinstance(st, ast.Assign):
                try:
                    return set(ast.literal_eval(st.value))
                except (ValueError, TypeError, SyntaxError):
                    return set()
        return {n for n in self.bindings if not n.startswith("_")}

    def segment(self, node) -> list:
        """[(line, text)] of a top-level statement, its decorators included."""
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return list(enumerate(self.lines[first - 1:node.end_lineno], first))


def read(text: str, dotted: str, display: str, is_package: bool, inert: Callable[[str], str]) -> Optional[Source]:
    """`text`, the module `dotted`, read; `inert(target)` says why importing a user module is not inert ("" if
    it is). None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    package = dotted if is_package else dotted.rpartition(".")[0]
    src = Source(dotted, display, text.splitlines())
    for n in ast.walk(tree):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            src.declared_global |= set(n.names)
    for st in tree.body:
        why = _inert_statement(st, package, inert)
        if why and not src.why_not_inert:
            src.why_not_inert = f"runs line {st.lineno} ({why})"
        for name in _top_bound(st):
            src.bindings.setdefault(name, []).append(st)
    for st in tree.body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            for local, target in import_targets(st, package):
                if local != "*" and len(src.bindings.get(local, [])) == 1:
                    src.imports[local] = target
    return src


def host_or_tf(dotted: str) -> bool:
    top = dotted.split(".")[0]
    return top in TF_ROOTS or host_package(top) or top == "__future__"


def _inert_statement(st, package: str, inert: Callable[[str], str]) -> str:
    """"" when running the top-level statement `st` at import only binds names, else what it does."""
    if isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
        return ""
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        for _, target in import_targets(st, package):
            if not host_or_tf(target):
                why = inert(target)
                if why:
                    return f"it imports `{target}`, which {why}"
        return ""
    if isinstance(st, ast.FunctionDef):
        return "a decorator" if st.decorator_list else ""
    if isinstance(st, ast.ClassDef):
        if st.decorator_list or st.keywords or not all(isinstance(b, ast.Name) for b in st.bases):
            return "a class made with decorators, keywords or computed bases"
        for inner in st.body:
            if isinstance(inner, ast.FunctionDef):
                if not all(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod", "property")
                           for d in inner.decorator_list):
                    return "a method with a decorator"
            elif not (literal(inner, immutable=True) or isinstance(inner, ast.Pass) or
                      (isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Constant))):
                return "a class body that runs more than definitions"
        return ""
    if literal(st) or main_guard(st):
        return ""
    return "a statement other than imports, definitions and constants"


def literal(st, immutable: bool = False) -> bool:
    """`st` is `name = <a literal>` (`immutable`: of numbers, strings, None and tuples of them only)."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
        return False
    try:
        value = ast.literal_eval(st.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return _immutable(value) or not immutable


def _immutable(value) -> bool:
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes))


def _top_bound(st) -> set:
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {st.name}
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return {local for local, _ in import_targets(st, "") if local != "*"}
    if main_guard(st):
        return set()
    return set(module_level_sites([st]))


def module_level_sites(body) -> dict:
    """name -> [(line, the absolute target an import binds it to, or "")] of every binding the statements
    `body` make at module level (inside `if`, `for`, `try`, `with` too; not inside functions, classes,
    lambdas or comprehensions); a name a function declares `global` is bound at line 0, by no import."""
    out: dict = {}

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.setdefault(child.name, []).append((child.lineno, ""))
                for inner in ast.walk(child):
                    if isinstance(inner, ast.Global):
                        for name in inner.names:
                            out.setdefault(name, []).append((0, ""))
                continue
            if isinstance(child, SCOPES):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for local, target in import_targets(child, ""):
                    out.setdefault(local, []).append((child.lineno, target))
            elif isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                out.setdefault(child.id, []).append((child.lineno, ""))
            elif isinstance(child, ast.ExceptHandler) and child.name:
                out.setdefault(child.name, []).append((child.lineno, ""))
            visit(child)
    visit(ast.Module(body=list(body), type_ignores=[]))
    return out

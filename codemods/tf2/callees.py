"""Which names of other modules can reach TensorFlow's graph, where the TF2 tier does not read them.

A TF 1.x script builds its graph with calls into other modules too. A function of NumPy or of
Python's standard library cannot touch TensorFlow's default graph. A function of the user's
own modules may make variables and ops there (`W = make_w([3, 1])`), and TF 1.x's default
variable lists (`minimize(loss)`, `tf.trainable_variables()`, the initializer) then include
them. The translator sees such a call as plain Python: its TF 2 step would train the variables
it knows and miss the others. So every name the file reads from another module gets an answer
before the program is read (`check`): TensorFlow's own (the translator's tables decide), host
code (nothing of TensorFlow can happen in it), or a refusal at its first reference with the
module it comes from.

Host code is:
- Python's builtins and standard library (`sys.stdlib_module_names`, and Python 2's names);
- packages that never import TensorFlow (`HOST_PACKAGES`);
- a name of the user's own module (a file next to the script, where Python's `sys.path[0]` finds
  it) whose definition reads, through everything it reaches in its module and the modules
  those import, neither a TensorFlow import nor a module not known to be host. Read with `ast`,
  never imported.

Everything else (a module not found, a package not listed, `keras`) is not known, and refused.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

from codemods.tf2 import symbols
from codemods.tf2._base import Refuse
from codemods.tf2.module_kinds import TF_ROOTS, absolute, host_package, import_targets, main_guard
from codemods.tf2.names import canonical

# TensorFlow names that only read files, log, parse flags or load MNIST as NumPy arrays: host code
HOST_TF = tuple(f"tensorflow.{m}." for m in (
    "gfile", "io.gfile", "logging", "flags", "app.flags", "examples.tutorials.mnist", "contrib.training.HParams",
    "compat.as_str", "compat.as_bytes", "compat.as_text", "compat.as_str_any", "__version__", "VERSION",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "string"))
_MAX_DEPTH = 6
# what the TF2 tier reads of other modules (`imported_functions`), said with each refusal here
_READS = ("The TF2 tier reads the script, and the functions and classes it imports by name (`from m import f`) from "
          "modules of its own that run no code when imported; other graph code may make variables or ops that TF "
          "1.x's graph includes")
# the script's directory first (Python's sys.path[0]), then the directories above it, where a repository
# that is installed or run from its root keeps its packages (`baselines.common` for baselines/deepq/...)
_PARENTS = 4  # modules followed from the script (a deeper chain is not known)


@dataclass
class _Module:
    """A user module read with `ast`: what its top level binds, and what each binding reads."""
    path: Path
    imports: dict = field(default_factory=dict)    # name -> [dotted targets] its import statements bind
    reads: dict = field(default_factory=dict)      # name -> {(root, attrs)}: the dotted names its binding
                                                   # statements read from outside themselves
    inner: dict = field(default_factory=dict)      # name -> [dotted targets] imported inside its statements
    lines: dict = field(default_factory=dict)      # name -> line of its first binding
    stars: list = field(default_factory=list)      # modules of `from M import *`
    effects: set = field(default_factory=set)      # {(root, attrs, line)} read by the statements importing it runs


def _bound(node) -> set:
    """Names a statement binds anywhere in it (targets, parameters, definitions, loop and `with` names)."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
    return out


def _read_module(path: Path, package: str) -> Optional[_Module]:
    try:
        stat = path.stat()
    except OSError:
        return None
    return _read_module_text(str(path), package, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _read_module_text(where: str, package: str, mtime_ns: int, size: int) -> Optional[_Module]:
    """What the file `where` binds, imports and reads (read once per version of the file: the scripts of
    a tree that import the same module of theirs share it; nothing changes a `_Module` once read)."""
    path = Path(where)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return None
    mod = _Module(path)
    for st in tree.body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            for name, target in import_targets(st, package):
                if name == "*":
                    mod.stars.append(target)
                else:
                    mod.imports.setdefault(name, []).append(target)
                    mod.lines.setdefault(name, st.lineno)
            continue
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = {st.name}
        elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        else:  # if/try/for/with at top level: every name it binds depends on everything in it
            names = {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} | {
                n.name for n in ast.walk(st) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        imported = []
        compound = not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for n in ast.walk(st):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                for name, target in import_targets(n, package):
                    imported.append(target)
                    if compound and name == "*":
                        mod.stars.append(target)
                    elif compound:  # `try: import cPickle as pickle` binds a name of the module
                        mod.imports.setdefault(name, []).append(target)
        if compound and not main_guard(st):  # an assignment, a call, an `if` at top level: importing runs it
            mod.effects |= {(root, tuple(attrs), line) for root, attrs, line in _chains(list(ast.walk(st)))}
        local = _bound(st) - names if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) else set()
        reads = {(root, tuple(attrs)) for root, attrs, _ in _chains(list(ast.walk(st))) if root not in local}
        for name in names:
            mod.reads.setdefault(name, set()).update(reads)
            mod.inner.setdefault(name, []).extend(imported)
            mod.lines.setdefault(name, st.lineno)
    return mod


class Callees:
    """The answers for one script: `directory` is where Python finds its own modules (None: none)."""

    def __init__(self, directory: Optional[Path] = None):
        self.directory = directory
        self._modules: dict = {}   # dotted module -> _Module or None (not a file there)
        self._reaches: dict = {}   # (module, name) -> the reason it may reach the graph, or "" (host)

    # -- modules -----------------------------------------------------------------------------
    @classmethod
    def of_script(cls, filename: str) -> "Callees":
        """The answers for the script `filename` (its folder, when it is a file, is where its modules are)."""
        path = Path(filename)
        return cls(path.parent if path.is_file() else None)

    def file(self, dotted: str) -> Optional[Path]:
        """The file next to the script (or in a folder above it) that importing `dotted` reads, or None."""
        if self.directory is None or not dotted:
            return None
        for root in (self.directory, *self.directory.parents[:_PARENTS]):
            base = root.joinpath(*dotted.split("."))
            for path in (base.with_suffix(".py"), base / "__init__.py"):
                if path.is_file():
                    return path
        return None

    def _module(self, dotted: str) -> Optional[_Module]:
        if dotted not in self._modules:
            path = self.file(dotted)
            package = dotted if path is not None and path.name == "__init__.py" else dotted.rpartition(".")[0]
            self._modules[dotted] = _read_module(path, package) if path is not None else None
        return self._modules[dotted]

    def split(self, qname: str) -> tuple:
        """(longest prefix of `qname` that is a module file next to the script, the rest) or (None, qname)."""
        parts = qname.split(".")
        for k in range(len(parts), 0, -1):
            if self._module(".".join(parts[:k])) is not None:
                return ".".join(parts[:k]), parts[k:]
        return None, parts

    # -- the question ------------------------------------------------------------------------
    def reason(self, qname: str, depth: int = 0) -> str:
        """"" when `qname` (an imported name and the attributes read of it) is host code, else why
        it may reach TensorFlow's graph."""
        top = qname.split(".")[0]
        if top in TF_ROOTS or host_package(top):
            return ""
        module, rest = self.split(qname)
        if module is None:
            return (f"module `{top}` is neither Python's standard library, nor a package known to stay out of "
                    "TensorFlow, nor a file next to the script: what it does to TF 1.x's graph is not known")
        effects = self.effects_reason(module, depth)
        if effects:
            return effects
        mod = self._module(module)
        names = [rest[0]] if rest else sorted({*mod.imports, *mod.reads})  # the module object: all of it
        for name in names:
            why = self._name_reason(module, name, depth, set())
            if why:
                return why
        return ""

    def effects_reason(self, module: str, depth: int = 0, seen: Optional[set] = None) -> str:
        """"" when importing the user module `module` (found next to the script) runs no graph code:
        its top-level statements and those of the user modules it imports, else why."""
        seen = set() if seen is None else seen
        mod = self._module(module)
        if mod is None or module in seen:
            return ""
        seen.add(module)
        for root, attrs, line in sorted(mod.effects, key=lambda e: e[2]):
            for target in mod.imports.get(root, ()):
                inner = self._target_reason(".".join((target, *attrs)), depth)
                if inner:
                    spelled = ".".join((root, *attrs))
                    return f"importing `{module}` runs {mod.path.name}:{line}, which reads `{spelled}`" + \
                        (", TensorFlow's" if inner == "tf" else f": {inner}")
        for targets in mod.imports.values():
            for target in targets:
                inner_module, _ = self.split(target)
                if inner_module is not None and depth < _MAX_DEPTH:
                    why = self.effects_reason(inner_module, depth + 1, seen)
                    if why:
                        return why
        return ""

    def _name_reason(self, module: str, name: str, depth: int, seen: set) -> str:
        key = (module, name)
        if key in self._reaches:
            return self._reaches[key]
        if key in seen:
            return ""  # already being answered: a cycle adds nothing new
        seen.add(key)
        mod = self._module(module)
        where = f"{mod.path.name}:{mod.lines.get(name, 1)}"
        this = f"`{name}` ({where})"
        why = ""
        for target in [*mod.imports.get(name, ()), *mod.inner.get(name, ())]:
            inner = self._target_reason(target, depth)
            if inner:
                why = f"{this}, an import of `{target}`" + (f": {inner}" if inner != "tf" else "")
                break
        if not why and name not in mod.imports and name not in mod.reads and mod.stars:
            why = self._star_reason(mod, this, name, depth)
        for read, attrs in sorted(mod.reads.get(name, set())):
            if why:
                break
            if read == name:
                continue
            if read in mod.imports:
                for target in mod.imports[read]:
                    inner = self._target_reason(".".join((target, *attrs)), depth)
                    if inner:
                        spelled = ".".join((read, *attrs))
                        why = f"{this} reads `{spelled}`" + (f" (`{target}`): {inner}" if inner != "tf" else
                                                           f", TensorFlow's (`{target}`, {mod.path.name}:"
                                                           f"{mod.lines.get(read, 1)})")
                        break
            elif read in mod.reads:
                inner = self._name_reason(module, read, depth, seen)
                if inner:
                    why = f"{this} reads {inner}"
            elif mod.stars and not hasattr(builtins, read):
                why = self._star_reason(mod, this, read, depth)
        self._reaches[key] = why
        return why

    def _target_reason(self, target: str, depth: int) -> str:
        """"tf" for a TensorFlow import, else `reason` of it (a module deeper than _MAX_DEPTH: not known)."""
        if target.split(".")[0] in TF_ROOTS:
            return "" if canonical(target + ".").startswith(HOST_TF) else "tf"
        if depth >= _MAX_DEPTH and not host_package(target.split(".")[0]):
            return f"reached through more than {_MAX_DEPTH} modules"
        return self.reason(target, depth + 1)

    def _star_reason(self, mod: _Module, this: str, read: str, depth: int) -> str:
        for star in mod.stars:
            inner = self._target_reason(f"{star}.{read}", depth)
            if inner:
                return f"{this} reads `{read}`, which `from {star} import *` may bind: {inner}"
        return ""


def _chains(nodes: list):
    """(dotted name, line) of every maximal Name/Attribute chain the module reads (`nodes`: the
    module's nodes, in `ast.walk`'s order)."""
    inner = set()
    for node in nodes:
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in nodes:
        if id(node) in inner or not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        parts, cur = [], node
        while isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        if isinstance(cur, ast.Name) and isinstance(cur.ctx, ast.Load):
            yield cur.id, parts[::-1], node.lineno


def check(source: str, filename: str, imports: dict, unbound: frozenset) -> None:
    """Refuse at the first name the script reads from another module that may reach TensorFlow's graph.

    `imports`: name → the dotted targets its import statements bind it to (in any scope);
    `unbound`: the names nothing in the script binds (a star import may)."""
    nodes = list(ast.walk(symbols.tree(source)))  # walked once, read three times
    stars = [absolute(n.module, n.level, "") for n in nodes
             if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)]
    if all(host_package(t.split(".")[0]) or t.split(".")[0] in TF_ROOTS
           for t in [*stars, *(t for targets in imports.values() for t in targets)]):
        return  # every import is TensorFlow's or host code: nothing to follow
    callees = Callees.of_script(filename)
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [target for _, target in import_targets(node, "")]  # `from m import x`: m.x, or m if x is no module
            for target in modules:
                module, _ = callees.split(target)
                why = callees.effects_reason(module) if module is not None else ""
                if why:
                    raise Refuse(node.lineno, f"{why}. {_READS}")
    for root, attrs, line in sorted(_chains(nodes), key=lambda c: c[2]):
        candidates = [f"{t}.{'.'.join(attrs)}" if attrs else t for t in imports.get(root, ())]
        if not candidates and root in unbound:
            candidates = [f"{s}.{root}{'.' + '.'.join(attrs) if attrs else ''}" for s in stars]
        for qname in candidates:
            why = callees.reason(qname)
            if why:
                spelled = ".".join((root, *attrs))
                raise Refuse(line, f"`{spelled}` comes from another module: {why}. {_READS}")

"""Functions and classes a script imports from its own modules, read where the script imports them.

    from libs.utils import corrupt      # libs/utils.py: def corrupt(x): return tf.multiply(x, ...)
    ...
    h = tf.matmul(corrupt(x), W)

The TF2 tier reads one program, and a function of the user's own module that reaches TensorFlow
is part of it: TF 1.x ran its graph calls while it built the graph, and the TF 2 program needs
them in TF 2 form. `read` copies each such definition to the line that imports it, which is what
Python runs: the import bound the name there, the `def` binds it there, to a function of the same
code. The program is then read as the script's own (helpers, loops, the interpreter), and the
module files are left as they are.

A copy behaves as the imported function only where every name it reads means the same in the
script as in its module. So a definition is copied when everything it reads (body, defaults and
decorators, as CPython's symbol tables find them) is one of:
- a function, class or immutable literal constant of its module, bound there once, or one the
  module imports by name from another user module that reaches TensorFlow: copied with it, under
  the name it is read by, which the script must not bind;
- a module, or a name of a module that cannot reach TensorFlow (TensorFlow itself, a host
  package, an inert user module, a host function of one), bound there by one import, which the
  script binds at module level only to the same thing, before that line (or not at all: the import
  is written with the copies);
- a builtin that neither the module nor the script binds.
And every module involved must be *inert* (`user_modules`): importing it runs nothing but
imports, definitions and literals, so the script no longer importing it changes nothing.
Otherwise nothing is copied, and the script is refused at the import with what stopped the copy.

When everything the statement binds that the script reads can be read so (host functions of the
module too), the import statement goes, and in a tree the script no longer imports the module at all
(so it keeps its tier); otherwise it keeps the names that stay imported. `from m import f`, `from m
import f as g`, `from pkg.m import f` and `from m import *` (kept when the script may read the names
it binds dynamically, `dir()`, `globals()`, or binds one of them otherwise). `import m` with
`m.f(...)` is not read here (`callees` refuses it when it reaches TensorFlow).
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from codemods.tf2 import symbols, user_modules
from codemods.tf2._base import Refuse
from codemods.tf2.callees import Callees
from codemods.tf2.names import canonical
from codemods.tf2.user_modules import Source

_MAX_DEPTH = 6  # user modules an inert module may import in a chain


@dataclass
class Copied:
    """The program with the definitions copied in, and how its lines relate to the input's."""
    text: str
    lines: dict                                   # line of `text` -> line of the input
    origins: dict = field(default_factory=dict)   # line of `text` in a copy -> "`f` (libs/utils.py:80), its line K"
    notes: list = field(default_factory=list)     # (line of the input, message)


def read(text: str, filename: str) -> Optional[Copied]:
    """The script with every definition it imports from its own modules that reaches TensorFlow copied
    to the line importing it, or None when there is none. Raises Refuse when one cannot be copied."""
    tree = symbols.tree(text)
    candidates = [st for st in tree.body if isinstance(st, ast.ImportFrom) and st.module and not st.level and
                  not user_modules.host_or_tf(st.module)]
    if not candidates:  # most scripts: only TensorFlow and packages that stay out of it, nothing to read
        return None
    script = _Script(text, tree, Callees.of_script(filename), Path(filename).parent)
    plans = [plan for st in candidates if (plan := script.plan(st)) is not None]
    return _write(text, plans) if plans else None


@dataclass
class _Plan:
    """What to write at one import statement."""
    statement: ast.ImportFrom
    kept: Optional[str]      # the import statement left, "star" (the star import kept as written), or None
    block: list              # [(text line, origin or None)] written after it
    note: str


class _NotCopied(Exception):
    """What stops a copy: the script name it is said about, and why."""

    def __init__(self, local: str, why: str):
        super().__init__(why)
        self.local, self.why = local, why


class _Script:
    def __init__(self, text: str, tree: ast.Module, callees: Callees, folder: Path):
        self.tree, self.callees, self.folder = tree, callees, folder
        self.sites = user_modules.module_level_sites(tree.body)
        self.stars = {target for _, target in self.sites.get("*", [])}  # modules the script star-imports
        self.unbound = symbols.unbound(text)
        self.loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        self.taken: dict = {}       # script name -> (module, name) a copy binds it to
        self.sources: dict = {}

    # -- modules -------------------------------------------------------------------------------
    def source(self, dotted: str, depth: int = 0) -> Optional[Source]:
        if dotted not in self.sources:
            self.sources[dotted] = None  # a cycle of imports reads as not inert
            path = self.callees.file(dotted)
            if path is not None:
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    text = None
                if text is not None:
                    self.sources[dotted] = user_modules.read(
                        text, dotted, os.path.relpath(path, self.folder), path.name == "__init__.py",
                        lambda target: self._inert(target, depth + 1))
        return self.sources[dotted]

    def _inert(self, target: str, depth: int) -> str:
        """"" when importing the user module (or module attribute) `target` is inert, else why not."""
        module, _ = self.callees.split(target)
        src = self.source(module, depth) if module is not None and depth < _MAX_DEPTH else None
        if src is None:
            return "is not a module of the user's that reads as inert"
        return src.why_not_inert

    # -- one import statement ------------------------------------------------------------------
    def plan(self, st: ast.ImportFrom) -> Optional[_Plan]:
        if st.level or not st.module or st.col_offset or any(
                other is not st and other.lineno <= st.end_lineno and other.end_lineno >= st.lineno
                for other in self.tree.body):
            return None  # a relative import, or one sharing its lines with other statements: not rewritten
        star = any(a.name == "*" for a in st.names)
        module, rest = self.callees.split(st.module)
        src = self.source(module) if module is not None and not rest else None
        if src is None:
            return None
        if star:  # the names the script reads that nothing else binds
            provided = [(n, n) for n in sorted(self.unbound & src.star_names())]
        else:     # the names it imports that the script reads (a submodule is not a definition)
            provided = [(a.name, a.asname or a.name) for a in st.names if (a.asname or a.name) in self.loads and
                        self.callees.split(f"{module}.{a.name}") == (module, [a.name])]
        graph = [(name, local) for name, local in provided if self.callees.reason(f"{module}.{name}")]
        if not graph:
            return None  # host code only: it stays imported
        first = graph[0][1]
        if src.why_not_inert:
            if self.callees.effects_reason(module):
                return None  # its import runs graph code: `callees` says where
            raise self.refusal(st, first, src, f"importing {src.display} {src.why_not_inert}, and the script would "
                                                "no longer import it")
        try:  # all it provides, so that the script no longer imports the module
            if star and not self._star_replaceable(src):
                raise _NotCopied(first, "")
            members, imports = self._closure(st, src, provided)
            kept, wanted = None, provided
        except _NotCopied:  # what reaches TensorFlow only; the rest stays imported
            try:
                members, imports = self._closure(st, src, graph)
            except _NotCopied as exc:
                raise self.refusal(st, exc.local, src, exc.why) from None
            kept, wanted = ("star" if star else _kept(st, {local for _, local in graph})), graph
        for key, local in members.items():
            self.taken[local] = key
        wanted_keys = {(module, name) for name, _ in wanted}
        return _Plan(st, kept, self._block(members, imports, wanted_keys),
                     _note(st, src, members, imports, wanted_keys, star))

    def _star_replaceable(self, src: Source) -> bool:
        """Whether `from m import *` can give way to what the script reads of it: the script reads no namespace
        dynamically, and a name the star binds that the script binds too and reads is bound alike by both (an
        import of the same module, `tf`)."""
        if self.loads & {"globals", "locals", "vars", "dir", "eval", "exec", "__import__"}:
            return False
        for name in src.star_names() & set(self.sites) & self.loads:
            target = src.imports.get(name)
            if not (target and all(t and canonical(t) == canonical(target) for _, t in self.sites[name])):
                return False
        return True

    def _closure(self, st, src: Source, start: list) -> tuple:
        """({(module, name): script name} of the definitions to copy, {script name: target} of the imports to
        write) for the names `start` [(name in `src`, script name)] and all they read; raises _NotCopied."""
        members: dict = {}   # (module, name) -> the name the script binds it to
        imports: dict = {}   # script name -> the target an import written with the copies binds it to
        requested = set()
        for name, local in start:
            found, why = self._resolve(st, src, name, imports, local)
            if why:
                raise _NotCopied(local, f"`{name}` {why}" if not why.startswith("`") else why)
            if found is not None:
                members[found] = local
                requested.add(found)
        todo = list(members)
        while todo:
            key = todo.pop()
            owner = self.sources[key[0]]
            node = owner.bindings[key[1]][0]
            if _mutable_default(node):
                raise _NotCopied(start[0][1], f"`{key[1]}` ({owner.display}:{node.lineno}) has a default value that "
                                              f"is a mutable object (a copy would have another one)")
            for read in sorted(_reads(owner, node) - {key[1]}):
                found, why = self._resolve(st, owner, read, imports, read)
                if why:
                    raise _NotCopied(start[0][1], f"`{key[1]}` ({owner.display}:{node.lineno}) reads `{read}`, "
                                                  f"which {why}")
                if found is not None and found not in members:
                    members[found] = read
                    todo.append(found)
                elif found is not None and members[found] != read:
                    raise _NotCopied(start[0][1], f"`{found[1]}` of {self.sources[found[0]].display} is read as "
                                                  f"`{members[found]}` and as `{read}`")
        for key, local in members.items():
            taken = self.taken.get(local)
            if taken is not None and taken != key:
                raise _NotCopied(local, f"`{local}` is copied from another import already")
            if key not in requested and (local in self.sites or local in self.unbound or local in imports):
                raise _NotCopied(start[0][1], f"`{key[1]}` of {self.sources[key[0]].display} is copied with it as "
                                              f"`{local}`, a name the script uses too")
        return members, imports

    def _resolve(self, st, owner: Source, read: str, imports: dict, local: str) -> tuple:
        """(the (module, name) to copy for `read`, a global a definition of `owner` reads (or a name the script
        imports from it), or None; why it cannot be read in the script as `local`, or "")."""
        if read in owner.declared_global:
            return None, f"a function of {owner.display} declares `global` (the copy would not see it change)"
        if read.startswith("__") and read.endswith("__"):
            return None, "is the module's own (the copy would read the script's)"
        if read in owner.imports:
            target = owner.imports[read]
            if not user_modules.host_or_tf(target):
                module, rest = self.callees.split(target)
                if module is None:
                    return None, f"{owner.display} imports from `{target}`, not found as a module of the user's"
                if rest and self.callees.reason(target):  # a user function that reaches TensorFlow: copied too
                    inner = self.source(module)
                    if inner is None or inner.definition(rest[0]) is None or len(rest) > 1:
                        return None, f"{owner.display} imports from `{target}`, not a `def` or `class` there"
                    if inner.why_not_inert:
                        return None, f"{owner.display} imports from {inner.display}, which {inner.why_not_inert}"
                    return (module, rest[0]), ""
                why = self._inert(target, 0)
                if why:
                    return None, f"{owner.display} imports from `{target}`, which {why}"
            return None, self._imported(st, owner, local, target, imports)
        if read in owner.bindings:
            binding = owner.bindings[read][0]
            if len(owner.bindings[read]) == 1 and user_modules.literal(binding) and owner.constant(read) is None:
                return None, f"is a mutable value of {owner.display} (a copy would be another object)"
            if owner.definition(read) is None and owner.constant(read) is None:
                return None, f"{owner.display} binds other than once by a `def`, a `class` or an immutable literal"
            return (owner.dotted, read), ""
        if read in symbols.BUILTINS:
            return None, ("is a builtin the script binds" if read in self.sites else "")
        return None, f"{owner.display} does not bind"

    def _imported(self, st, owner: Source, read: str, target: str, imports: dict) -> str:
        """"" when the script binds `read` as `owner` does (an import of `target`), or can be made to (the
        statement `st`, which the copies replace, left out)."""
        sites = [site for site in self.sites.get(read, []) if site[0] != st.lineno]
        if not sites:
            stars = [s for s in self.stars if s != owner.dotted or read not in owner.star_names()]
            if stars:
                return f"the script may bind otherwise (`from {stars[0]} import *`)"
            if imports.get(read, target) != target:
                return f"is imported as two modules by what is copied"
            imports[read] = target
            return ""
        if all(t and canonical(t) == canonical(target) for _, t in sites):
            if min(line for line, _ in sites) > st.lineno:  # imported later too: here as well, for the copies
                imports[read] = target
            return ""
        line = next(line for line, t in sites if not (t and canonical(t) == canonical(target)))
        return (f"{owner.display} imports as `{target}`, and the script binds it " +
                (f"at line {line} to something else" if line else "in a function that declares it `global`"))

    def _block(self, members: dict, imports: dict, wanted: set) -> list:
        out = []
        for name, target in sorted(imports.items()):
            module, _, attr = target.rpartition(".")
            spelled = (f"import {target}" + (f" as {name}" if name != target else "")) if not module else \
                f"from {module} import {attr}" + (f" as {name}" if name != attr else "")
            out.append((spelled, None))
        order = sorted(members, key=lambda k: (self.sources[k[0]].constant(k[1]) is None, k[0],
                                               self.sources[k[0]].bindings[k[1]][0].lineno))
        for key in order:
            src, local = self.sources[key[0]], members[key]
            st = src.bindings[key[1]][0]
            origin = f"`{key[1]}` ({src.display}:{st.lineno})"
            out.append(("", None))
            why = "the TF 2 program needs it in TF 2 form" if self.callees.reason(".".join(key)) else \
                "the script no longer imports its module, which stays TF 1.x code" if key in wanted else \
                "what is copied with it reads it"
            out.append((f"# {origin}, copied here by tf1clip: {why}", None))
            for k, text in src.segment(st):
                if k == st.lineno and local != key[1]:
                    keyword = "class" if isinstance(st, ast.ClassDef) else "def" if isinstance(st, ast.FunctionDef) \
                        else ""
                    text = text.replace(f"{keyword} {key[1]}" if keyword else key[1],
                                        f"{keyword} {local}" if keyword else local, 1)
                out.append((text, f"{origin}, its line {k}"))
        out.append(("", None))
        return out

    def refusal(self, st: ast.ImportFrom, local: str, src: Source, why: str) -> Refuse:
        refusal = Refuse(st.lineno, f"`{local}` comes from {src.display}, and its definition cannot be read here as "
                                    f"the script's own: {why}")
        refusal.of_input = True
        return refusal


def _reads(src: Source, node) -> set:
    """The globals a top-level definition reads (CPython's symbol tables), builtins and its own name included."""
    if isinstance(node, ast.Assign):
        return set()
    return symbols.free_names("\n".join(text for _, text in src.segment(node)), builtins_too=True)


def _mutable_default(node) -> bool:
    """A function (or a method of a class) whose default values include a list, dict or set display or a
    call: one object made when the `def` ran, shared by every call of that function object."""
    functions = [node] if isinstance(node, ast.FunctionDef) else \
        [n for n in node.body if isinstance(n, ast.FunctionDef)] if isinstance(node, ast.ClassDef) else []
    return any(isinstance(d, (ast.List, ast.Dict, ast.Set, ast.Call, ast.ListComp, ast.DictComp, ast.SetComp))
               for f in functions for d in [*f.args.defaults, *(k for k in f.args.kw_defaults if k is not None)])


def _kept(st: ast.ImportFrom, copied: set) -> Optional[str]:
    left = [a for a in st.names if (a.asname or a.name) not in copied]
    if not left:
        return None
    return f"from {st.module} import " + ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in left)


def _note(st: ast.ImportFrom, src: Source, members: dict, imports: dict, wanted: set, star: bool) -> str:
    names = ", ".join(f"`{members[k]}`" for k in sorted(wanted) if k in members)
    also = sorted(members[k] for k in members if k not in wanted)
    spelled = f"`from {st.module} import *`" if star else f"`from {st.module} import ...`"
    imported = (" (" + ", ".join(f"`{name}`" for name in sorted(imports)) + " imported with them)") if imports else ""
    return (f"{spelled}: {names} " + ("and what it reads (" + ", ".join(f"`{a}`" for a in also) + ") "
                                      if also else "") +
            f"copied here from {src.display}{imported} and read as the script's own (the TF 2 program needs them in "
            f"TF 2 form; the module files are left as they are)")


def _write(text: str, plans: list) -> Copied:
    lines = text.splitlines()
    at = {plan.statement.lineno: plan for plan in plans}
    out, mapping, origins, notes = [], {}, {}, []

    def emit(line_text: str, input_line: int, origin=None):
        out.append(line_text)
        mapping[len(out)] = input_line
        if origin is not None:
            origins[len(out)] = origin
    k = 1
    while k <= len(lines):
        plan = at.get(k)
        if plan is None:
            emit(lines[k - 1], k)
            k += 1
            continue
        st = plan.statement
        if plan.kept == "star":  # kept as written
            for j in range(st.lineno, st.end_lineno + 1):
                emit(lines[j - 1], j)
        elif plan.kept is not None:
            emit(plan.kept, st.lineno)
        for line_text, origin in plan.block:
            emit(line_text, st.lineno, origin)
        notes.append((st.lineno, plan.note))
        k = st.end_lineno + 1
    return Copied("\n".join(out) + ("\n" if text.endswith("\n") else ""), mapping, origins, notes)

"""Which files of a migrated tree must share a tier: one process cannot run both.

The compat tier's output turns TF 2 behaviour off when it is imported (`tf.disable_v2_behavior()`),
for the whole process. A TF2-tier module that imports such a module, directly or through others,
runs as TF 1.x graph code: its eager step crashes (`.numpy()` of a symbolic tensor) or trains
otherwise. The other way round, graph code that imports a module rewritten into TF 2 form calls
that form in graph mode, which the TF2 tier never proved. So, as a fixed point over the tree's
own import graph (read with `ast`, never imported):

- a module is *graph code* when its output (or, left unchanged, its input) calls
  `disable_v2_behavior` / `disable_eager_execution`;
- a TF2-tier output that imports graph code, or that graph code imports, goes back to the compat
  tier, and is graph code from then on.

Imports are resolved as Python would from the file's folder and the folders above it (a script
run from its folder, a package run from the repository root), to the tree's own files only.
"""
from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass, field
from typing import Callable, Optional

# TensorFlow calls that turn TF 2 behaviour off for the whole process
GRAPH_SWITCHES = frozenset({"disable_v2_behavior", "disable_eager_execution"})
_PARENTS = 4  # folders above a file where its absolute imports may be found


@dataclass
class Module:
    """One Python file or notebook of the tree: what it imports of the tree, and where."""
    display: str
    path: str
    imports: dict = field(default_factory=dict)  # path of an imported tree file -> first line importing it
    graph_code: bool = False                      # calls a graph-mode switch (`switches_graph_mode`)


def code_of(path: str, kind: str, text: Optional[str] = None) -> str:
    """The Python source of a file (a notebook's code cells, magics and shell lines blanked)."""
    if text is None:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return ""
    if kind != "notebook":
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return ""
    out = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
        cell_code = "\n".join(lines)
        try:
            ast.parse(cell_code)
        except (SyntaxError, ValueError):
            continue
        out.append(cell_code)
    return "\n".join(out)


def _parse(code: str) -> Optional[ast.AST]:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def switches_graph_mode(code: str) -> bool:
    """Does this code call one of TensorFlow's process-wide graph-mode switches?"""
    tree = _parse(code)
    return tree is not None and _switches(tree)


def _switches(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in GRAPH_SWITCHES:
                return True
    return False


@dataclass(frozen=True)
class ImportFacts:
    """What one file's code says for the graph, read where the file was migrated (`read_imports`): its
    import statements as written, and whether it switches graph mode."""
    imports: tuple = ()        # (line, level, module or "", the names `from` it imports, or None: `import a.b`)
    graph_code: bool = False


def read_imports(code: str) -> ImportFacts:
    """The import statements of `code` (in any scope) and whether it calls a graph-mode switch."""
    tree = _parse(code)
    if tree is None:
        return ImportFacts()
    imports = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend((node.lineno, 0, a.name, None) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports.append((node.lineno, node.level, node.module or "", tuple(a.name for a in node.names)))
    return ImportFacts(tuple(imports), _switches(tree))


class ImportGraph:
    """The tree's files and which of them each one imports."""

    def __init__(self, files: dict):
        """`files`: path -> (display, code or its `ImportFacts`)."""
        self.paths = set(files)
        self.modules = {path: Module(display, path) for path, (display, _) in files.items()}
        self._reach: dict = {}
        for path, (_, code) in files.items():
            facts = read_imports(code) if isinstance(code, str) else code
            self._read(self.modules[path], facts)
            self.modules[path].graph_code = facts.graph_code

    def _file(self, folder: str, dotted: str) -> list:
        """The tree's files that importing `dotted` from `folder` runs (packages' __init__ included):
        found in `folder` or the nearest folder above it that has them."""
        for _ in range(_PARENTS + 1):
            found = self._relative(folder, dotted)
            if found:
                return found
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        return []

    def _read(self, module: Module, facts: ImportFacts) -> None:
        folder = os.path.dirname(module.path)
        for line, level, dotted_module, names in facts.imports:
            if names is None:  # `import a.b`
                targets = [(folder, dotted_module)]
            else:
                base = folder
                for _ in range(max(level - 1, 0)):
                    base = os.path.dirname(base)
                if level:
                    # relative: the package folder itself, then the module and its names
                    init = os.path.join(base, "__init__.py")
                    if init in self.paths:
                        module.imports.setdefault(init, line)
                    dotted = [f"{dotted_module}.{n}" if dotted_module else n for n in names]
                    targets = [(base, n) for n in dotted] + ([(base, dotted_module)] if dotted_module else [])
                    for start, name in targets:
                        for path in self._relative(start, name):
                            module.imports.setdefault(path, line)
                    continue
                targets = [(folder, f"{dotted_module}.{n}") for n in names] + [(folder, dotted_module)]
            for start, dotted in targets:
                if not dotted:
                    continue
                for path in self._file(start, dotted):
                    if path != module.path:
                        module.imports.setdefault(path, line)

    def _relative(self, base: str, dotted: str) -> list:
        """The tree's files that `dotted` names under the folder `base` (each package's __init__)."""
        parts, found = dotted.split("."), []
        for k in range(1, len(parts) + 1):
            stem = os.path.join(base, *parts[:k])
            for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
                if candidate in self.paths:
                    found.append(candidate)
                    break
        return found

    def reaches(self, start: str) -> set:
        """The tree files that importing `start` runs, directly or through others."""
        if start not in self._reach:
            seen, todo = set(), [start]
            while todo:
                for nxt in self.modules[todo.pop()].imports:
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            self._reach[start] = seen
        return self._reach[start]

    def chain(self, start: str, goal: str) -> Optional[list]:
        """[(importer path, line), ...] from `start` to `goal` through imports, or None."""
        seen, todo = {start: None}, [start]
        while todo:
            current = todo.pop(0)
            if current == goal:
                steps, at = [], goal
                while seen[at] is not None:
                    prev, line = seen[at]
                    steps.append((prev, line))
                    at = prev
                return steps[::-1]
            for nxt, line in sorted(self.modules[current].imports.items()):
                if nxt not in seen:
                    seen[nxt] = (current, line)
                    todo.append(nxt)
        return None


def _spell(graph: ImportGraph, steps: list, goal: str) -> str:
    hops = [f"{graph.modules[path].display}:{line}" for path, line in steps]
    return " → ".join(hops + [graph.modules[goal].display])


def demotions(graph: ImportGraph, graph_code: set, tf2: set,
              on_demote: Callable[[str, str, int], bool]) -> dict:
    """{path: why} of the TF2-tier files that must go back to the compat tier.

    `graph_code`: files whose output switches TF 2 behaviour off; `tf2`: files the TF2 tier
    rewrote. `on_demote(path, why, line)` re-migrates a file to the compat tier (`line`: where it
    imports the chain's first module, 0 when it is imported) and says whether its new output
    is graph code (it joins `graph_code`)."""
    graph_code, tf2, why = set(graph_code), set(tf2), {}
    changed = True
    while changed:
        changed = False
        for path in sorted(tf2):
            reason = None
            ahead = sorted(graph.reaches(path) & graph_code)
            behind = sorted(g for g in graph_code if path in graph.reaches(g))
            line = 0
            if ahead:
                other = ahead[0]
                steps = graph.chain(path, other)
                line = steps[0][1]
                reason = (f"it imports {graph.modules[other].display}, which stays TF 1.x graph code and turns "
                          f"TF 2 behaviour off for the whole process when imported: "
                          f"{_spell(graph, steps, other)}")
            elif behind:
                other = behind[0]
                reason = (f"{graph.modules[other].display} imports it and stays TF 1.x graph code, which would "
                          f"call its TF 2 form in graph mode: {_spell(graph, graph.chain(other, path), path)}")
            if reason is None:
                continue
            why[path] = reason
            tf2.discard(path)
            if on_demote(path, reason, line):
                graph_code.add(path)
            changed = True
    return why

"""What code of the script may change: which statements may change a list, dict or set that another name,
object or function of the script holds (`list_growth.shared`).

    e = d            # d is shared: another name holds the same list
    e.pop()          # changes it in place
    drop()           # a function of the script whose body changes it: read, to its callees

A statement may change such a container when it changes an object in place (a mutating method of
anything, `x[k] = v`, `del`), calls a function, lambda or class of the script that may, calls a method of
an object the script made from its own class, hands a shared container to anything but TensorFlow or a
builtin that only reads it, or hands a function of the script to a builtin (`map(f, xs)`). TensorFlow's
functions, a module's function, a builtin, a method of a library's object (a Session, an optimizer, a
tensor, an array) run no code of the script. `reaching.Definitions` counts such a statement as a
definition of every shared name, so a step reading one is traced before it, or refused.
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from codemods.tf2 import symbols
from codemods.tf2.list_growth import READING_BUILTINS, TF_METHODS
from codemods.tf2.syntax import target_names, walk_nodes

# the methods of a list, dict or set that read it only
_READERS = frozenset({"values", "keys", "items", "get", "copy", "index", "count", "issubset", "issuperset", "union",
                      "intersection", "difference"})
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
                      "setdefault", "popitem", "add", "discard", "difference_update", "intersection_update"})


class Effects:
    """`may_change(statement)` for one module. `shared`: its shared containers; `module_names()`: the names
    that denote modules (`reaching.Definitions.module_names`); `is_tf(node)`: the node names TensorFlow's."""

    def __init__(self, module: cst.Module, shared: frozenset, module_names: Callable, is_tf: Callable):
        self._module, self._shared, self._module_names, self._is_tf = module, shared, module_names, is_tf
        self._made: Optional[frozenset] = None

    def may_change(self, node: cst.CSTNode) -> bool:
        """`node` (a statement of the module) may change a container another name holds (`shared`)."""
        return self.effects(node, set())

    def effects(self, node: cst.CSTNode, seen: set) -> bool:
        """Code under `node` may change an object of the script: it changes one in place (`x.pop()`, `x[k] = v`,
        `del`), hands a shared container to anything but TensorFlow or a builtin that only reads it, calls
        a method of an object made by the script's own class, a builtin with a function of the script, or
        a function of the script that may (`changes`). TensorFlow's functions, a module's, a builtin's, a
        method of a library's object (a Session, an optimizer, a tensor) run no code of the script."""
        made = self.script_made()
        for n in walk_nodes(node):
            if isinstance(n, (cst.Del, cst.Global, cst.Nonlocal)) or isinstance(
                    n, (cst.AssignTarget, cst.AugAssign)) and isinstance(n.target, (cst.Subscript, cst.Attribute)):
                return True
            if not isinstance(n, cst.Call):
                continue
            root = n.func
            while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):  # `tf.train.Adam(0.1).minimize`: `tf`
                root = root.func if isinstance(root, cst.Call) else root.value
            method = n.func.attr.value if isinstance(n.func, cst.Attribute) else None
            name = root.value if isinstance(root, cst.Name) else None
            if self._is_tf(n.func) or method in TF_METHODS:
                continue
            if method in MUTATORS or name is None or \
                    name in made and (method is not None or self.changes(name, seen)):
                return True
            given = [a.value for arg in n.args for a in walk_nodes(arg.value) if isinstance(a, cst.Name)]
            if any(g in self._shared for g in given) and not (method is None and name in READING_BUILTINS or
                                                              method in _READERS and root is n.func.value):
                return True  # a shared container handed on
            if method is None and name in symbols.BUILTINS and any(g in made for g in given) or \
                    any(isinstance(arg.value, cst.Lambda) for arg in n.args):
                return True  # a function of the script handed to a builtin (`map(f, xs)`)
        return False

    def changes(self, name: str, seen: set) -> bool:
        """The script's function `name` (a `def`, or a lambda bound once at module level) may change an
        object of the script when called: its body does (`effects`). A class, or a name bound twice: it may."""
        if name in seen:
            return False  # a recursion: its body is read once
        defs = [st for st in self._module.body if isinstance(st, (cst.FunctionDef, cst.ClassDef))
                and st.name.value == name]
        lambdas = [small.value for st in self._module.body if isinstance(st, cst.SimpleStatementLine)
                   for small in st.body if isinstance(small, cst.Assign) and isinstance(small.value, cst.Lambda)
                   and any(set(target_names(t.target)) == {name} for t in small.targets)]
        bodies = [d for d in defs if isinstance(d, cst.FunctionDef)] + lambdas
        if len(bodies) != 1 or len(defs) + len(lambdas) != 1:
            return True
        seen.add(name)
        return self.effects(bodies[0].body, seen)

    def script_made(self) -> frozenset:
        """Module-level names of the script's functions, classes and lambdas, and of what it makes by calling
        them (an object whose methods are the script's code)."""
        if self._made is None:
            defs = {st.name.value for st in self._module.body if isinstance(st, (cst.FunctionDef, cst.ClassDef))}
            made = set(defs)
            for st in self._module.body:
                for small in st.body if isinstance(st, cst.SimpleStatementLine) else ():
                    value = small.value if isinstance(small, cst.Assign) else None
                    if isinstance(value, cst.Lambda) or isinstance(value, cst.Call) and \
                            isinstance(value.func, cst.Name) and value.func.value in defs:
                        made |= {n for t in small.targets for n in target_names(t.target)}
            self._made = frozenset(made)
        return self._made

"""Names and scopes as libcst's scope analysis sees them, for the names imports bind.

A use sees the earlier bindings of its own scope, else (when it has none there) the
enclosing scopes'; a function does not see class-level names; `global` and `nonlocal` send a
binding to the module or the enclosing function. `codemods.model` records the bindings and
resolves every use of an imported name through `Scope.referents`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

@dataclass(eq=False)
class Binding:
    """A name bound in a scope: by an import (`qname` set) or otherwise (`qname` None)."""

    name: str
    scope: "Scope"
    pos: tuple                        # from where on a use in the same scope sees it
    qname: Optional[str] = None       # the qualified name an import binds `name` to
    alias: Optional["ImportAlias"] = None
    uses: list = field(default_factory=list)   # References whose root resolves (also) here
    stmt: Optional[object] = None     # the ast statement that binds it (None: a parameter, ...)


@dataclass(eq=False)
class Scope:
    kind: str                          # module | function | class | comprehension
    parent: Optional["Scope"]
    bindings: dict = field(default_factory=dict)
    globals: set = field(default_factory=set)
    nonlocals: set = field(default_factory=set)

    def bind(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)

    def visible_parent(self, from_scope: "Scope") -> Optional["Scope"]:
        parent = self.parent
        while parent is not None and parent.kind == "class" and parent is not from_scope:
            parent = parent.parent
        return parent

    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def lookup(self, name: str, from_scope: "Scope") -> list:
        """Every binding of `name` a use in `from_scope` may see (libcst's _resolve_scope_for_access)."""
        if name in self.globals and self.parent is not None:
            return self.module().bindings.get(name, [])
        if name in self.nonlocals and self.parent is not None:
            parent = self.visible_parent(from_scope)
            return parent.lookup(name, from_scope) if parent is not None else []
        if name in self.bindings:
            return self.bindings[name]
        parent = self.visible_parent(from_scope)
        return parent.lookup(name, from_scope) if parent is not None else []

    def referents(self, name: str, pos: tuple) -> list:
        """The bindings a use of `name` at `pos` refers to: earlier ones of its own scope, or
        the enclosing scopes' (libcst's Access.record_assignments)."""
        found = self.lookup(name, self)
        seen = [b for b in found if b.scope is not self or b.pos < pos]
        if not seen and found:
            parent = self.visible_parent(self)
            seen = parent.lookup(name, self) if parent is not None else []
        return seen

"""TF 1.x's variable and name scopes: which name each variable gets, and when one is reused.

TF 2 has no variable scopes; the translator keeps their meaning instead:
- `tf.get_variable("w")` under `tf.variable_scope("d")` is the variable `d/w`; under a scope
  with `reuse=True` (or `AUTO_REUSE` once it exists) it is the same variable again, so the
  TF 2 code uses the same `tf.Variable` object; a second creation without reuse raised in
  TF 1.x (a refusal here);
- `tf.layers.dense` names its variables `dense`, `dense_1`, ... within the current variable
  scope; entering a scope again restarts those counts (TF 1.x closed its sub-scopes), which is
  how a GAN's second `discriminator(..., reuse=True)` finds `discriminator/dense` again;
- `tf.Variable(name="W")` under `tf.name_scope("layer1")` is `layer1/W`, made unique (`W_1`).
These names decide `tf.get_collection(..., scope=...)` (a prefix regex on them) and the names
read from a TF 1.x checkpoint.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst


UNKNOWN = object()  # a `reuse=` value tf1clip does not know


def reuse_flag(node, qname: Optional[str]) -> object:
    """What a `reuse=` argument asks (`qname`: the qualified name its value reads, if any): True, "auto"
    (`tf.AUTO_REUSE`), None (`False` and `None`: TF 1.x inherits the enclosing scope's), or UNKNOWN."""
    if node is None:
        return None
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True if node.value == "True" else None
    return "auto" if qname == "tensorflow.AUTO_REUSE" else UNKNOWN


def join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


@dataclass
class Frame:
    var_path: str          # the variable scope ("" at the root)
    name_path: str         # the name scope ("" at the root)
    reuse: object = None   # None (inherit: False at the root), True, or "auto"
    name_only: bool = False   # a name_scope's frame: no variable scope of its own
    initializer: object = None  # variable_scope(initializer=...): its TF 2 expression (inherited)


@dataclass
class VarScopes:
    frames: list = field(default_factory=lambda: [Frame("", "")])
    _layer_counts: dict = field(default_factory=dict)   # (var_path, base) -> next index
    _name_counts: dict = field(default_factory=dict)    # name scope / op name -> times used
    _var_scope_counts: dict = field(default_factory=dict)

    @property
    def top(self) -> Frame:
        return self.frames[-1]

    def initializer(self):
        """The initializer `tf.get_variable` uses here when given none (variable_scope(initializer=...),
        the innermost one), else None."""
        for f in reversed(self.frames):
            if f.initializer is not None:
                return f.initializer
        return None

    def reuse(self) -> object:
        for f in reversed(self.frames):
            if f.reuse is not None:
                return f.reuse
        return False

    # -- entering and leaving ---------------------------------------------------------------------
    def enter_variable_scope(self, name: Optional[str], reuse: object = None, absolute: bool = False,
                             default_name: Optional[str] = None, initializer=None) -> Frame:
        parent = self.top
        if name is None:
            base = default_name or "scope"
            n = self._var_scope_counts.get(join(parent.var_path, base), 0)
            self._var_scope_counts[join(parent.var_path, base)] = n + 1
            name = base if n == 0 else f"{base}_{n}"
        var_path = name if absolute else join(parent.var_path, name)
        # TF 1.x closes the sub-scopes of a scope entered again: layer names restart at `dense`
        for key in [k for k in self._layer_counts if k[0] == var_path or k[0].startswith(var_path + "/")]:
            del self._layer_counts[key]
        name_path = self.unique_name(name if absolute else join(parent.name_path, name.rsplit("/", 1)[-1]))
        frame = Frame(var_path, name_path, reuse if reuse else None, initializer=initializer)
        self.frames.append(frame)
        return frame

    def enter_name_scope(self, name: Optional[str]) -> Frame:
        parent = self.top
        if name is None or name == "":
            path = ""
        elif name.endswith("/"):
            path = name[:-1]
        else:
            path = self.unique_name(join(parent.name_path, name))
        frame = Frame(parent.var_path, path, None, name_only=True)
        self.frames.append(frame)
        return frame

    def leave(self) -> None:
        self.frames.pop()

    # -- names ------------------------------------------------------------------------------------
    def unique_name(self, path: str) -> str:
        """TF 1.x's graph-unique name for an op or name scope: `a`, `a_1`, `a_2`, ..."""
        n = self._name_counts.get(path, 0)
        self._name_counts[path] = n + 1
        return path if n == 0 else f"{path}_{n}"

    def get_variable_name(self, name: str) -> str:
        return join(self.top.var_path, name)

    def variable_name(self, name: Optional[str]) -> str:
        """The name `tf.Variable(name=...)` gets: under the name scope, made unique."""
        return self.unique_name(join(self.top.name_path, name or "Variable"))

    def layer_name(self, base: str, given: Optional[str]) -> str:
        """The variable scope a `tf.layers` layer creates its variables in."""
        if given is not None:
            return join(self.top.var_path, given)
        key = (self.top.var_path, base)
        n = self._layer_counts.get(key, 0)
        self._layer_counts[key] = n + 1
        return join(self.top.var_path, base if n == 0 else f"{base}_{n}")

"""Items of Python loops over TensorFlow objects, and the reads TF 2 answers differently.

TF 1.x code walks its variables and gradients with Python loops and comprehensions
(`for v in tf.trainable_variables():`, `[... for g, v in grads_and_vars]`) and picks among them
by what TF 1.x gave each one:

* its graph name, op, graph, device or `get_shape()`: the TF2 tier's Keras 3 variables are named
  `kernel` and `bias` without their scope, and have no op, graph or `get_shape`;
* its identity: TF 1.x compared tensors and variables with `==` and `in` by identity, TF 2
  compares their values (element-wise, or an error).

A filter like `[v for v in tf.trainable_variables() if v.name.startswith("head")]` would then
pick other variables, or none, and train something else without a word. The model keeps such
items host values; `Items` remembers what is read of them and refuses it once the loop's iterable
is known to hold TensorFlow objects (`model.holds_tf`).
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from codemods.tf2.helpers import target_names
from codemods.tf2.model import AV, Element, holds_tf

# attributes of a tensor or variable whose TF 2 answer differs from TF 1.x's
TF1_ONLY = frozenset({"name", "op", "graph", "device", "get_shape"})
# comparisons that were identity tests on tensors and variables in TF 1.x
IDENTITY_TESTS = (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)


def attribute_reason(code: str) -> str:
    return (f"`{code}` of an item of a list of variables or tensors: TF 2's variables have other names "
            "(Keras 3 names them `kernel`, `bias`), and no op, graph or get_shape")


def comparison_reason(code: str) -> str:
    return (f"`{code}` compares variables or tensors: TF 1.x compared them by identity, TF 2 compares "
            "their values")


def comprehension_bindings(for_in: Optional[cst.CompFor]) -> dict:
    """name -> the iterable node it ranges over, for every `for` of a comprehension."""
    out = {}
    while for_in is not None:
        out.update({n: for_in.iter for n in target_names(for_in.target)})
        for_in = for_in.inner_for_in
    return out


class Items:
    """The loops being read (innermost last) and what their items had read of them."""

    def __init__(self):
        self._frames: list = []   # [(bindings: name -> iterable node, reads: [(name, reason, line)])]

    def push(self, bindings: dict) -> None:
        self._frames.append((bindings, []))

    def read(self, name: str, reason: str, line: int) -> bool:
        """Remember `reason` (at `line`) for the innermost loop binding `name`; False if none binds it."""
        for bindings, reads in reversed(self._frames):
            if name in bindings:
                reads.append((name, reason, line))
                return True
        return False

    def pop(self, value_of: Callable[[cst.CSTNode], AV]) -> Optional[tuple]:
        """Close the innermost loop: the first (reason, line) whose item ranges over TensorFlow objects."""
        bindings, reads = self._frames.pop()
        for name, reason, line in reads:
            if holds_tf(value_of(bindings[name])):
                return reason, line
        return None


def tf_item(av: AV) -> bool:
    """An item bound by a host loop over TensorFlow objects."""
    return isinstance(av, Element)

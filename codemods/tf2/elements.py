"""Items of Python loops over TensorFlow objects, and the reads TF 2 answers differently.

TF 1.x code walks its variables and gradients with Python loops and comprehensions
(`for v in tf.trainable_variables():`, `[... for g, v in grads_and_vars]`) and picks among them
by what TF 1.x gave each one:

* its graph name, op, graph or device: the TF2 tier's Keras 3 variables are named `kernel` and
  `bias` without their scope, and have no op or graph; its `get_shape()`, which a Keras 3 variable
  lacks, is read as `.shape` (the same TensorShape for a `tf.Variable` and a Keras variable);
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

from codemods.children import children
from codemods.tf2.syntax import target_names
from codemods.tf2.model import AV, Element, exact_names, holds_tf

# attributes of a tensor or variable whose TF 2 answer differs from TF 1.x's
TF1_ONLY = frozenset({"name", "op", "graph", "device"})
# an item's `get_shape()`, written `.shape` in TF 2: right only where the loop ranges over TensorFlow objects
SHAPE_READ = "get_shape"
# comparisons that were identity tests on tensors and variables in TF 1.x
IDENTITY_TESTS = (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)
# list methods that compare their argument with the items (`tvars.index(v)`)
IDENTITY_METHODS = frozenset({"index", "count", "remove"})


def attribute_reason(code: str) -> str:
    return (f"`{code}` of an item of a list of variables or tensors: TF 2's variables have other names "
            "(Keras 3 names them `kernel`, `bias`), and no op or graph")


def shape_reason(code: str) -> str:
    return (f"`{code}` of an item not known to be a TensorFlow object: the TF 2 form reads `.shape`, which only a "
            "tensor or variable answers as TF 1.x's get_shape() did")


def comparison_reason(code: str) -> str:
    return (f"`{code}` compares variables or tensors: TF 1.x compared them by identity, TF 2 compares "
            "their values")


def param_reads(fn) -> dict:
    """parameter -> the reason, for each parameter of a function or lambda that its body reads as TF 1.x
    gave a variable (`def is_head(v): return v.name.startswith("head")`, `key=lambda v: v.name`)."""
    params = {p.name.value for p in [*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params]}
    out: dict = {}
    stack = [fn.body]
    while stack:
        n = stack.pop()
        stack.extend(children(n))
        if isinstance(n, cst.Attribute) and n.attr.value in TF1_ONLY and isinstance(n.value, cst.Name) \
                and n.value.value in params:
            out.setdefault(n.value.value, attribute_reason(f"{n.value.value}.{n.attr.value}"))
        elif isinstance(n, cst.Comparison):
            operands = [n.left, *(t.comparator for t in n.comparisons)]
            tests = any(isinstance(t.operator, IDENTITY_TESTS) for t in n.comparisons)
            for o in operands:
                if tests and isinstance(o, cst.Name) and o.value in params:
                    out.setdefault(o.value, comparison_reason(f"{o.value} == ..."))
    return out


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

    def read(self, name: str, reason: str, line: int, attr: str = "") -> bool:
        """Remember `reason` (at `line`) for the innermost loop binding `name`; False if none binds it."""
        for bindings, reads in reversed(self._frames):
            if name in bindings:
                reads.append((name, reason, line, attr))
                return True
        return False

    def pop_all(self) -> list:
        """Close the innermost frame, whatever its names range over: its [(name, reason, line)]."""
        return self._frames.pop()[1]

    def pop(self, value_of: Callable[[cst.CSTNode], AV]) -> Optional[tuple]:
        """Close the innermost loop: the first (reason, line) whose item ranges over TensorFlow objects (a
        `.name` is kept over variables written under TF 1.x's names)."""
        bindings, reads = self._frames.pop()
        for name, reason, line, attr in reads:
            over = value_of(bindings[name])
            if attr == SHAPE_READ:
                if not holds_tf(over):
                    return reason, line
            elif holds_tf(over) and not (attr == "name" and exact_names(over)):
                return reason, line
        return None


def tf_item(av: AV) -> bool:
    """An item bound by a host loop over TensorFlow objects."""
    return isinstance(av, Element)

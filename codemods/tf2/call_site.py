"""A TensorFlow call being read: what a construct converter is given, and what it may ask.

A converter (`variables`, `layers`, `training`, ...) is a function of a `CallSite`: the call
with its arguments already rewritten, its canonical name, the receiver of a method call, and
the expression being read (`site.ev`, an `Evaluation`) with the program it belongs to
(`site.tr`, a `program.Program`). `Evaluation` is the part of `expressions.Evaluator` a converter
uses: the abstract value of a node already read, the graph names read so far, what the
statement differentiates or trains. Converters are given it; they never import the
interpreter, which imports them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol

import libcst as cst

from codemods.tf2.model import AV
from codemods.tf2.names import short

if TYPE_CHECKING:
    from codemods.tf2.program import Program


class Evaluation(Protocol):
    """One expression (or statement) being read by `expressions.Evaluator`, as converters see it."""

    tr: "Program"
    env: dict                       # name -> abstract value, where the expression is read
    target: Optional[str]           # the name the whole expression is bound to (`w = tf.Variable(...)`)
    target_node: Optional[cst.BaseExpression]  # the whole assignment target, when the expression is assigned
    top: Optional[cst.CSTNode]      # the expression being read
    uses: set                       # graph names read
    grads: list                     # losses this expression differentiates
    gradient_calls: int
    gradient_list: bool             # the expression is a tf.gradients(...) list
    zip_idiom: Optional[tuple]      # (gradients name, loss, variables) of `g, v = zip(*opt.compute_gradients(...))`
    train: object                   # a train op built by this expression (training.TrainInfo), else None

    def evaluate(self, node: cst.BaseExpression) -> tuple:
        """(abstract value, TF 2 node) of `node`."""

    def value_of(self, node: Optional[cst.CSTNode]) -> AV:
        """The abstract value of a node this expression has produced."""

    def value_of_original(self, node: cst.CSTNode) -> AV:
        """The abstract value of an input node already read (e.g. a comprehension's iterable)."""

    def loop_iter(self, name: str):
        """What `name` ranges over in an enclosing comprehension (innermost first), else None."""


@dataclass
class CallSite:
    """A call being evaluated: what a construct handler gets."""

    ev: Evaluation
    qname: str                 # canonical qualified name (TF calls) or method name (`*.minimize`)
    node: cst.Call             # the call with its arguments already rewritten
    original: cst.Call
    receiver: Optional[AV] = None  # for a method call: the object's abstract value

    @property
    def tr(self) -> "Program":
        return self.ev.tr

    @property
    def target(self) -> Optional[str]:
        """The name this call's result is bound to, when the call is the whole right-hand side."""
        return self.ev.target if self.original is self.ev.top else None

    def arg(self, index: Optional[int], keyword: str) -> tuple:
        """(node, abstract value) of argument `keyword` (or positional `index`), else (None, None)."""
        for a in self.node.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a.value, self.ev.value_of(a.value)
        positional = [a for a in self.node.args if a.keyword is None and not a.star]
        if index is not None and 0 <= index < len(positional):
            a = positional[index]
            return a.value, self.ev.value_of(a.value)
        return None, None

    def keywords(self) -> set:
        return {a.keyword.value for a in self.node.args if a.keyword is not None}

    def positional(self) -> int:
        return len([a for a in self.node.args if a.keyword is None])

    def starred(self) -> bool:
        return any(a.star for a in self.node.args)

    def refuse(self, reason: str):
        self.tr.refuse(reason)

    def only(self, allowed: set, positional: int) -> None:
        """Refuse arguments beyond `allowed` keywords and `positional` positional ones."""
        extra = self.keywords() - allowed
        if self.starred():
            self.refuse(f"`{short(self.qname)}` with *args/**kwargs is not converted")
        if extra or self.positional() > positional:
            what = ", ".join(sorted(extra)) if extra else f"more than {positional} positional arguments"
            self.refuse(f"`{short(self.qname)}` with {what}: not mapped")

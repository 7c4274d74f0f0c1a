"""Gradients and optimizers of a TF 1.x eager script: the part of `eager.EagerTranslator` that trains.

* `tfe.implicit_value_and_gradients(f)` / `tfe.implicit_gradients(f)` → a small helper written
  once into the script, with `tf.GradientTape`: TF 1.x's `implicit_val_and_grad` (the trainable
  variables `f` read, in creation order; the same errors when `f` returns None or reads none);
* `tf.train.XOptimizer(...)` → its row of `optimizer_table` (arguments by
  `optimizers.optimizer_args`, Adam's exact twin written into the script), its arguments plain
  numbers; a gradient that is an IndexedSlices refuses optimizers that update repeated rows
  otherwise than TF 1.x;
* `opt.apply_gradients(pairs, global_step=gs)` → `opt.apply_gradients(pairs)` then
  `gs.assign_add(1)`.
`EagerTraining` is a base of `EagerTranslator`: it reads the translator's module, names, namer,
preamble and the statement being read (`_statement`, `_statement_is`, `_after`, `_optimizers`).
"""
from __future__ import annotations

import libcst as cst
from libcst.helpers import parse_template_module

from codemods.tf2 import emit, optimizer_twins
from codemods.tf2._base import arg, walk
from codemods.tf2.model import HOST
from codemods.tf2.ops import SAMPLED_LOSSES, SPARSE_READS
from codemods.tf2.optimizer_table import OptimizerRow
from codemods.tf2.optimizers import optimizer_args
from codemods.tf2.syntax import assignments, walk_statements

IMPLICIT_VALUE_AND_GRADIENTS = '''

def {vg}(f):
    # TF 1.x's tfe.implicit_value_and_gradients (tensorflow/python/eager/backprop.py): f's value and the
    # (gradient, variable) pairs of the trainable variables f read, in their creation order.

    def value_and_gradients(*args, **kwargs):
        with {tf}.GradientTape() as tape:
            value = f(*args, **kwargs)
        if value is None:
            raise ValueError("Cannot differentiate a function that returns None; did you forget to return a "
                             "value from " + f.__name__ + "?")
        variables = tape.watched_variables()
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was being computed.")
        return value, list(zip(tape.gradient(value, variables), variables))

    return value_and_gradients
'''


IMPLICIT_GRADIENTS = '''

def {g}(f):
    # TF 1.x's tfe.implicit_gradients: the (gradient, variable) pairs only.
    value_and_gradients = {vg}(f)

    def gradients(*args, **kwargs):
        return value_and_gradients(*args, **kwargs)[1]

    return gradients
'''


class EagerTraining:
    """Gradient helpers, optimizers and their updates, for `eager.EagerTranslator`."""

    def _gradient_helper(self, member: str) -> str:
        """The name of the helper for `tfe.<member>`, written once into the script (with what it uses)."""
        if member not in self.emitted:
            holes = {"tf": cst.Name(self.alias)} if member == "implicit_value_and_gradients" else {
                "vg": cst.Name(self._gradient_helper("implicit_value_and_gradients"))}
            self.emitted[member] = name = self.namer.fresh(member)
            holes["g" if member == "implicit_gradients" else "vg"] = cst.Name(name)
            template = IMPLICIT_GRADIENTS if member == "implicit_gradients" else IMPLICIT_VALUE_AND_GRADIENTS
            self.preamble.extend(parse_template_module(template, **holes).body)
        return self.emitted[member]

    def _apply_gradients(self, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        """`opt.apply_gradients(pairs, global_step=gs, name=n)` → `opt.apply_gradients(pairs)`, then
        `gs.assign_add(1)` (TF 1.x incremented the step after the update)."""
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or len(positional) > 3 or keywords - {"grads_and_vars", "global_step",
                                                                               "name"}:
            self.refuse(original, "apply_gradients with arguments beyond (grads_and_vars, global_step, name): "
                                  "not converted")
        if len(positional) == 1 and not keywords - {"grads_and_vars"}:
            return call  # Keras 3's apply_gradients(grads_and_vars): the same call
        pairs = arg(call, 0, "grads_and_vars")
        step = arg(call, 1, "global_step")
        if pairs is None:
            self.refuse(original, "apply_gradients without grads_and_vars")
        if emit.code(original.func.value) not in self._optimizers:
            self.refuse(original, f"`{emit.code(original.func)}(...)` with global_step or name: `"
                                  f"{emit.code(original.func.value)}` is not assigned a tf.train optimizer in this file")
        if step is not None and not (isinstance(step, cst.Name) and step.value == "None"):
            if not self._statement_is(original) or len(self._statement.body) != 1:
                self.refuse(original, "apply_gradients(..., global_step=...) whose result is used: TF 2's "
                                      "increment is a statement of its own")
            self._after.setdefault(id(self._statement), []).append(emit.stmt("{gs}.assign_add(1)", gs=step))
            self.note(original, "apply_gradients(global_step=gs) → apply_gradients, then gs.assign_add(1)")
        return call.with_changes(args=[cst.Arg(pairs)])

    def _optimizer(self, row: OptimizerRow, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        opt = row.tf1.rsplit(".", 1)[1]
        if self._sparse and not (row.twin or row.tf1.endswith("GradientDescentOptimizer")):
            self.refuse(original, f"a gradient is an IndexedSlices (a variable read by index at line {self._sparse}) "
                                  f"and Keras 3's {row.keras.rsplit('.', 1)[-1]} updates repeated rows differently "
                                  f"from TF 1.x's {opt}")
        for a in call.args:
            if not a.star and not self._number(a.value, set()) and not (a.keyword and a.keyword.value == "name"):
                self.refuse(original, f"{opt}'s argument `{emit.code(a.value)}` is not a number literal (or a name "
                                      "bound only to one): a Keras optimizer reads a tensor or variable once")
        args, fixed, _ = optimizer_args(_Site(self, original), row, call)
        cls = self.tf(row.keras)
        if row.twin:
            if row.keras not in self.emitted:
                self.emitted[row.keras] = self.namer.fresh(row.keras)
                self.preamble.extend(optimizer_twins.definitions(row.keras, self.emitted[row.keras], self.alias))
            cls = cst.Name(self.emitted[row.keras])
        self.note(original, f"tf.train.{opt} → {row.render()}: {row.why}"
                  + (" (TF 1.x's defaults written out)" if fixed else ""))
        return emit.with_args(emit.call(cls), args)

    def _number(self, node, seen: set) -> bool:
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.UnaryOperation):
            return self._number(node.expression, seen)
        if isinstance(node, cst.BinaryOperation):
            return self._number(node.left, seen) and self._number(node.right, seen)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return True
            if node.value in seen:
                return False
            values = [v for st in walk_statements(self.module) for t, v in assignments(st)
                      if isinstance(t, cst.Name) and t.value == node.value]
            return bool(values) and all(v is not None and self._number(v, seen | {node.value}) for v in values)
        return False

    def _sparse_line(self) -> int:
        """The first line reading a variable by index (its gradient is an IndexedSlices), else 0."""
        for node in walk(self.module):
            if isinstance(node, cst.Call) and self.names.qualified(node.func) in (*SPARSE_READS, *SAMPLED_LOSSES):
                return self.names.line(node)
        return 0


class _Site:
    """What `optimizers.optimizer_args` asks of a call site: its values are plain Python here."""

    def __init__(self, tr: "EagerTraining", node: cst.Call):
        self.tr, self.node, self.ev = tr, node, self

    def value_of(self, node):
        return HOST

    def refuse(self, reason: str):
        self.tr.refuse(self.node, reason)

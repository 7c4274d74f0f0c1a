"""Plain Python values that graph code reads: TF 1.x read them once, when it built the graph.

A step function reads them when it is traced, which is later: after the session code ran. The
two agree while nothing assigns the value in between. For an attribute of a model object
(`tf.layers.dropout(h, 0.5, training=self.training)`) that is assigned again later
(`self.training = True` before an epoch):
- when every assignment of it is a literal on a line of its own in a method (not in a loop, a
  condition or a `try`), the program is read in the order it runs, so the literal it holds
  where the graph reads it is what TF 1.x built with: the step reads that literal;
- otherwise it is refused. The two branches of one `if` (a value chosen in `__init__`) cannot
  both run, so they count as one assignment.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.children import children
from codemods.tf2.model import HOST, Instance
from codemods.tf2.syntax import is_literal

if TYPE_CHECKING:
    from codemods.tf2.program import Program


def assigned(instance: "Instance", attr: str, value: Optional[cst.BaseExpression]) -> None:
    """`instance.attr = value` was read (value None: not a plain value)."""
    if value is not None and is_literal(value):
        instance.literals[attr] = value
    else:
        instance.literals.pop(attr, None)


def _assignments(module: cst.Module, attr: str) -> list:
    """[(statement, {id(if): branch} of the `if`s around it, directly in a function body?)] of every
    statement that assigns `<something>.<attr>` (`=`, `+=`, or as one of several targets)."""
    found: list = []

    def visit(node, branches: dict, straight: bool):
        if isinstance(node, cst.If):
            visit(node.test, branches, False)
            visit(node.body, {**branches, id(node): "body"}, False)
            if node.orelse is not None:
                visit(node.orelse, {**branches, id(node): "else"}, False)
            return
        if isinstance(node, cst.FunctionDef):
            for st in node.body.body:
                visit(st, branches, True)
            return
        targets = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        if any(isinstance(e, cst.Attribute) and e.attr.value == attr for t in targets for e in _walk(t)):
            found.append((node, branches, straight))
        inner = straight and isinstance(node, cst.SimpleStatementLine)
        for child in children(node):
            visit(child, branches, inner)

    visit(module, {}, False)
    return found


def _both_can_run(a: dict, b: dict) -> bool:
    return not any(k in b and a[k] != b[k] for k in a)


def attributes(tr: "Program", body: list, instance: "Instance", self_name: str) -> list:
    """The value statements `body` made in a method of `instance`, reading its plain attributes as
    TF 1.x did when it built them (see the module's docstring)."""
    literal: dict = {}
    for n in _walk(cst.Module(body=body)):
        if not (isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == self_name
                and instance.attrs.get(n.attr.value) is HOST):
            continue
        attr = n.attr.value
        found = _assignments(tr.module, attr)
        if not any(_both_can_run(a[1], b[1]) for i, a in enumerate(found) for b in found[i + 1:]):
            continue
        plain = all(straight and isinstance(st, cst.Assign) and is_literal(st.value) for st, _, straight in found)
        if not plain or attr not in instance.literals:
            tr.refuse(f"`{tr.code(n)}` is read by graph code and assigned again elsewhere: TF 1.x read it once, "
                      "when the graph was built; a TF 2 step would read it when traced: not converted")
        literal[attr] = instance.literals[attr]
    if not literal:
        return body
    tr.note(f"`{self_name}.{', '.join(sorted(literal))}` read as the value it had when TF 1.x built the graph "
            f"({', '.join(tr.code(v) for _, v in sorted(literal.items()))}): the session code assigns it again later")
    return [st.visit(_Literal(self_name, literal)) for st in body]


class _Literal(cst.CSTTransformer):
    def __init__(self, self_name: str, literal: dict):
        super().__init__()
        self.self_name, self.literal = self_name, literal

    def leave_Attribute(self, original, updated):
        if isinstance(original.value, cst.Name) and original.value.value == self.self_name and \
                original.attr.value in self.literal:
            return self.literal[original.attr.value]
        return updated


def _walk(node):
    yield node
    for child in children(node):
        yield from _walk(child)


__all__ = ["assigned", "attributes"]

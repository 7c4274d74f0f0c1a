"""Feed dicts: which placeholder each value of a `sess.run(..., feed_dict)` feeds.

A dict literal of placeholders, or a name bound to one (`feed = {x: batch_x, y: batch_y}`), read
again where it is fed when its values are the same there (`value_snapshots`); a dict that is not
one of those is refused, saying what it is.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, reaching, value_snapshots
from codemods.tf2.model import Input, Other, OtherKind

if TYPE_CHECKING:
    from codemods.tf2.program import Program


def feeds_of(tr: "Program", node) -> list:
    """[(placeholder name, value node)] in the dict's order."""
    if node is None:
        return []
    if isinstance(node, cst.Name):
        av = tr.env.get(node.value)
        if isinstance(av, Other) and av.kind == OtherKind.FEED:
            av.info["uses"] += 1
            return list(av.info["items"])
        tr.refuse(f"feed_dict `{node.value}` is not a dict literal of placeholders bound once: not converted")
    if not isinstance(node, cst.Dict):
        tr.refuse(f"a feed_dict that is not a dict literal (or a name bound to one) is not converted")
    out = []
    for e in node.elements:
        if not isinstance(e, cst.DictElement):
            tr.refuse("a feed_dict with ** is not converted")
        ev = tr.evaluator(tr.env)
        key_av, _ = ev.evaluate(e.key)
        if not isinstance(key_av, Input):
            tr.refuse(f"feeding `{emit.code(e.key)}`, which is not a placeholder, is not converted")
        ev = tr.evaluator(tr.env)
        value_av, value = ev.evaluate(e.value)
        if value_av.graph:
            tr.refuse("a feed value computed from graph values is not converted")
        out.append((key_av.placeholder.name, value))
    return out


def feed_dict_binding(tr: "Program", target: str, value) -> Optional[list]:
    """A host `target = {placeholder: value, ...}`: its items, read again where it is fed. None when it is not
    a dict of placeholders, or when a value might not be the same there: a value computed by an expression,
    or reading a name that another definition reaches where the dict is fed (`batch` bound again between).
    Such a dict keeps its place (`runtime_feeds.bind`)."""
    if not (isinstance(value, cst.Dict) and value.elements):
        return None
    items, read = [], set()
    for e in value.elements:
        if not isinstance(e, cst.DictElement):
            return None
        key_av, _ = tr.evaluator(tr.env).evaluate(e.key)
        if not isinstance(key_av, Input):
            return None
        if not isinstance(e.value, (cst.Name, cst.Attribute, cst.Subscript, cst.Integer, cst.Float)):
            return None
        items.append((key_av.placeholder.name, e.value))
        read |= reaching.read_names(e.value)
    if not value_snapshots.still_the_same(tr.module, tr.names.line, frozenset(tr.names.aliases), tr.line, target,
                                          read):
        return None
    return items


def is_feed_dict(tr: "Program", value) -> bool:
    """`value` is a dict literal whose keys are all placeholders."""
    return isinstance(value, cst.Dict) and bool(value.elements) and all(
        isinstance(e, cst.DictElement) and isinstance(tr.evaluator(tr.env).evaluate(e.key)[0], Input)
        for e in value.elements)

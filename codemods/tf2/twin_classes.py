"""The TF 2 twins of TF 1.x's rnn cells and rnn functions, written into the script once each.

The twins (`codemods/tf2/twins/`) compute TF 1.x's math with TF 1.x's weight layout; `twin_class`
writes a twin's class (and the twins it needs) after the script's imports the first time a
converter uses it, under a name the script leaves free. `instantiate` gives the twin's
constructor and call for a TF 1 call (a twin that cannot reproduce it is a refusal), and
`literal` reads the arguments that decide a twin's variables (a literal, or a module-level name
bound once to one).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import twins
from codemods.tf2._base import NameTransformer
from codemods.tf2.names import short

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite
    from codemods.tf2.program import Program


def twin_class(tr: "Program", twin) -> str:
    """The script's name for `twin`'s class, its source (and what it needs) written once after the imports."""
    names = {m.__name__.rsplit(".", 1)[1]: m for m in twins.MODULES}
    for need in twin.NEEDS:
        twin_class(tr, names[need])
    key = f"twin:{twin.CLASS}"
    if key in tr.emitted:
        return tr.emitted[key]
    renames = {m.CLASS: tr.emitted[f"twin:{m.CLASS}"] for m in twins.MODULES if f"twin:{m.CLASS}" in tr.emitted}
    renames["tf"] = tr.alias
    for module in getattr(twin, "IMPORTS", ()):
        local = tr.module_name(module)
        if local == module and module in tr.namer.taken and tr.names.bindings.get(module) != module:
            tr.refuse(f"the script binds `{module}`, which the TF 2 twin `{twin.CLASS}` imports: not converted")
        renames[module] = local

    def make(local: str) -> list:
        source = cst.parse_module(twin.SOURCE)
        return list(source.visit(_Rename({**renames, twin.CLASS: local})).body)

    return tr.preamble_function(key, make, twin.CLASS)


class _Rename(NameTransformer):
    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def leave_Name(self, original, updated):
        if self.skipped(original) or updated.value not in self.mapping or self.mapping[updated.value] == updated.value:
            return updated
        return updated.with_changes(value=self.mapping[updated.value])


def instantiate(site: "CallSite", name: Optional[str] = None, node: Optional[cst.Call] = None) -> twins.Made:
    try:
        return twins.instantiate(site.qname, site.node if node is None else node, name)
    except twins.TwinUnavailable as exc:
        site.refuse(f"`{short(site.qname)}` is not converted: {exc.reason}")


UNKNOWN = object()


def literal(tr: "Program", node) -> object:
    """A literal's value (True/False/None/int/str), through a module-level name bound once; else UNKNOWN."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Name):
        node = tr.host_literal(node.value)
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    return UNKNOWN

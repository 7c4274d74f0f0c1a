"""A graph value's static shape bound to a name: `dims = h.get_shape().as_list()`, `_, n = x.get_shape().as_list()`.

TF 1.x ran that statement once, while it built the graph: `dims` is a Python list of ints (None where
TF 1.x did not know the dimension), and `n` an int. In TF 2 the value `h` exists only inside a step,
so the statement cannot stay where it is; what it computed is known here when `shapes` knows the
dimensions:

- every dimension known (`shapes.static_dim`): the statement becomes that list or those numbers,
  plain Python where it was (`dims = [8, 3]`, `n = 3`);
- otherwise the statement is dropped and the name stands for the shape (`dims[1]` is read as the
  number it holds, as `h.get_shape().as_list()[1]` is). A read of it that is not such a dimension
  is refused where the expression reading it is evaluated (`Evaluator.evaluate`), and any other
  read is a name the TF2 program no longer binds, refused by `output_checks` with the reason kept
  here (`Program.dropped`).

A name is dropped only when nothing else in the program binds it (one binding site, or a fresh name
of an inlined helper), or when nothing reads it at all (`_`): every read then reads this binding.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, symbols
from codemods.tf2 import shapes as shp
from codemods.tf2.model import HOST, Other, OtherKind
from codemods.tf2.syntax import name_nodes

if TYPE_CHECKING:
    from codemods.tf2.program import Program


def is_static_shape(av) -> bool:
    """`av` is a graph value's static shape (`x.shape`, `x.get_shape()`, `.as_list()` of either)."""
    return isinstance(av, Other) and av.kind == OtherKind.SHAPE and "of" in av.info


def bind(tr: "Program", st: cst.SimpleStatementLine, target: cst.BaseExpression, value: cst.BaseExpression,
         av: Other, out: list) -> bool:
    """Read `target = value` (`value` a static shape, `av`) as above, into `out`; False when the target is
    not a name, or a tuple or list of names one per dimension of an `as_list()` (the caller reads it)."""
    dims = shp.of(av.info["of"])
    known = None if dims is None else [shp.static_dim(av.info["of"], k, tr.folded) for k in range(len(dims))]
    said = f"{emit.code(target)} = {emit.code(value)}"
    if isinstance(target, cst.Name):
        if av.info.get("as_list") and known is not None and all(d is not None for d in known):
            out.append(st.with_changes(body=[cst.Assign([cst.AssignTarget(target)], cst.List(
                [cst.Element(d) for d in known]))]))
            tr.env[target.value] = HOST
            tr.note(f"`{said}` → the list TF 1.x computed while it built the graph")
            return True
        _drop(tr, target.value, said, av)
        tr.note(f"`{said}` → each `{target.value}[k]` read is the number TF 1.x knew while it built the graph")
        return True
    if not (isinstance(target, (cst.Tuple, cst.List)) and av.info.get("as_list") and known is not None
            and len(target.elements) == len(known)
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)):
        return False
    kept = []
    for el, dim in zip(target.elements, known):
        name = el.value.value
        if dim is not None:
            kept.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], dim)]))
            tr.env[name] = HOST
            if _bound_once(tr, name) and shp.literal(dim) is not None:
                tr.folded[name] = shp.literal(dim)  # a number wherever it is read (a shape written with it)
        else:
            _drop(tr, name, said, Other(OtherKind.DIMENSION))
    if kept:
        kept[0] = kept[0].with_changes(leading_lines=st.leading_lines)
    out.extend(kept)
    tr.note(f"`{said}` → the numbers TF 1.x computed while it built the graph")
    return True


def _drop(tr: "Program", name: str, said: str, av: Other) -> None:
    if not _only_binding(tr, name):
        what = tr.inlined_names.get(name, name)
        tr.refuse(f"`{said}`: `{what}` would hold a static shape TF 1.x knew while it built the graph, with "
                  "dimensions tf1clip does not know, and other statements bind it too: not converted")
    tr.env[name] = Other(av.kind, {**av.info, "dropped": name})
    tr.dropped[name] = reason(tr, name, said, av.kind)


def _bound_once(tr: "Program", name: str) -> bool:
    if name in tr.inlined_names:  # a helper's local read in place: a fresh name, bound there only
        return True
    sites = tr.names.sites
    return sites is not None and len(sites.get(name, ())) == 1 and name not in tr.parameter_names()


def _only_binding(tr: "Program", name: str) -> bool:
    return _bound_once(tr, name) or name not in symbols.loaded(tr.module.code)  # or read nowhere (`_`)


def reason(tr: "Program", name: str, said: str, kind: OtherKind) -> str:
    what = tr.inlined_names.get(name, name)
    if kind == OtherKind.DIMENSION:
        return (f"`{what}` holds a dimension TF 1.x knew while it built the graph (`{said}`), which tf1clip "
                "does not know: not converted")
    return (f"`{what}` holds the static shape TF 1.x knew while it built the graph (`{said}`), which tf1clip "
            f"does not know whole; it reads only `{what}[k]` where dimension k is a known number: not converted")


def is_dropped(av, name: str) -> bool:
    """`av`, the value of `name`, is a static shape or dimension whose statement was dropped (`bind`)."""
    return isinstance(av, Other) and av.info.get("dropped") == name


def dropped_reads(tr: "Program", node: cst.CSTNode, static_ids: set) -> Optional[str]:
    """The reason to refuse when `node` reads a dropped name other than as a dimension known (`static_ids`:
    the names read for a known dimension), else None."""
    for n in name_nodes(node):
        if n.value in tr.dropped and id(n) not in static_ids and is_dropped(tr.env.get(n.value), n.value):
            return tr.dropped[n.value]
    return None

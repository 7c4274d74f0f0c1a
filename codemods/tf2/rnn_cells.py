"""TF 1.x rnn cells in graph code → their exact TF 2 twin objects, made where TF 1.x made them.

A cell (`tf.nn.rnn_cell.BasicLSTMCell(16)`, `GRUCell`, `LSTMCell`, `MultiRNNCell([...])`,
`DropoutWrapper(cell, ...)`) is a Python object with no variables yet: it becomes the twin object
(`BasicLSTMCell(16)`, its class written into the script once: `twin_classes`), and the
translator keeps what it will create (`Cell`: its scope name, width, variables and state) for the
rnn call that runs it (`rnn`). A keep probability given a graph value is set in each step that
runs the rnn (`Feed`). `[GRUCell(n) for _ in range(3)]` makes three cells; `LSTMStateTuple(c, h)`
and `cell.zero_state(batch, tf.float32)` are the twin's. A `reuse` argument, or a name or
activation that is not a literal, is a refusal at its line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from codemods.tf2 import emit, twins
from codemods.tf2._base import walk
from codemods.tf2.call_args import with_commas
from codemods.tf2.model import Instance, Other, OtherKind, Seq, SeqKind, StateRef, TFSymbol, Tensor
from codemods.tf2.names import short
from codemods.tf2.syntax import assignments, names_of, replace_names, walk_statements
from codemods.tf2.twin_classes import UNKNOWN, instantiate, literal, twin_class

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite
    from codemods.tf2.program import Program


@dataclass(eq=False)
class Cell:
    """What the translator knows of a cell object: its TF 1.x scope name, output width, the
    variables it will create (relative TF 1.x path, attribute path on the twin) and its state."""

    name: str
    units: Optional[cst.BaseExpression]            # output width (None: unknown)
    variables: list                                # [(relative TF 1.x path, ".kernel")] in creation order
    state: Callable                                # batch dim → abstract value of its state
    parts: list = field(default_factory=list)      # the cells it holds (a MultiRNNCell's, a wrapper's)
    used: bool = False                             # an rnn call created its variables already
    feeds: list = field(default_factory=list)      # [Feed]: arguments given graph values, set in each step
    unset: list = field(default_factory=list)      # [".kernel"]: variables made with no initializer of their
    #                                                own (TF 1.x: a variable_scope's initializer, if any)


@dataclass(eq=False)
class Feed:
    """A cell argument given a graph value (`DropoutWrapper(cell, output_keep_prob=keep_prob)`, a
    placeholder): the twin is made once without it, and each step that runs the rnn sets it first,
    `<rnn>.cell<path>.output_keep_prob = keep_prob`, as TF 1.x's graph read it at each run."""

    path: str                      # attribute path from the cell that holds it (".cells[0]"; "" itself)
    param: str                     # the twin's attribute (the TF 1 parameter's name)
    value: cst.BaseExpression      # the TF 2 expression (its names are placeholders or graph values)
    reads: dict                    # name it reads -> what the name denoted where the cell was made


def _lstm_state(c_width, h_width) -> Callable:
    return lambda b: Seq([Tensor([b, c_width]), Tensor([b, h_width])], SeqKind.TUPLE, ("c", "h"))


def cell(site: "CallSite"):
    tr = site.tr
    twin = twins.lookup(site.qname)
    if twin.CLASS == "DropoutWrapper":
        return _wrapper(site, twin)
    if site.starred() or any(site.ev.value_of(a.value).graph for a in site.node.args):
        site.refuse(f"`{short(site.qname)}` given graph values or *args is not converted")
    activation, act_av = site.arg(None, "activation")
    if activation is not None and literal(tr, activation) is not None and not _tf_function(act_av):
        site.refuse(f"`{short(site.qname)}(activation=...)` other than a TensorFlow function (`tf.nn.relu`) is not "
                    "converted: TF 1.x read strings and other callables in ways not reproduced here")
    reuse, _ = site.arg(None, "reuse")
    if reuse is not None and literal(tr, reuse) not in (None, False):
        site.refuse(f"`{short(site.qname)}(reuse=...)` shares variables by scope name: not converted")
    name_node, _ = site.arg(None, "name")
    name = twin.DEFAULT_NAME if name_node is None else literal(tr, name_node)
    if not isinstance(name, str):
        site.refuse(f"`{short(site.qname)}` with a name that is not a string literal is not converted")
    info = _multi(site) if twin.CLASS == "MultiRNNCell" else _single(site, twin, name)
    return Other(OtherKind.CELL, {"cell": info}), _made(site, twin, site.node)


def _made(site: "CallSite", twin, node: cst.Call) -> cst.Call:
    """The twin's constructor for the TF 1 call `node`, its class written into the script."""
    made = instantiate(site, node=node)
    site.tr.note(f"`{short(site.qname)}` → `{twin.CLASS}`, an exact TF 2 twin written into the script (TF 1.x's "
                 "math and variable names)")
    return made.construct.with_changes(func=cst.Name(twin_class(site.tr, twin)))


def _tf_function(av) -> bool:
    """A TensorFlow function referred to (`tf.nn.relu`, `tf.tanh`): TF 1.x called it as given."""
    if not isinstance(av, TFSymbol):
        return False
    parts = av.qname.split(".")
    return parts[0] == "tensorflow" and (len(parts) == 2 or (len(parts) == 3 and parts[1] in ("nn", "math")))


def _wrapper(site: "CallSite", twin):
    """`DropoutWrapper(cell, keep probabilities)`: a cell of the same name and variables (the wrapper
    opens no scope); a keep probability given a graph value (a fed placeholder) becomes a `Feed`."""
    tr = site.tr
    if site.starred():
        site.refuse(f"`{short(site.qname)}` with *args/**kwargs is not converted")
    params = [p for p, _ in twin.PARAMS]
    _, inner = site.arg(0, "cell")
    if not (isinstance(inner, Other) and inner.kind == OtherKind.CELL):
        site.refuse(f"`{short(site.qname)}` of a cell tf1clip does not know (only its twins' cells)")
    inner = inner.info["cell"]
    feeds, dropped = [], set()
    for param in twin.KEEP_PROBS:
        node, av = site.arg(params.index(param), param)
        if node is None or not av.graph:
            continue
        reads = {n: tr.env[n] for n in names_of(node) if n in tr.env and tr.env[n].graph}
        if any(isinstance(v, StateRef) for v in reads.values()):
            site.refuse(f"`{short(site.qname)}({param}=...)` reading a variable is not converted")
        feeds.append(Feed("", param, node, reads))
        dropped.add(id(node))
    for a in site.node.args:
        if id(a.value) not in dropped and site.ev.value_of(a.value).graph:
            site.refuse(f"`{short(site.qname)}` given graph values other than keep probabilities is not converted")
    node = site.node.with_changes(args=with_commas([a for a in site.node.args if id(a.value) not in dropped]))
    for f in feeds:  # read where the rnn runs, not here: this statement makes state
        site.ev.uses -= set(f.reads)
    info = Cell(inner.name, inner.units, [(rel, ".cell" + attr) for rel, attr in inner.variables], inner.state,
                parts=[inner], feeds=feeds + [_moved(f, ".cell") for f in inner.feeds],
                unset=[".cell" + attr for attr in inner.unset])
    return Other(OtherKind.CELL, {"cell": info}), _made(site, twin, node)


def _moved(feed: Feed, prefix: str) -> Feed:
    return Feed(prefix + feed.path, feed.param, feed.value, feed.reads)


def _single(site: "CallSite", twin, name: str) -> Cell:
    units, _ = site.arg(0, "num_units")
    if units is None:
        site.refuse(f"`{short(site.qname)}` without num_units")
    if twin.CLASS == "BasicRNNCell":
        return Cell(name, units, [("kernel", ".kernel"), ("bias", ".bias")], lambda b: Tensor([b, units]),
                    unset=[".kernel"])
    if twin.CLASS == "GRUCell":
        return Cell(name, units, [("gates/kernel", ".gates.kernel"), ("gates/bias", ".gates.bias"),
                                  ("candidate/kernel", ".candidate.kernel"), ("candidate/bias", ".candidate.bias")],
                    lambda b: Tensor([b, units]),
                    unset=[] if _given(site, "kernel_initializer") else [".gates.kernel", ".candidate.kernel"])
    variables = [("kernel", ".kernel"), ("bias", ".bias")]
    if twin.CLASS == "BasicLSTMCell":
        return Cell(name, units, variables, _lstm_state(units, units), unset=[".kernel"])
    peep, proj = site.arg(1, "use_peepholes")[0], site.arg(4, "num_proj")[0]
    peepholes = False if peep is None else literal(site.tr, peep)
    if peepholes not in (True, False) or (proj is not None and literal(site.tr, proj) is UNKNOWN):
        site.refuse("`LSTMCell` whose use_peepholes or num_proj is not a literal: its variables are not known")
    projected = proj is not None and literal(site.tr, proj) is not None
    if peepholes:
        variables += [("w_f_diag", ".w_f_diag"), ("w_i_diag", ".w_i_diag"), ("w_o_diag", ".w_o_diag")]
    if projected:
        variables.append(("projection/kernel", ".projection.kernel"))
    out = proj if projected else units
    unset = [] if _given(site, "initializer") else [attr for rel, attr in variables if rel != "bias"]
    return Cell(name, out, variables, _lstm_state(units, out), unset=unset)


def _given(site: "CallSite", param: str) -> bool:
    """Whether the cell is given an initializer `param` other than None (by keyword: the twins' PARAMS
    put it after the arguments given by position in the corpus)."""
    twin = twins.lookup(site.qname)
    node, _ = site.arg([p for p, _ in twin.PARAMS].index(param), param)
    return node is not None and not (isinstance(node, cst.Name) and node.value == "None")


def _multi(site: "CallSite") -> Cell:
    _, av = site.arg(0, "cells")
    parts = av.items if isinstance(av, Seq) else None
    if not parts or not all(isinstance(p, Other) and p.kind == OtherKind.CELL for p in parts):
        site.refuse("`MultiRNNCell` of cells not known where they are made (a list literal or a comprehension "
                    "over range(<literal>) of cells): not converted")
    cells = [p.info["cell"] for p in parts]
    if len({id(c) for c in cells}) != len(cells):
        site.refuse("`MultiRNNCell` with one cell object twice (TF 1.x shared its variables across layers): "
                    "not converted")
    variables = [(f"cell_{i}/{c.name}/{rel}", f".cells[{i}]{attr}") for i, c in enumerate(cells)
                 for rel, attr in c.variables]
    return Cell("multi_rnn_cell", cells[-1].units, variables,
                lambda b: Seq([c.state(b) for c in cells], SeqKind.TUPLE), parts=cells,
                feeds=[_moved(f, f".cells[{i}]") for i, c in enumerate(cells) for f in c.feeds],
                unset=[f".cells[{i}]{attr}" for i, c in enumerate(cells) for attr in c.unset])


def _copy(c: Cell) -> Cell:
    """Another cell made by the same expression (a list comprehension's element, made again)."""
    return Cell(c.name, c.units, list(c.variables), c.state, [_copy(p) for p in c.parts], feeds=list(c.feeds),
                unset=list(c.unset))


def every_cell(c: Cell) -> list:
    """The cell and every cell it holds, at any depth."""
    return [c, *(d for p in c.parts for d in every_cell(p))]


def comprehension(ev, node: cst.ListComp, original: Optional[cst.ListComp] = None):
    """`[GRUCell(n) for _ in range(3)]`: three new cells (a list of them); `[GRUCell(n) for n in sizes]` over a
    list of int literals (`sizes = [128, 256]`, also `self.sizes` assigned once in the class): one cell per
    size, each read with the loop variable replaced by its size; else None."""
    if node.for_in.inner_for_in is not None or node.for_in.ifs:
        return None
    one = ev.value_of(node.elt)
    if not (isinstance(one, Other) and one.kind == OtherKind.CELL):
        return None
    count = _range_count(ev.tr, node.for_in.iter)
    if count is not None:
        return Seq([Other(OtherKind.CELL, {"cell": _copy(one.info["cell"])}) for _ in range(count)], SeqKind.LIST)
    items = _int_list(ev, node.for_in.iter)
    if items is None or not isinstance(node.for_in.target, cst.Name):
        return None
    loop = node.for_in.target.value
    cells = []
    for item in items:
        av, _ = ev.tr.evaluator(ev.env).evaluate(replace_names((original or node).elt, {loop: item}))
        if not (isinstance(av, Other) and av.kind == OtherKind.CELL):
            return None
        cells.append(av)
    return Seq(cells, SeqKind.LIST)


def _int_list(ev, node) -> Optional[list]:
    """The int literals of a list or tuple literal, directly or through a name (or an object's
    attribute, `self.sizes`) the file assigns once and never touches otherwise (no `.append`, no
    item assignment, no `+=`); else None."""
    if isinstance(node, cst.Name):
        def same(n):
            return isinstance(n, cst.Name) and n.value == node.value
    elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
            and isinstance(ev.env.get(node.value.value), Instance):
        def same(n):
            return isinstance(n, cst.Attribute) and n.attr.value == node.attr.value
    else:
        same = None
    if same is not None:
        module = ev.tr.module
        bound = [v for st in walk_statements(module) for t, v in assignments(st) if same(t)]
        touched = any(isinstance(n, (cst.Attribute, cst.Subscript)) and same(n.value) for n in walk(module))
        node = bound[0] if len(bound) == 1 and not touched else None
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    items = [e.value for e in node.elements]
    exact = all(isinstance(e, cst.Element) and isinstance(e.value, cst.Integer) for e in node.elements)
    return items if exact else None


def _range_count(tr: "Program", node) -> Optional[int]:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range" \
            and len(node.args) == 1:
        value = literal(tr, node.args[0].value)
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return None


def state_tuple(site: "CallSite"):
    """`LSTMStateTuple(c, h)` → the twin's namedtuple (same fields)."""
    site.only({"c", "h"}, 2)
    c, c_av = site.arg(0, "c")
    h, h_av = site.arg(1, "h")
    if c is None or h is None:
        site.refuse("`LSTMStateTuple` without c and h")
    local = twin_class(site.tr, twins.lookup(site.qname) or twins.BY_CLASS["LSTMStateTuple"])
    return Seq([c_av, h_av], SeqKind.TUPLE, ("c", "h")), site.node.with_changes(func=cst.Name(local))


def zero_state(site: "CallSite"):
    """`cell.zero_state(batch_size, dtype)`: the same method on the twin (zeros of the state's structure)."""
    site.only({"batch_size", "dtype"}, 2)
    batch, _ = site.arg(0, "batch_size")
    dtype, _ = site.arg(1, "dtype")
    if dtype is None or not emit.code(dtype).endswith("float32"):
        site.refuse("`zero_state` of a dtype other than float32 is not converted (the twins compute in float32)")
    static = batch is not None and not site.ev.value_of(batch).graph
    return site.receiver.info["cell"].state(batch if static else None), site.node


def twin_names(kind: str) -> tuple:
    """The TF 1 names of the twins of one kind (`cell`, `rnn`)."""
    return tuple(n for n, m in twins.TWINS.items() if getattr(m, "KIND", None) == kind and m.CLASS != "SlimBatchNorm")


CELLS = twin_names("cell")
STATE_TUPLES = twins.BY_CLASS["LSTMStateTuple"].TF1
CALLS = {**{n: cell for n in CELLS}, **{n: state_tuple for n in STATE_TUPLES}}
CREATORS = set(CELLS)
METHODS = {(OtherKind.CELL, "zero_state"): zero_state}

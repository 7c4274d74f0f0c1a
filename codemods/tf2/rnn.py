"""TF 1.x rnn functions in graph code → their exact TF 2 twin rnn layers, state made once.

`tf.nn.dynamic_rnn(cell, x, ...)` (and `static_rnn`, `bidirectional_dynamic_rnn`) is two things,
like a layer call: the cell's variables, created at that line from x's static width under
`rnn/<cell>/` (state: the twin rnn layer, created and built there, `rnn = DynamicRNN(cell)`,
`rnn.build((None, None, 8))`), and a value (outputs and final state: `outputs, state = rnn(x,
sequence_length=lengths)` in the steps). The cells are `rnn_cells`.

The twins (`codemods/tf2/twins/`) compute TF 1.x's math with TF 1.x's weight layout and are
written into the script as plain TF 2 classes, once each (tests/test_twins.py proves each equal
to TF 1.x: outputs, states, gradients). What a twin cannot reproduce (`TwinUnavailable`) is a
refusal at its line, and so is what would make TF 1.x name or share variables otherwise: a cell
run by two rnn calls, a `reuse` argument, two rnn layers under one scope name.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit, step_reads, twins
from codemods.tf2 import shapes as shp
from codemods.tf2.model import Other, OtherKind, Seq, SeqKind, State, StateKind, Tensor
from codemods.tf2.names import short
from codemods.tf2.rnn_cells import every_cell, twin_names
from codemods.tf2.twin_classes import instantiate, literal, twin_class

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite


def rnn(site: "CallSite"):
    tr = site.tr
    twin = twins.lookup(site.qname)
    params = [p for p, _ in twin.PARAMS]
    bidirectional = twin.CLASS == "BidirectionalDynamicRNN"
    cells = []
    for p in ("cell_fw", "cell_bw") if bidirectional else ("cell",):
        _, av = site.arg(params.index(p), p)
        if not (isinstance(av, Other) and av.kind == OtherKind.CELL):
            site.refuse(f"`{short(site.qname)}` of a cell tf1clip does not know (only its twins' cells)")
        cells.append(av.info["cell"])
    every = [d for top in cells for d in every_cell(top)]
    if any(c.used for c in every) or len({id(c) for c in every}) != len(every):
        site.refuse(f"`{short(site.qname)}` runs a cell another rnn call ran already (TF 1.x shared its variables "
                    "by the cell's first scope): not converted")
    if tr.scopes.reuse():
        site.refuse(f"`{short(site.qname)}` under a reusing variable scope is not converted")
    scope_node, _ = site.arg(params.index("scope"), "scope")
    scope = twin.DEFAULT_NAME if scope_node is None else literal(tr, scope_node)
    if not isinstance(scope, str):
        site.refuse(f"`{short(site.qname)}(scope=...)` other than a string literal is not converted")
    time_node, _ = site.arg(params.index("time_major"), "time_major") if "time_major" in params else (None, None)
    time_major = False if time_node is None else literal(tr, time_node)
    if time_major not in (True, False):
        site.refuse(f"`{short(site.qname)}(time_major=...)` other than a literal is not converted")
    inputs, in_av = site.arg(params.index("inputs"), "inputs")
    static = twin.CLASS == "StaticRNN"
    step_shape = _static_step(in_av) if static else shp.of(in_av)
    if step_shape is None or step_shape[-1] is None or (not static and len(step_shape) != 3):
        site.refuse(f"the input of `{short(site.qname)}` has no known static width: the cell could not be built "
                    "where TF 1.x created its variables")
    step_reads.check_dims(tr, [step_shape[-1]], tr.line, f"the build of `{short(site.qname)}`'s cell")
    prefix = tr.scopes.get_variable_name(scope)
    subs = [("fw", ".fw.cell"), ("bw", ".bw.cell")] if bidirectional else [("", ".cell")]
    py = tr.namer.fresh(prefix.replace("/", "_"))
    pairs = [(f"{prefix}{'/' + sub if sub else ''}/{c.name}/{rel}", emit.expr(py + base + attr))
             for (sub, base), c in zip(subs, cells) for rel, attr in c.variables]
    made_before = {n for s in tr.states for n, _ in s.info.get("vars", [])}
    clash = next((n for n, _ in pairs if n in made_before), None)
    if clash is not None:
        site.refuse(f"`{short(site.qname)}` would create `{clash}` again (TF 1.x named it otherwise or raised): "
                    "give each rnn its own scope")
    made = instantiate(site)
    ctor = made.construct.with_changes(func=cst.Name(twin_class(tr, twin)))
    width = step_shape[-1]
    build = cst.List([cst.Element(cst.Tuple([cst.Element(cst.Name("None")), cst.Element(width)]))]) if static \
        else cst.Tuple([cst.Element(cst.Name("None")), cst.Element(cst.Name("None")), cst.Element(width)])
    state = State(StateKind.LAYER, py, prefix, tr.line, trainable=True,
                  variables=emit.expr("{l}.trainable_variables", l=py))
    state.info.update(vars=pairs, rnn=True)
    tr.add_state(state, [emit.assign(py, ctor), emit.stmt("{l}.build({shape})", l=py, shape=build),
                         *_scope_initialized(tr, py, [(base, c) for (_, base), c in zip(subs, cells)])])
    for c in every:
        c.used = True
    _set_feeds(site, [(base, c) for (_, base), c in zip(subs, cells)], state)
    tr.note(f"`{short(site.qname)}` → `{twin.CLASS}` `{py}`, an exact TF 2 twin built here (the variables of "
            f"`{prefix}/`, created as TF 1.x created them); its call runs in the steps")
    call = made.call.with_changes(func=state.expr())
    return _result(twin.CLASS, cells, in_av, step_shape, time_major), call


def _scope_initialized(tr, py: str, cells: list) -> list:
    """Inside variable_scope(initializer=...): each variable the cells made with no initializer of their
    own (kernels, peepholes, projections; `Cell.unset`) starts from the scope's, as in TF 1.x."""
    init = tr.scopes.initializer()
    if init is None:
        return []
    out = []
    for base, c in cells:
        for attr in c.unset:
            var = emit.expr("{l}" + base + attr, l=cst.Name(py))
            out.append(emit.stmt("{v}.assign({init}({v}.shape, dtype={v}.dtype))", v=var, init=init))
    if out:
        tr.note("the rnn's kernels start from the variable_scope's initializer, as in TF 1.x (made with none of "
                "their own)")
    return out


def _set_feeds(site: "CallSite", cells: list, state: State) -> None:
    """Each step that runs this rnn first sets its cells' fed arguments (`Feed`), which must still
    denote what they denoted where the cell was made."""
    for base, c in cells:
        for f in c.feeds:
            if any(site.tr.env.get(n) is not av for n, av in f.reads.items()):
                site.refuse(f"`{short(site.qname)}` runs a cell whose {f.param} reads a name bound again since the "
                            "cell was made: not converted")
            target = emit.expr("{l}" + base + f.path + "." + f.param, l=state.expr())
            site.tr.step_prelude.append(emit.assign(target, f.value))
            site.ev.uses |= set(f.reads)
            site.tr.note(f"`{f.param}` of a cell run by `{short(site.qname)}` is a graph value: each step sets "
                         f"`{emit.code(target)}` before running it")


def _static_step(av) -> Optional[list]:
    """The static shape of one time step of static_rnn's inputs (a list of [batch, depth] tensors)."""
    if isinstance(av, Seq) and av.items:
        return shp.of(av.items[0])
    if isinstance(av, Tensor) and not av.single:
        return av.element
    return None


def _result(twin_class: str, cells: list, in_av, shape: list, time_major: bool):
    if twin_class == "StaticRNN":
        batch = shape[0] if len(shape) == 2 else None
        one = [batch, cells[0].units]
        if isinstance(in_av, Seq):
            outputs = Seq([Tensor(list(one)) for _ in in_av.items], SeqKind.LIST)
        else:
            outputs = Tensor(single=False, element=one)
        return Seq([outputs, cells[0].state(batch)], SeqKind.TUPLE)
    batch, time = (shape[1], shape[0]) if time_major else (shape[0], shape[1])

    def out(c):
        return Tensor([time, batch, c.units] if time_major else [batch, time, c.units])

    if twin_class == "BidirectionalDynamicRNN":
        return Seq([Seq([out(c) for c in cells], SeqKind.TUPLE), Seq([c.state(batch) for c in cells], SeqKind.TUPLE)],
                   SeqKind.TUPLE)
    return Seq([out(cells[0]), cells[0].state(batch)], SeqKind.TUPLE)


RNNS = twin_names("rnn")
CALLS = {n: rnn for n in RNNS}
CREATORS = set(RNNS)

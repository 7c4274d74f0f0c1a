"""TensorBoard summaries (TF 1.x) → TF 2 summaries written through a writer.

TF 1.x made a summary op per `tf.summary.scalar/histogram/image(name, value)` (tagged with its
name scope, e.g. `layer1/Weights`), collected them (`merge_all`, `merge`), fetched the
serialized protos with `sess.run` and wrote them with `FileWriter.add_summary(summary, step)`.
In TF 2 the step returns the summarized values instead (a dict tag → value), and
`add_summary` becomes `with writer.as_default(step=step): tf.summary.scalar(tag, value)` for
each of them; `tf.summary.FileWriter(logdir, graph)` → `tf.summary.create_file_writer(logdir)`.
The scalar and histogram records are written with TF's core `tf.summary.write` and TensorBoard's
metadata by two small functions written into the script (`write_scalar`, `write_histogram`):
TensorBoard's `tf.summary.scalar/histogram` need the tensorboard package, which TF 2.21 does not
install. Image and text summaries are refused.
A fetched summary may only be written (given to `add_summary`); anything else is refused.
TF 2's histogram buckets differ from TF 1.x's (the values summarized are the same).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
from libcst.helpers import parse_template_module

from codemods.tf2 import emit
from codemods.tf2.model import GraphOp, Op, OpKind, Other, OtherKind, Seq, State, StateKind, StateRef
from codemods.tf2.syntax import names_of

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

KINDS = {"tensorflow.summary.scalar": "scalar", "tensorflow.summary.histogram": "histogram"}
# TensorBoard's own tf.summary.scalar/histogram need the tensorboard package, which TF 2.21 does not
# install: the same records, written with TF's core tf.summary.write and TensorBoard's metadata.
WRITERS = {
    "scalar": '''

def {name}(tag, value):
    """A TensorBoard scalar (what tf.summary.scalar writes; that needs the tensorboard package)."""
    {tf}.summary.write(tag, {tf}.cast(value, {tf}.float32), metadata=b"\\n\\t\\n\\x07scalars \\x01")
''',
    "histogram": '''

def {name}(tag, values):
    """A TensorBoard histogram, 30 buckets (what tf.summary.histogram writes; that needs the tensorboard
    package). TF 1.x's histograms used other buckets over the same values."""
    counts, edges = {np}.histogram({np}.asarray(values, dtype={np}.float64).ravel(), bins=30)
    buckets = {np}.stack([edges[:-1], edges[1:], counts.astype({np}.float64)], axis=1)
    {tf}.summary.write(tag, buckets, metadata=b"\\n\\x0c\\n\\nhistograms \\x03")
''',
}


def summary(site: "CallSite"):
    tr = site.tr
    function = KINDS[site.qname]  # the tf.summary function: scalar | histogram
    allowed = {"name", "tensor", "values", "collections", "family"}
    site.only(allowed, 2)
    name, _ = site.arg(0, "name")
    value, value_av = site.arg(1, {"scalar": "tensor", "histogram": "values"}[function])
    if not isinstance(name, cst.SimpleString) or value is None:
        site.refuse(f"tf.summary.{function} with a name that is not a string literal is not converted")
    if site.arg(None, "collections")[0] is not None or site.arg(None, "family")[0] is not None:
        site.refuse(f"tf.summary.{function} with collections or family is not converted")
    max_outputs = None
    tag = tr.scopes.unique_name(_join(tr.scopes.top.name_path, name.evaluated_value))
    holder = tr.namer.fresh(name.evaluated_value.replace(" ", "_") + "_summary")
    tr.add_comp([emit.assign(holder, value)], {holder}, names_of(value) & (tr.graph_names() | site.ev.uses))
    entry = (tag, function, holder, max_outputs)
    tr.summaries.append(entry)
    tr.note(f"tf.summary.{function}(\"{tag}\") → its value computed in the steps that fetch it, written with "
            "tf.summary.{kind} where add_summary wrote it")  # sic: not an f-string (the note says `{kind}`)
    return Op(GraphOp(OpKind.SUMMARY, holder, {"entries": [entry]})), site.node


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def merge_all(site: "CallSite"):
    site.only({"key", "scope", "name"}, 0)
    if not site.tr.summaries:
        site.refuse("tf.summary.merge_all() with no summaries returns None in TF 1.x: not converted")
    return Op(GraphOp(OpKind.MERGED, info={"entries": list(site.tr.summaries)})), site.node


def merge(site: "CallSite"):
    site.only({"inputs", "collections", "name"}, 1)
    inputs, av = site.arg(0, "inputs")
    if not (isinstance(av, Seq) and all(isinstance(i, Op) and i.op.kind in (OpKind.SUMMARY, OpKind.MERGED)
                                        for i in av.items)):
        site.refuse("tf.summary.merge of something other than a list of summaries made here")
    entries = [e for i in av.items for e in i.op.info["entries"]]
    return Op(GraphOp(OpKind.MERGED, info={"entries": entries})), site.node


def fetched(op: GraphOp) -> cst.Dict:
    """What a step returns for a fetched summary: {tag: value}."""
    return cst.Dict([cst.DictElement(cst.SimpleString(f'"{tag}"'), cst.Name(holder))
                     for tag, _, holder, _ in op.info["entries"]])


def file_writer(site: "CallSite"):
    tr = site.tr
    site.only({"logdir", "graph", "max_queue", "flush_secs", "graph_def", "filename_suffix", "session"}, 2)
    logdir, _ = site.arg(0, "logdir")
    if site.arg(None, "graph_def")[0] is not None or site.arg(None, "session")[0] is not None:
        site.refuse("tf.summary.FileWriter with graph_def or session is not converted")
    args = [cst.Arg(logdir)]
    for keyword in ("max_queue", "flush_secs", "filename_suffix"):
        value = site.arg(None, keyword)[0]
        if value is not None:
            args.append(emit.keyword(keyword, value))
    name = site.target or tr.namer.fresh("writer")
    node = emit.with_args(emit.call(tr.tf("tensorflow.summary.create_file_writer")), args)
    state = State(StateKind.WRITER, name, name, tr.line)
    tr.note("tf.summary.FileWriter → tf.summary.create_file_writer (the graph is not written: TF 2 has none)")
    return tr.add_state(state, [emit.assign(name, node)]), state.expr()


def add_summary(site: "CallSite"):
    tr = site.tr
    writer = site.receiver.state
    site.only({"summary", "global_step"}, 2)
    value, av = site.arg(0, "summary")
    step, _ = site.arg(1, "global_step")
    if not (isinstance(av, Other) and av.kind == OtherKind.SUMMARY_VALUES) or \
            not isinstance(value, (cst.Name, cst.Subscript)):
        site.refuse("add_summary of something other than a summary fetched by sess.run is not converted")
    lines = []
    for tag, function, _, _ in av.info["entries"]:
        holes = {"tf": cst.Name(tr.alias)} if function == "scalar" else {"tf": cst.Name(tr.alias),
                                                                        "np": cst.Name(tr.numpy_name())}
        writer_fn = tr.preamble_function(f"summary_{function}", lambda n, k=function, h=holes: list(
            parse_template_module(WRITERS[k], name=cst.Name(n), **h).body), f"write_{function}")
        args = [cst.Arg(cst.SimpleString(f'"{tag}"')),
                cst.Arg(cst.Subscript(value, [cst.SubscriptElement(cst.Index(cst.SimpleString(f'"{tag}"')))]))]
        lines.append(cst.SimpleStatementLine([cst.Expr(emit.with_args(emit.call(cst.Name(writer_fn)), args))]))
    block = cst.With(items=[cst.WithItem(emit.call(cst.Attribute(writer.expr(), cst.Name("as_default")),
                                                   step=step if step is not None else cst.Integer("0")))],
                     body=cst.IndentedBlock(lines))
    tr.note("add_summary → the fetched values written with tf.summary.* under the writer, at that step")
    return Op(GraphOp(OpKind.WRITTEN, info={"statements": [block]})), site.node


def summary_name(op: GraphOp) -> str:
    return op.name or "summaries"


def writer_method(site: "CallSite"):
    method = site.qname[2:]
    if method == "add_graph":
        return Other(OtherKind.GRAPH, {"drop": True, "what": "writing the graph"}), site.node
    return Other(OtherKind.WRITER_CALL), site.node  # flush(), close(): the same methods in TF 2


CALLS = {
    **{q: summary for q in KINDS},
    "tensorflow.summary.merge_all": merge_all,
    "tensorflow.summary.merge": merge,
    "tensorflow.summary.FileWriter": file_writer,
}
CREATORS = {"tensorflow.summary.FileWriter"}
METHODS = {
    (StateKind.WRITER, "add_summary"): add_summary,
    (StateKind.WRITER, "add_graph"): writer_method,
    (StateKind.WRITER, "flush"): writer_method,
    (StateKind.WRITER, "close"): writer_method,
}
__all__ = ["CALLS", "METHODS", "fetched", "StateRef"]

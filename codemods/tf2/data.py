"""Input pipelines: the MNIST tutorial reader and `tf.data` (TF 1.x) → TF 2.

* `input_data.read_data_sets(dir, one_hot=...)` → a local reader written into the script
  (`mnist_reader`), seeded as TF 1.x seeded NumPy (the graph-level seed set before it);
* a `tf.data.Dataset` is a Python object in TF 2: made once, where TF 1.x made it;
* an iterator is state: `dataset.make_one_shot_iterator()` → `iter(dataset)` there;
  `make_initializable_iterator()` / `Iterator.from_structure(...)` with `make_initializer(ds)`
  → `iterator = iter(ds)` where `sess.run(<initializer>)` ran;
* `x, y = iterator.get_next()` is what each `sess.run` needing it pulled, once per run: the step
  takes the element as an argument (its spec the dataset's `element_spec`) and the call passes
  `iterator.get_next()`, which raises `tf.errors.OutOfRangeError` at the end as TF 1.x did.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit, mnist_reader
from codemods.tf2.api_changes import NoTF2Mapping, to_tf2
from codemods.tf2.model import (HOST, GraphOp, Op, OpKind, Other, OtherKind, Placeholder, Seq, State, StateKind,
                                StateRef, Tensor)
from codemods.tf2.names import short

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

READ_DATA_SETS = ("tensorflow.examples.tutorials.mnist.input_data.read_data_sets",
                  "tensorflow.contrib.learn.python.learn.datasets.mnist.read_data_sets")
_PARAMS = ("train_dir", "fake_data", "one_hot", "dtype", "reshape", "validation_size", "seed", "source_url")


def read_data_sets(site: "CallSite"):
    tr = site.tr
    site.only(set(_PARAMS), len(_PARAMS))
    given = {p: site.arg(i, p)[0] for i, p in enumerate(_PARAMS)}
    fake = given["fake_data"]
    if fake is not None and not (isinstance(fake, cst.Name) and fake.value == "False"):
        site.refuse("read_data_sets(fake_data=...) is not converted")
    if given["train_dir"] is None:
        site.refuse("read_data_sets without its folder")
    reader = tr.preamble_function("mnist", lambda name: mnist_reader.definitions(tr.alias, tr.numpy_name(), name),
                                  "read_data_sets", mnist_reader.IMPORTS)
    args = [cst.Arg(given["train_dir"])]
    for p in ("one_hot", "dtype", "reshape", "validation_size", "seed"):
        if given[p] is not None:
            args.append(emit.keyword(p, given[p]))
    if given["seed"] is None and tr.graph_seed is not None:
        args.append(emit.keyword("seed", tr.graph_seed))
    tr.note("input_data.read_data_sets → a local MNIST reader written into the script (TF 2 does not ship "
            "tensorflow.examples): the same splits, scaling and shuffles; NumPy reseeded as TF 1.x did")
    return HOST, emit.with_args(emit.call(cst.Name(reader)), args)


# -- tf.data --------------------------------------------------------------------------------------------
DATASET_METHODS = ("shuffle", "batch", "repeat", "map", "prefetch", "take", "skip", "filter", "zip", "concatenate",
                   "padded_batch", "cache", "flat_map", "interleave", "apply", "unbatch", "shard")


def dataset(site: "CallSite"):
    """`tf.data.Dataset.from_tensor_slices(...)` and the like: a Python object in TF 2, made here."""
    try:
        name, node = to_tf2(short(site.qname), site.node, alias=site.tr.alias)
    except NoTF2Mapping as exc:
        site.refuse(exc.reason)
    if any(site.ev.value_of(a.value).graph for a in site.node.args):
        site.refuse("a tf.data dataset made from graph values is not converted")
    return Other(OtherKind.DATASET, {"expr": None}), node.with_changes(func=site.tr.tf(name))


def dataset_method(site: "CallSite"):
    method = site.qname[2:]
    if method not in DATASET_METHODS:
        site.refuse(f"`dataset.{method}(...)` is not converted")
    return Other(OtherKind.DATASET), site.node


def _iterator(site: "CallSite", ds_node, one_shot: bool):
    tr = site.tr
    name = site.target or tr.namer.fresh("iterator")
    state = State(StateKind.ITERATOR, name, name, tr.line, info={"dataset": ds_node})
    if one_shot:
        value = emit.call(cst.Name("iter"), ds_node)
        tr.note("make_one_shot_iterator() → iter(dataset), made here once")
    else:
        value = cst.Name("None")
        tr.note("an initializable iterator → `iter(dataset)` where its initializer runs")
    return tr.add_state(state, [emit.assign(name, value)]), state.expr()


def one_shot(site: "CallSite"):
    if site.receiver is not None:
        return _iterator(site, site.original.func.value, True)
    ds, _ = site.arg(0, "dataset")
    return _iterator(site, ds, True)


def initializable(site: "CallSite"):
    if site.receiver is not None:
        return _iterator(site, site.original.func.value, False)
    ds, _ = site.arg(0, "dataset")
    return _iterator(site, ds, False)


def from_structure(site: "CallSite"):
    types, _ = site.arg(0, "output_types")
    if not (isinstance(types, cst.Attribute) and types.attr.value == "output_types"):
        site.refuse("Iterator.from_structure of types not read from a dataset (`ds.output_types`) is not converted")
    return _iterator(site, _kept(site.tr, types.value), False)


def get_next(site: "CallSite"):
    tr = site.tr
    state = site.receiver.state
    if state.info.get("element") is not None:
        site.refuse("get_next() of one iterator twice: each sess.run pulls one element for all of them")
    name = tr.namer.fresh("element")
    spec = cst.Attribute(state.info["dataset"], cst.Name("element_spec"))
    ph = Placeholder(name, cst.Name("None"), None, None, tr.line, len(tr.placeholders), source=state.expr(),
                     spec=spec)
    tr.placeholder(ph)
    state.info["element"] = name
    tr.note(f"`{state.name}.get_next()` → the element each step call pulls (`{state.name}.get_next()` at the call)")
    return Tensor(single=False), cst.Name(name)


def iterator_initializer(site_or_tr, state: State, ds_node) -> Op:
    return Op(GraphOp(OpKind.ITERATOR_INIT, info={"iterator": state, "dataset": ds_node}))


def _kept(tr, ds_node):
    """The dataset expression as code elsewhere reads it: a local of a method is kept on the instance
    (`self.train_data = train_data`), since the initializer or the step spec may run in another method."""
    body, _ = tr.classes.promote([cst.SimpleStatementLine([cst.Expr(ds_node)])])
    return body[0].body[0].value


def make_initializer(site: "CallSite"):
    ds, _ = site.arg(0, "dataset")
    return iterator_initializer(site.tr, site.receiver.state, _kept(site.tr, ds)), site.node


def initializer_statement(op: GraphOp) -> cst.SimpleStatementLine:
    """`sess.run(iterator.initializer)` → `iterator = iter(dataset)`."""
    state = op.info["iterator"]
    return emit.assign(state.expr(), emit.call(cst.Name("iter"), op.info["dataset"]))


CALLS = {
    **{q: read_data_sets for q in READ_DATA_SETS},
    "tensorflow.data.make_one_shot_iterator": one_shot,
    "tensorflow.data.make_initializable_iterator": initializable,
    "tensorflow.data.Iterator.from_structure": from_structure,
}
DATASET_CONSTRUCTORS = ("from_tensor_slices", "from_tensors", "from_generator", "range", "zip", "list_files")
CALLS.update({f"tensorflow.data.Dataset.{m}": dataset for m in DATASET_CONSTRUCTORS})
CALLS.update({f"tensorflow.data.{c}": dataset for c in ("TextLineDataset", "TFRecordDataset",
                                                        "FixedLengthRecordDataset")})
CREATORS = {"tensorflow.data.make_one_shot_iterator", "tensorflow.data.make_initializable_iterator",
            "tensorflow.data.Iterator.from_structure"}
METHODS = {
    **{(OtherKind.DATASET, m): dataset_method for m in DATASET_METHODS},
    (OtherKind.DATASET, "make_one_shot_iterator"): one_shot,
    (OtherKind.DATASET, "make_initializable_iterator"): initializable,
    (StateKind.ITERATOR, "get_next"): get_next,
    (StateKind.ITERATOR, "make_initializer"): make_initializer,
}

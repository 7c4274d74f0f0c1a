"""TF 1.x's dataset attributes and iterator methods → the `tf.compat.v1.data` functions.

In TF 1.x every dataset had `output_types`, `output_shapes`, `output_classes`,
`make_one_shot_iterator()` and `make_initializable_iterator()`. With the file's import rewritten
to `tensorflow.compat.v1`, the datasets it makes still have them. A dataset made in a module the
compat tier leaves alone (one that uses no TF 1.x-only API, say a `utils.py` with
`tf.data.Dataset.from_tensor_slices`) is a TF 2 dataset that has none of them, and the TF 1.x
file that reads them stops with "'_BatchDataset' object has no attribute 'output_types'".

The functions TF 1.15 gives for this work on every dataset and iterator, TF 1 or TF 2. They
return what the attributes and methods returned (TF's own deprecation messages point to them,
and `tf_upgrade_v2` rewrites the two methods the same way):
- `x.output_types` → `tf.data.get_output_types(x)`, and likewise `output_shapes` and
  `output_classes` (read, never assigned);
- `x.make_one_shot_iterator()` → `tf.data.make_one_shot_iterator(x)`;
- `x.make_initializable_iterator(...)` → `tf.data.make_initializable_iterator(x, ...)`.

`tf` is the file's name for `tensorflow.compat.v1` (or `tensorflow`, then `tf.compat.v1.data`).
Nothing is rewritten on a TensorFlow name itself (`tf.data.Dataset.output_types`), and a file
with no such module-level name, or one that rebinds it, is reported for a human instead. An
object that is not a dataset or an iterator fails loudly in the function, as it did in the
attribute.
"""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from codemods._usage import TF, V1
from codemods.command import command_attribute
from codemods.rule import Invalid, Rule, Valid

ATTRIBUTES = {"output_types": "get_output_types", "output_shapes": "get_output_shapes",
              "output_classes": "get_output_classes"}
METHODS = ("make_one_shot_iterator", "make_initializable_iterator")


def _function_call(function: str, attribute_node: bool):
    """A NodeEdit maker: `x.attr` → `function(x)`, or `x.method(args)` → `function(x, args)`."""

    def make(node):
        if attribute_node:
            value, args = node.value, []
        else:
            value, args = node.func.value, list(node.args)
        first = cst.Arg(value=value)
        if args:
            first = first.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        call = cst.Call(func=cst.parse_expression(function), args=[first, *args])
        return call if attribute_node else call.with_changes(lpar=node.lpar, rpar=node.rpar,
                                                              whitespace_before_args=node.whitespace_before_args)

    return make


class DatasetV1(Rule):
    DESCRIPTION = ("Read a dataset's TF 1.x attributes and iterators through tf.compat.v1.data, which takes "
                   "TF 2 datasets too.")
    RULE = "dataset_v1"
    TRIGGERS = (*ATTRIBUTES, *METHODS)

    def __init__(self, run):
        super().__init__(run)
        self.tf_refs: list = []        # references to TensorFlow names (one gives the file's alias)
        self.ref_nodes: set = set()    # ids of the ast nodes of every imported dotted name

    def visit_reference(self, ref) -> None:
        self.ref_nodes.update(id(link) for link in ref.links)
        self.ref_nodes.add(id(ref.node))
        qname = self.run.final_qname(ref)
        if qname and (qname == TF or qname.startswith(TF + ".")):
            self.tf_refs.append(ref)

    def leave_module(self, layout) -> None:
        if layout.final_usage().verdict not in ("tf1", "tf1-eager"):
            return
        sites = list(self._sites())
        if not sites:
            return
        prefix = self._prefix()
        for stmt, node, name, attribute in sites:
            line = node.lineno
            if prefix is None:
                self.note_human(line, f"`.{name}`: a TF 2 dataset has no such attribute; read it with "
                                      f"tf.compat.v1.data.{ATTRIBUTES.get(name, name)}(...)")
                continue
            function = f"{prefix}.{ATTRIBUTES.get(name, name)}"
            self.run.transform(self, node, stmt, _function_call(function, attribute))
            what = ("value", "attribute") if attribute else ("iterator", "method")
            self.note_change(line, f"`.{name}{'' if attribute else '()'}` → {function}(...): the same {what[0]} for "
                                   f"TF 1 and TF 2 datasets (one made in a module left on TF 2 has no such {what[1]})")

    def _sites(self):
        """(Stmt, node, name, is attribute) for each read of a TF 1.x dataset attribute and each
        call of a TF 1.x iterator method, on a value that is not a TensorFlow name."""
        for stmt in self.file.stmts.values():
            for node in self.file.expressions(stmt):
                if isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES and isinstance(node.ctx, ast.Load):
                    if id(node.value) not in self.ref_nodes:
                        yield stmt, node, node.attr, True
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr in METHODS and id(node.func.value) not in self.ref_nodes:
                    yield stmt, node, node.func.attr, False

    def _prefix(self) -> Optional[str]:
        """`<alias>.data` of the file's module-level name for tensorflow.compat.v1 (or
        `<alias>.compat.v1.data` of tensorflow's) when the file never rebinds that name."""
        rebound: dict = {}  # alias -> bound other than by an import somewhere in the file
        for ref in self.tf_refs:
            for module, suffix in ((V1, ".data"), (TF, ".compat.v1.data")):
                alias = self.run.visible_alias(ref, module)
                if alias is not None and alias not in rebound:
                    rebound[alias] = _rebound(self.file.tree, alias)
                if alias is not None and not rebound[alias]:
                    return alias + suffix
        return None

    VALID = [
        # a TF 2 file is not the compat tier's
        Valid("import tensorflow as tf\n\ntypes = ds.element_spec\n"),
        # already migrated
        Valid("import tensorflow.compat.v1 as tf\n\ntf.disable_v2_behavior()\nx = tf.placeholder(tf.float32)\n"
              "it = tf.data.Iterator.from_structure(tf.data.get_output_types(ds), tf.data.get_output_shapes(ds))\n"),
        # assigned, not read: a class of the user's own
        Valid("import tensorflow.compat.v1 as tf\n\ntf.disable_v2_behavior()\nx = tf.placeholder(tf.float32)\n"
              "self.output_types = (tf.float32,)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow.compat.v1 as tf\nimport utils\n\ntrain, test = utils.get_dataset(128)\n"
            "iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)\n"
            "image, label = iterator.get_next()\nkeep_prob = tf.placeholder(tf.float32)\n",
            "import tensorflow.compat.v1 as tf\nimport utils\n\ntrain, test = utils.get_dataset(128)\n"
            "iterator = tf.data.Iterator.from_structure(tf.data.get_output_types(train), "
            "tf.data.get_output_shapes(train))\n"
            "image, label = iterator.get_next()\nkeep_prob = tf.placeholder(tf.float32)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\n"
            "it = make_dataset(x).batch(4).make_initializable_iterator(shared_name='s')\n"
            "one = (data.repeat()\n       .make_one_shot_iterator())\n",
            "import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\n"
            "it = tf.compat.v1.data.make_initializable_iterator(make_dataset(x).batch(4), shared_name='s')\n"
            "one = (tf.compat.v1.data.make_one_shot_iterator(data.repeat()))\n",
        ),
    ]

def _rebound(tree: ast.Module, name: str) -> bool:
    """Is `name` bound anywhere in the file other than by an import?"""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
    return False


__getattr__ = command_attribute(DatasetV1)  # DatasetV1Command, for python -m libcst.tool codemod

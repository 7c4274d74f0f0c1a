"""TF 1.x calls and names left in the TF2 program → their TF 2 form, by TensorFlow's upgrade spec.

Applied after `train_step` (and `clip_by_average_norm`), on code that is TF 2 in structure but
still holds the user's expressions as written: `tf.nn.dropout(h, keep_prob)`,
`tf.reduce_sum(x, reduction_indices=[1])`, `tf.set_random_seed(1)`. Every call whose function
resolves to a TensorFlow name goes through `api_changes.to_tf2` (renames, keyword renames,
reorders, removed arguments, exact transforms such as keep_prob → rate), every other
TensorFlow name through `api_changes.reference_to_tf2`, and a method call the spec knows
(`dataset.make_one_shot_iterator()`) too. Where the TF 2 spelling would mean something else,
the step refuses (`Refuse`): no TF 1.x call passes through with a changed meaning.

A name is found through its qualified name, so `import tensorflow as tf1` or
`from tensorflow import set_random_seed` are found too; a new function name is written under
the module's own alias of `tensorflow`.
"""
from __future__ import annotations

import libcst as cst

from codemods.tf2 import api_changes, api_spec
from codemods.tf2._base import Names, Note, Refuse, code, expr

RULE = "symbols"
# Applying this step twice is not applying it once: TF 1 and TF 2 spell some different functions
# the same (TF 1's `softmax_cross_entropy_with_logits_v2` is TF 2's `softmax_cross_entropy_with_logits`,
# whose TF 1 namesake stopped the labels' gradient), so a second pass would read TF 2 code as TF 1.
# The tier applies it once, to TF 1 code; `convert` of its output leaves it alone (tested).
IDEMPOTENT = False
DESCRIPTION = "TF 1.x calls and names → their TF 2 form (TensorFlow's upgrade spec), or a refusal."

EXAMPLES = [
    ("import tensorflow as tf\ntf.set_random_seed(1)\n",
     "import tensorflow as tf\ntf.random.set_seed(1)\n"),
    ("import tensorflow as tf1\nn = tf1.global_norm(grads)\n",
     "import tensorflow as tf1\nn = tf1.linalg.global_norm(grads)\n"),
    ("import tensorflow as tf\nfrom tensorflow import global_norm\nn = global_norm(grads)\n",
     "import tensorflow as tf\nfrom tensorflow import global_norm\nn = tf.linalg.global_norm(grads)\n"),
    ("import tensorflow as tf\nl = tf.nn.softmax_cross_entropy_with_logits_v2(logits=a, labels=b)\n",
     "import tensorflow as tf\nl = tf.nn.softmax_cross_entropy_with_logits(logits=a, labels=b)\n"),
    ("import tensorflow as tf\ntf.random.set_seed(1)\n", "import tensorflow as tf\ntf.random.set_seed(1)\n"),
    ("import tensorflow as tf\nh = tf.nn.dropout(x, keep_prob)\n",
     "import tensorflow as tf\nh = tf.nn.dropout(x, rate=1 - keep_prob)\n"),
    ("import tensorflow as tf\nm = tf.reduce_mean(x, reduction_indices=[1], keep_dims=True)\n",
     "import tensorflow as tf\nm = tf.reduce_mean(x, axis=[1], keepdims=True)\n"),
    ("import tensorflow as tf\nl = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z)\n",
     "import tensorflow as tf\nl = tf.nn.softmax_cross_entropy_with_logits(labels=tf.stop_gradient(y), logits=z)\n"),
    ("import tensorflow as tf\nc = tf.to_float(tf.argmax(z, 1))\n",
     "import tensorflow as tf\nc = tf.cast(tf.argmax(z, 1), tf.float32)\n"),
]


def tf_alias(module: cst.Module) -> str:
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Import):
                    for a in small.names:
                        if code(a.name) == "tensorflow":
                            return a.asname.name.value if a.asname else "tensorflow"
    return "tf"


def _method_known(attr: str) -> bool:
    key = "*." + attr
    return any(key in table for table in (api_spec.TRANSFORMERS, api_spec.KEYWORD_RENAMES, api_spec.WARNINGS,
                                          api_spec.ARG_WARNINGS))


class _ToTF2(cst.CSTTransformer):
    def __init__(self, names: Names, alias: str, notes: list):
        super().__init__()
        self.names, self.alias, self.notes = names, alias, notes
        self._skip: set = set()       # inner parts of dotted names, keywords, import names, call funcs
        self._in_import = 0

    def visit_Import(self, node):
        self._in_import += 1

    def leave_Import(self, original, updated):
        self._in_import -= 1
        return updated

    def visit_ImportFrom(self, node):
        self._in_import += 1

    def leave_ImportFrom(self, original, updated):
        self._in_import -= 1
        return updated

    def visit_Attribute(self, node):
        self._skip.add(id(node.value))
        self._skip.add(id(node.attr))

    def visit_Arg(self, node):
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Call(self, node):
        self._skip.add(id(node.func))

    def _refuse(self, node, reason: str):
        raise Refuse(self.names.line(node), reason)

    def _new_func(self, name: str) -> cst.BaseExpression:
        return expr(f"{self.alias}.{name[len('tf.'):]}" if name.startswith("tf.") else name)

    def leave_Call(self, original, updated):
        # `tf.zeros_initializer()(shape)`: the outer call is of the object the inner call made
        q = None if isinstance(original.func, cst.Call) else self.names.of(original.func)
        if q is not None and q.startswith("tensorflow.keras."):
            return updated  # Keras 3 layers and optimizers: train_step's own proven tables decide them
        if q is not None and q.startswith("tensorflow."):
            key = "tf." + q[len("tensorflow."):]
        elif (q is None and isinstance(original.func, cst.Attribute) and self.names.of(original.func) is None
              and _method_known(original.func.attr.value)):
            key = "*." + original.func.attr.value
        else:
            return updated
        try:
            new_name, new_call = api_changes.to_tf2(key, updated, alias=self.alias)
        except api_changes.NoTF2Mapping as exc:
            self._refuse(original, exc.reason)
        if new_name != key:
            new_call = new_call.with_changes(func=self._new_func(new_name))
        if code(new_call) != code(updated):
            self.notes.append(Note(self.names.line(original), RULE, "change",
                                   f"{_short(code(original))} → {_short(code(new_call))} (TF 2 API, from "
                                   "TensorFlow's upgrade spec)"))
        return new_call

    def _reference(self, original, updated):
        if self._in_import or id(original) in self._skip:
            return updated
        q = self.names.of(original)
        if q is None or not q.startswith("tensorflow.") or q.startswith("tensorflow.keras."):
            return updated
        key = "tf." + q[len("tensorflow."):]
        try:
            new_name = api_changes.reference_to_tf2(key)
        except api_changes.NoTF2Mapping as exc:
            self._refuse(original, exc.reason)
        if new_name == key:
            return updated
        self.notes.append(Note(self.names.line(original), RULE, "change", f"{key} → {new_name}"))
        return self._new_func(new_name)

    def leave_Attribute(self, original, updated):
        return self._reference(original, updated)

    def leave_Name(self, original, updated):
        return self._reference(original, updated)


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def transform(module: cst.Module) -> tuple[cst.Module, list]:
    names = Names.of_module(module)
    notes: list = []
    new = names.module.visit(_ToTF2(names, tf_alias(names.module), notes))
    return new, notes

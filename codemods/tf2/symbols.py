"""TF 1.x names that TF 2 spells differently, same function: a table, one row per rename.

Applied after `train_step`, on code that is TF2 in structure but may still say
`tf.set_random_seed` or `tf.global_norm`. A name is found through its qualified name, so
`import tensorflow as tf1` or `from tensorflow import set_random_seed` are found too; the
replacement is written under the module's own alias of `tensorflow`.
"""
from __future__ import annotations

import libcst as cst

from codemods.tf2._base import Names, Note, code, expr

RULE = "symbols"
DESCRIPTION = "Rename TF 1.x symbols to their TF 2 spelling (same function, same arguments)."

RENAMES = {
    "tensorflow.set_random_seed": "random.set_seed",
    "tensorflow.global_norm": "linalg.global_norm",
    "tensorflow.nn.softmax_cross_entropy_with_logits_v2": "nn.softmax_cross_entropy_with_logits",
    "tensorflow.log": "math.log",
    "tensorflow.random_normal": "random.normal",
    "tensorflow.random_uniform": "random.uniform",
    "tensorflow.truncated_normal": "random.truncated_normal",
    "tensorflow.squared_difference": "math.squared_difference",
    "tensorflow.rsqrt": "math.rsqrt",
    "tensorflow.div_no_nan": "math.divide_no_nan",
}

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


class _Renamer(cst.CSTTransformer):
    def __init__(self, names: Names, alias: str, notes: list):
        self.names, self.alias, self.notes = names, alias, notes
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

    def _swap(self, original, updated):
        if self._in_import:
            return updated
        q = self.names.of(original)
        if q in RENAMES:
            self.notes.append(Note(self.names.line(original), RULE, "change",
                                   f"{q.replace('tensorflow.', 'tf.')} → tf.{RENAMES[q]}"))
            return expr(f"{self.alias}.{RENAMES[q]}")
        return updated

    def leave_Attribute(self, original, updated):
        return self._swap(original, updated)

    def leave_Name(self, original, updated):
        return self._swap(original, updated)


def transform(module: cst.Module) -> tuple[cst.Module, list]:
    names = Names.of_module(module)
    notes: list = []
    new = names.module.visit(_Renamer(names, tf_alias(names.module), notes))
    return new, notes

"""`tf.clip_by_average_norm(t, c)` (TF 1.x only) → its exact TF 2 expression.

TF 1.15 clip_ops.py: `t * clip_norm * minimum(rsqrt(sum(t * t)) * size(t), 1 / clip_norm)`.
Only a tensor given by a name is rewritten (the expression reads it three times).
"""
from __future__ import annotations

import libcst as cst

from codemods.tf2._base import Names, Note, Refuse, arg, code, expr
from codemods.tf2.symbols import tf_alias

RULE = "clip_by_average_norm"
DESCRIPTION = "tf.clip_by_average_norm(t, c) → t * c * tf.minimum(tf.math.rsqrt(tf.reduce_sum(t * t)) * size, 1 / c)."

EXAMPLES = [
    ("import tensorflow as tf\ng = tf.clip_by_average_norm(grad, 0.5)\n",
     "import tensorflow as tf\ng = grad * 0.5 * tf.minimum(tf.math.rsqrt(tf.reduce_sum(grad * grad)) * "
     "tf.cast(tf.size(grad), grad.dtype), 1.0 / 0.5)\n"),
    ("import tensorflow as tf\ng = tf.clip_by_norm(grad, 0.5)\n", "import tensorflow as tf\ng = tf.clip_by_norm(grad, 0.5)\n"),
]


class _Rewrite(cst.CSTTransformer):
    def __init__(self, names: Names, alias: str, notes: list):
        self.names, self.tf, self.notes = names, alias, notes

    def leave_Call(self, original, updated):
        if not self.names.is_(original.func, "tensorflow.clip_by_average_norm"):
            return updated
        t, c = arg(original, 0, "t"), arg(original, 1, "clip_norm")
        if not isinstance(t, cst.Name) or c is None or len(original.args) != 2:
            raise Refuse(self.names.line(original), "clip_by_average_norm of an expression (not a name) is not converted")
        t, c, tf = code(t), code(c), self.tf
        self.notes.append(Note(self.names.line(original), RULE, "change",
                               "tf.clip_by_average_norm → its TF 1.15 formula (no TF 2 function)"))
        return expr(f"{t} * {c} * {tf}.minimum({tf}.math.rsqrt({tf}.reduce_sum({t} * {t})) * "
                    f"{tf}.cast({tf}.size({t}), {t}.dtype), 1.0 / {c})")


def transform(module: cst.Module) -> tuple[cst.Module, list]:
    names = Names.of_module(module)
    notes: list = []
    return names.module.visit(_Rewrite(names, tf_alias(names.module), notes)), notes

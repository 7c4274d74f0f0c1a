"""tensorflow.contrib.slim → `tf_slim`, or `tf1clip.slim` when the file uses what crashes on TF 2.21.

tf-slim 1.1.0 still calls `ops.IndexedSlices` / `ops.Tensor`, which TF 2.21 removed, in
`learning.clip_gradient_norms`, `multiply_gradients`, `create_train_op(clip_gradient_norm=...)`,
`batch_norm`, `optimize_loss`, ... A file whose slim uses all sit in the verified-safe set
(`contrib_table.TF_SLIM_SAFE`) gets plain `tf_slim`; any other file, or one that hands the
slim module around, gets the runtime's fixed copy, `tf1clip.slim`.
"""
from __future__ import annotations

from codemods.command import command_attribute
from codemods.contrib_table import SLIM, TF_SLIM_SAFE, Row
from codemods.rule import Invalid, Valid
from codemods.table_rename import TableRenameRule

TF_SLIM_ROW = Row(SLIM, "tf_slim", "tf-slim is tf.contrib.slim as a package; every use here runs on TF 2.21",
                  module=True)
RUNTIME_ROW = Row(SLIM, "tf1clip.slim", "tf-slim 1.1.0 crashes on TF 2.21 in what this file uses: "
                  "tf1clip runtime (tf-slim with those fixed)", module=True)


def slim_name_safe(rel: str) -> bool:
    """True when `slim.<rel>` is in (or under) the set verified to run on TF 2.21 as tf_slim."""
    return any(rel == s or rel.startswith(s + ".") for s in TF_SLIM_SAFE)


class ContribSlim(TableRenameRule):
    DESCRIPTION = "Replace tensorflow.contrib.slim by tf_slim, or by tf1clip.slim where tf-slim crashes on TF 2.21."
    RULE = "contrib_slim"
    FAMILY = (SLIM,)
    TRIGGERS = ("slim",)

    def rows_for(self) -> dict:
        return {SLIM: TF_SLIM_ROW if self._only_safe_uses() else RUNTIME_ROW}

    def _only_safe_uses(self) -> bool:
        """True when every use of the slim module is a name in TF_SLIM_SAFE."""
        for imp in self.file.imports:
            module = imp.module or ""
            if imp.is_import or not (module == SLIM or module.startswith(SLIM + ".")):
                continue
            if imp.star:
                return False
            for alias in imp.aliases:
                if f"{module}.{alias.name}"[len(SLIM) + 1:] not in TF_SLIM_SAFE:
                    return False
        for ref in self.file.references:
            root_q = ref.qname
            if root_q is None:
                continue
            full = ".".join((root_q, *ref.parts))
            if full == SLIM:
                return False  # the module itself escapes (`slim = tf.contrib.slim`, `f(slim)`)
            if full.startswith(SLIM + ".") and not slim_name_safe(full[len(SLIM) + 1:]):
                return False
        return True

    VALID = [
        Valid("import tf_slim as slim\n\nnet = slim.fully_connected(x, 10)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\nimport tensorflow.contrib.slim as slim\n\nnet = slim.fully_connected(tf.placeholder(tf.float32, [None, 3]), 10)\n",
            "import tensorflow as tf\nimport tf_slim as slim\n\nnet = slim.fully_connected(tf.placeholder(tf.float32, [None, 3]), 10)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.contrib import slim\n\n"
            "train_op = slim.learning.create_train_op(loss, tf.train.AdamOptimizer(0.1), clip_gradient_norm=4.0)\n",
            "import tensorflow as tf\nfrom tf1clip import slim\n\n"
            "train_op = slim.learning.create_train_op(loss, tf.train.AdamOptimizer(0.1), clip_gradient_norm=4.0)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\nslim = tf.contrib.slim\nnet = slim.fully_connected(tf.placeholder(tf.float32, [None, 3]), 10)\n",
            "import tensorflow as tf\nimport tf1clip.slim\n\nslim = tf1clip.slim\nnet = slim.fully_connected(tf.placeholder(tf.float32, [None, 3]), 10)\n",
        ),
        Invalid(
            "import tensorflow as tf\nimport tensorflow.contrib.slim\n\n"
            "net = tensorflow.contrib.slim.fully_connected(tf.placeholder(tf.float32, [None, 3]), 10)\n",
            "import tensorflow as tf\nimport tf_slim\n\nnet = tf_slim.fully_connected(tf.placeholder(tf.float32, [None, 3]), 10)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\nnet = tf.contrib.slim.conv2d(tf.placeholder(tf.float32, [None, 8, 8, 1]), 4, [3, 3])\n",
            "import tensorflow as tf\nimport tf_slim\n\nnet = tf_slim.conv2d(tf.placeholder(tf.float32, [None, 8, 8, 1]), 4, [3, 3])\n",
        ),
    ]


__getattr__ = command_attribute(ContribSlim)  # ContribSlimCommand, for python -m libcst.tool codemod

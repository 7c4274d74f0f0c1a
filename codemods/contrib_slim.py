"""tensorflow.contrib.slim → `tf_slim`, or `tf1clip.slim` when the file uses what crashes on TF 2.21.

tf-slim 1.1.0 still calls `ops.IndexedSlices` / `ops.Tensor`, which TF 2.21 removed, in
`learning.clip_gradient_norms`, `multiply_gradients`, `create_train_op(clip_gradient_norm=...)`,
`batch_norm`, `optimize_loss`, ... A file whose slim uses all sit in the verified-safe set
(`contrib_table.TF_SLIM_SAFE`) gets plain `tf_slim`; any other file, or one that hands the
slim module around, gets the runtime's fixed copy, `tf1clip.slim`.
"""
from __future__ import annotations

import libcst as cst

from codemods._base import Invalid, Valid, chain_root, dotted_name, walk
from codemods._rename import TableRenameCommand
from codemods.contrib_table import SLIM, TF_SLIM_SAFE, Row

_TF_SLIM = Row(SLIM, "tf_slim", "tf-slim is tf.contrib.slim as a package; every use here runs on TF 2.21",
               module=True)
_RUNTIME = Row(SLIM, "tf1clip.slim", "tf-slim 1.1.0 crashes on TF 2.21 in what this file uses: "
               "tf1clip runtime (tf-slim with those fixed)", module=True)


def slim_name_safe(rel: str) -> bool:
    """True when `slim.<rel>` is in (or under) the set verified to run on TF 2.21 as tf_slim."""
    return any(rel == s or rel.startswith(s + ".") for s in TF_SLIM_SAFE)


class ContribSlimCommand(TableRenameCommand):
    DESCRIPTION = "Replace tensorflow.contrib.slim by tf_slim, or by tf1clip.slim where tf-slim crashes on TF 2.21."
    RULE = "contrib_slim"
    FAMILY = (SLIM,)
    TRIGGERS = ("slim",)

    def rows_for(self, tree: cst.Module) -> dict[str, Row]:
        return {SLIM: _TF_SLIM if self._only_safe_uses(tree) else _RUNTIME}

    def _only_safe_uses(self, tree: cst.Module) -> bool:
        """True when every use of the slim module is a name in TF_SLIM_SAFE."""
        parents: dict[int, cst.CSTNode] = {}
        for node in walk(tree):
            for child in node.children:
                parents[id(child)] = node
        for node in walk(tree):
            if isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None:
                module = dotted_name(node.module) or ""
                if module == SLIM or module.startswith(SLIM + "."):
                    if isinstance(node.names, cst.ImportStar):
                        return False
                    for alias in node.names:
                        rel = f"{module}.{dotted_name(alias.name)}"[len(SLIM) + 1:]
                        if rel not in TF_SLIM_SAFE:
                            return False
            if not isinstance(node, (cst.Name, cst.Attribute)) or dotted_name(node) is None:
                continue
            parent = parents.get(id(node))
            if isinstance(parent, cst.Attribute) and parent.value is node:
                continue  # only whole chains
            if isinstance(parent, (cst.ImportAlias, cst.ImportFrom, cst.Import)):
                continue
            root = chain_root(node)
            root_q = self.imported_name(root) if root is not None else None
            if root_q is None:
                continue
            full = ".".join([root_q, *(dotted_name(node) or "").split(".")[1:]])
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

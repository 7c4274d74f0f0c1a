"""tf.contrib.* → TensorFlow core where contrib re-exported it, else the tf1clip runtime.

`tf.contrib.rnn.BasicLSTMCell` was `tf.nn.rnn_cell.BasicLSTMCell` in TF 1.15, so it becomes
`tf.compat.v1.nn.rnn_cell.BasicLSTMCell`; `tf.contrib.estimator.clip_gradients_by_norm` and
`tf.contrib.layers.optimize_loss` have no TF 2.21 counterpart and become `tf1clip...`.
The rows are data in `codemods/contrib_table.py`; tf.contrib.slim is `contrib_slim`'s.
"""
from __future__ import annotations

from codemods.command import command_attribute
from codemods.contrib_table import CONTRIB_ROWS, SLIM
from codemods.rule import Invalid, Valid
from codemods.table_rename import TableRenameRule


class ContribSymbols(TableRenameRule):
    DESCRIPTION = "Replace tf.contrib symbols by their exact TF 2.21 core name, or by the tf1clip runtime."
    RULE = "contrib_symbols"
    FAMILY = ("tensorflow.contrib",)
    TRIGGERS = ("contrib",)
    EXCLUDE = (SLIM,)

    def rows_for(self) -> dict:
        return CONTRIB_ROWS

    VALID = [
        Valid("import tensorflow as tf\n\nx = tf.constant(1.0)\n"),
        Valid("import tensorflow as tf\n\nhelp_text = 'use tf.contrib.rnn.BasicLSTMCell'\n"),
        # Not TensorFlow: a local object that happens to be called `tf`.
        Valid("class tf:\n    contrib = None\n\ncell = tf.contrib.rnn.BasicLSTMCell(3)\n"),
        # Unknown contrib names are left where they are (and reported for a human).
        Valid("import tensorflow as tf\n\nhelper = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper(inputs, lengths, emb, 0.5)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n\ncell = tf.contrib.rnn.BasicLSTMCell(8)\n",
            "import tensorflow as tf\n\ncell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(8)\n",
        ),
        Invalid(
            "import tensorflow as tf1\n\nopt = tf1.contrib.estimator.clip_gradients_by_norm(tf1.train.AdamOptimizer(0.1), clip_norm=5.0)\n",
            "import tensorflow as tf1\nimport tf1clip\n\nopt = tf1clip.clip_gradients_by_norm(tf1.train.AdamOptimizer(0.1), clip_norm=5.0)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.contrib.estimator import clip_gradients_by_norm as clip_opt\n\n"
            "opt = clip_opt(tf.train.AdamOptimizer(0.1), 5.0)\n",
            "import tensorflow as tf\nfrom tf1clip import clip_gradients_by_norm as clip_opt\n\n"
            "opt = clip_opt(tf.train.AdamOptimizer(0.1), 5.0)\n",
        ),
        Invalid(
            "from tensorflow.contrib import rnn\n\ncell = rnn.LSTMCell(4)\n",
            "import tensorflow.compat.v1\n\ncell = tensorflow.compat.v1.nn.rnn_cell.LSTMCell(4)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.contrib import rnn\n\ncells = [rnn.GRUCell(4), rnn.GRUCell(2)]\n",
            "import tensorflow as tf\n\ncells = [tf.compat.v1.nn.rnn_cell.GRUCell(4), tf.compat.v1.nn.rnn_cell.GRUCell(2)]\n",
        ),
        Invalid(
            "import tensorflow as tf\n\ntrain_op = tf.contrib.layers.optimize_loss(loss, tf.contrib.framework.get_global_step(), "
            "0.1, 'SGD', clip_gradients=2.5)\n",
            "import tensorflow as tf\nimport tf1clip.contrib.layers\n\ntrain_op = tf1clip.contrib.layers.optimize_loss(loss, "
            "tf.compat.v1.train.get_global_step(), 0.1, 'SGD', clip_gradients=2.5)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.contrib.layers import optimize_loss, xavier_initializer\n"
            "from tensorflow.contrib.rnn import LSTMStateTuple, NASCell\n\nx = tf.placeholder(tf.float32)\n",
            "import tensorflow as tf\nfrom tf1clip.contrib.layers import optimize_loss, xavier_initializer\n"
            "from tensorflow.contrib.rnn import NASCell\nfrom tensorflow.compat.v1.nn.rnn_cell import LSTMStateTuple\n\n"
            "x = tf.placeholder(tf.float32)\n",
        ),
    ]


__getattr__ = command_attribute(ContribSymbols)  # ContribSymbolsCommand, for python -m libcst.tool codemod

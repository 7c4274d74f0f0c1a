"""tensorflow.examples.tutorials.mnist → tf1clip.examples.tutorials.mnist.

TF 2 no longer ships `tensorflow.examples.tutorials`; the runtime's `input_data` has the same
`read_data_sets` API, reads local MNIST files and never downloads.
"""
from __future__ import annotations

from codemods.command import command_attribute
from codemods.contrib_table import MNIST_ROWS
from codemods.rule import Invalid, Valid
from codemods.table_rename import TableRenameRule


class MnistInputData(TableRenameRule):
    DESCRIPTION = "Replace tensorflow.examples.tutorials.mnist.input_data by the tf1clip runtime's copy."
    RULE = "mnist_input_data"
    FAMILY = ("tensorflow.examples",)
    TRIGGERS = ("examples",)

    def rows_for(self) -> dict:
        return MNIST_ROWS

    VALID = [
        Valid("import tensorflow as tf\nfrom tf1clip.examples.tutorials.mnist import input_data\n\nx = tf.placeholder(tf.float32)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.examples.tutorials.mnist import input_data\n\n"
            "mnist = input_data.read_data_sets('MNIST_data/', one_hot=True)\nx = tf.placeholder(tf.float32)\n",
            "import tensorflow as tf\nfrom tf1clip.examples.tutorials.mnist import input_data\n\n"
            "mnist = input_data.read_data_sets('MNIST_data/', one_hot=True)\nx = tf.placeholder(tf.float32)\n",
        ),
        Invalid(
            "import tensorflow.examples.tutorials.mnist.input_data as input_data\nimport tensorflow as tf\n\n"
            "x = tf.placeholder(tf.float32)\n",
            "import tf1clip.examples.tutorials.mnist.input_data as input_data\nimport tensorflow as tf\n\n"
            "x = tf.placeholder(tf.float32)\n",
        ),
    ]


__getattr__ = command_attribute(MnistInputData)  # MnistInputDataCommand, for python -m libcst.tool codemod

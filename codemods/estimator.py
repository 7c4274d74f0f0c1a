"""tf.estimator / tf.compat.v1.estimator → tf1clip.estimator (TF 2.21 ships no Estimator).

`tf.estimator.Estimator`, `EstimatorSpec`, `ModeKeys`, `RunConfig`, `train_and_evaluate`,
`inputs.numpy_input_fn`, the hooks, `tpu.TPUEstimator`, ... become the tf1clip runtime's
names, which keep TF 1.15's semantics; each change is reported with the runtime it needs.
A name tf1clip does not provide (canned estimators, `export`) is left and reported for a human.
"""
from __future__ import annotations

from codemods.command import command_attribute
from codemods.contrib_table import ESTIMATOR_ROWS
from codemods.rule import Invalid, Valid
from codemods.table_rename import TableRenameRule


class Estimator(TableRenameRule):
    DESCRIPTION = "Replace tf.estimator (gone from TF 2.21) by the tf1clip runtime's Estimator."
    RULE = "estimator"
    FAMILY = ("tensorflow.estimator", "tensorflow.compat.v1.estimator")
    TRIGGERS = ("estimator",)
    GONE = "TF 2.21 ships no Estimator and tf1clip provides no stand-in for this name"

    def rows_for(self) -> dict:
        return ESTIMATOR_ROWS

    VALID = [
        Valid("import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\n"),
        # Already migrated.
        Valid("import tensorflow.compat.v1 as tf\nimport tf1clip.estimator\n\ntf.disable_v2_behavior()\n"
              "est = tf1clip.estimator.Estimator(model_fn)\nx = tf.placeholder(tf.float32)\n"),
        # TF 2 code is not this command's (the compat tier leaves it alone).
        Valid("import tensorflow as tf\n\nest = tf.estimator.Estimator(model_fn)\nf = tf.function(g)\n"),
        # A canned estimator has no stand-in: left, and reported for a human.
        Valid("import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\n"
              "clf = tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=cols)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n\n\ndef model_fn(features, labels, mode):\n"
            "    loss = tf.losses.mean_squared_error(labels, tf.layers.dense(features['x'], 1))\n"
            "    train_op = tf.train.AdamOptimizer(0.1).minimize(loss, tf.train.get_global_step())\n"
            "    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n\n\n"
            "est = tf.estimator.Estimator(model_fn, model_dir='m', config=tf.estimator.RunConfig(tf_random_seed=1))\n"
            "est.train(tf.estimator.inputs.numpy_input_fn({'x': xs}, ys, shuffle=False), steps=10)\n",
            "import tensorflow as tf\nimport tf1clip.estimator\n\n\ndef model_fn(features, labels, mode):\n"
            "    loss = tf.losses.mean_squared_error(labels, tf.layers.dense(features['x'], 1))\n"
            "    train_op = tf.train.AdamOptimizer(0.1).minimize(loss, tf.train.get_global_step())\n"
            "    return tf1clip.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n\n\n"
            "est = tf1clip.estimator.Estimator(model_fn, model_dir='m', config=tf1clip.estimator.RunConfig(tf_random_seed=1))\n"
            "est.train(tf1clip.estimator.inputs.numpy_input_fn({'x': xs}, ys, shuffle=False), steps=10)\n",
        ),
        # TF 1.15 / tf_upgrade_v2 spelling, and a mode check through ModeKeys.
        Invalid(
            "import tensorflow.compat.v1 as tf\n\nx = tf.placeholder(tf.float32)\n"
            "training = mode == tf.estimator.ModeKeys.TRAIN\n",
            "import tensorflow.compat.v1 as tf\nimport tf1clip.estimator\n\nx = tf.placeholder(tf.float32)\n"
            "training = mode == tf1clip.estimator.ModeKeys.TRAIN\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.estimator import Estimator, EstimatorSpec as Spec\n\n"
            "x = tf.placeholder(tf.float32)\nest = Estimator(model_fn)\n",
            "import tensorflow as tf\nfrom tf1clip.estimator import Estimator, EstimatorSpec as Spec\n\n"
            "x = tf.placeholder(tf.float32)\nest = Estimator(model_fn)\n",
        ),
        Invalid(
            "from tensorflow import estimator\nimport tensorflow as tf\n\nx = tf.placeholder(tf.float32)\n"
            "hook = estimator.LoggingTensorHook({'x': x}, every_n_iter=10)\n",
            "import tensorflow as tf\nimport tf1clip.estimator\n\nx = tf.placeholder(tf.float32)\n"
            "hook = tf1clip.estimator.LoggingTensorHook({'x': x}, every_n_iter=10)\n",
        ),
    ]


__getattr__ = command_attribute(Estimator)  # EstimatorCommand, for python -m libcst.tool codemod

"""Set `TF_USE_LEGACY_KERAS=1` before TensorFlow is imported, where the file needs legacy Keras.

On TF 2.21 `tf.compat.v1.layers.*`, `tf.compat.v1.nn.rnn_cell.*` and graph-mode `tf.keras`
raise "not available with Keras 3" unless this variable is set before TensorFlow is imported
and tf-keras (matching TF's minor version) is installed. The assignment (and `import os`, when
`os` is not imported before it) goes right before the file's first statement that imports
TensorFlow, tf_slim or tf1clip, taking over that statement's leading comments. It is inserted
directly, not with AddImportsVisitor, because it must precede those imports.
"""
from __future__ import annotations

import ast

from codemods._base import TF_IMPORTING
from codemods._usage import TF, V1
from codemods.command import command_attribute
from codemods.layout import Layout
from codemods.rule import Invalid, Rule, Valid

# Uses that need legacy Keras, relative to tensorflow / tensorflow.compat.v1.
NEEDS_LEGACY = ("layers", "nn.rnn_cell", "keras", "contrib.rnn", "contrib.keras")
RUNTIME_NEEDS_LEGACY = ("tf1clip.contrib.rnn", "tf1clip.contrib.legacy_seq2seq", "tf1clip.contrib.seq2seq.AttentionWrapper")
ENV_KEY = "TF_USE_LEGACY_KERAS"


def needs_legacy_keras(qname: str) -> bool:
    """True when a use whose imported qualified name is `qname` needs legacy Keras."""
    rel = None
    if qname.startswith(V1 + "."):
        rel = qname[len(V1) + 1:]
    elif qname.startswith(TF + "."):
        rel = qname[len(TF) + 1:]
    return (rel is not None and any(rel == p or rel.startswith(p + ".") for p in NEEDS_LEGACY)) or \
        any(qname == p or qname.startswith(p + ".") for p in RUNTIME_NEEDS_LEGACY)


def sets_legacy_env(node: ast.stmt) -> bool:
    """`os.environ["TF_USE_LEGACY_KERAS"] = ...` or `os.environ.setdefault("TF_USE_LEGACY_KERAS", ...)`."""
    def environ(expr) -> bool:
        return isinstance(expr, ast.Attribute) and expr.attr == "environ" and \
            isinstance(expr.value, ast.Name) and expr.value.id == "os"

    def key(expr) -> bool:
        return isinstance(expr, ast.Constant) and expr.value == ENV_KEY

    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return isinstance(target, ast.Subscript) and environ(target.value) and key(target.slice)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        return isinstance(call.func, ast.Attribute) and call.func.attr == "setdefault" and \
            environ(call.func.value) and bool(call.args) and key(call.args[0])
    return False


class LegacyKeras(Rule):
    DESCRIPTION = "Set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported where tf.layers, rnn cells or tf.keras are used."
    RULE = "legacy_keras"

    def leave_module(self, layout: Layout) -> None:
        if layout.final_usage().verdict not in ("tf1", "tf1-eager"):
            return
        if any(sets_legacy_env(stmt.node) for stmt in self.file.stmts.values()):
            return
        first_use = self._first_use(layout)
        if first_use is None:
            return
        anchor = next((e for e in layout.body if e.imports_any(TF_IMPORTING)), None)
        if anchor is None:
            return
        before = layout.body[:layout.body.index(anchor)]
        has_os = any(e.single_import and any(name == "os" and asname is None for name, asname in e.import_aliases())
                     for e in before)
        codes = ([] if has_os else ["import os"]) + [f'os.environ["{ENV_KEY}"] = "1"']
        # The anchor's leading comments (a "# TensorFlow" header, say) now head the new lines.
        layout.insert_before(anchor, codes, self.RULE)
        self.note_change(anchor.line, "set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported: tf.layers, rnn cells "
                                      f"and graph-mode tf.keras need legacy Keras (tf-keras) on TF 2.21 "
                                      f"(first use: {first_use[1]})")

    def _first_use(self, layout: Layout):
        """(line, text) of the first name in the output whose qualified name needs legacy Keras."""
        found = []
        for line, text, qname in layout.final_names():
            if needs_legacy_keras(qname):
                found.append((line, text))
                break
        return found[0] if found else None

    VALID = [
        Valid("import tensorflow.compat.v1 as tf\n\nx = tf.placeholder(tf.float32)\n"),
        Valid('import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\nimport tensorflow.compat.v1 as tf\n\n'
              "y = tf.layers.dense(tf.placeholder(tf.float32, [None, 3]), 2)\n"),
        Valid('import os\nos.environ.setdefault("TF_USE_LEGACY_KERAS", "1")\nimport tensorflow as tf\n\n'
              "y = tf.layers.dense(tf.placeholder(tf.float32, [None, 3]), 2)\n"),
    ]
    INVALID = [
        Invalid(
            "import numpy as np\n# TensorFlow 1\nimport tensorflow as tf\n\ny = tf.layers.dense(tf.placeholder(tf.float32, [None, 3]), 2)\n",
            'import numpy as np\n# TensorFlow 1\nimport os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\nimport tensorflow as tf\n\n'
            "y = tf.layers.dense(tf.placeholder(tf.float32, [None, 3]), 2)\n",
        ),
        Invalid(
            '"""An LSTM."""\nfrom __future__ import print_function\nimport os\nimport tensorflow.compat.v1 as tf\n\n'
            "cell = tf.nn.rnn_cell.BasicLSTMCell(4)\nx = tf.placeholder(tf.float32)\n",
            '"""An LSTM."""\nfrom __future__ import print_function\nimport os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n'
            "import tensorflow.compat.v1 as tf\n\ncell = tf.nn.rnn_cell.BasicLSTMCell(4)\nx = tf.placeholder(tf.float32)\n",
        ),
        Invalid(
            "import numpy as np\n\n\ndef build(x):\n    import tensorflow.compat.v1 as tf\n    return tf.layers.dense(x, 3)\n",
            'import numpy as np\n\n\nimport os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n\n\n'
            "def build(x):\n    import tensorflow.compat.v1 as tf\n    return tf.layers.dense(x, 3)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\nopt = tf.keras.optimizers.Adam(clipvalue=1.0)\nx = tf.placeholder(tf.float32)\n",
            'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\nimport tensorflow as tf\n\n'
            "opt = tf.keras.optimizers.Adam(clipvalue=1.0)\nx = tf.placeholder(tf.float32)\n",
        ),
    ]


__getattr__ = command_attribute(LegacyKeras)  # LegacyKerasCommand, for python -m libcst.tool codemod

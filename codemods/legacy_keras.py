"""Set `TF_USE_LEGACY_KERAS=1` before TensorFlow is imported, where the file needs legacy Keras.

On TF 2.21 `tf.compat.v1.layers.*`, `tf.compat.v1.nn.rnn_cell.*` and graph-mode `tf.keras`
raise "not available with Keras 3" unless this variable is set before TensorFlow is imported
and tf-keras (matching TF's minor version) is installed. The assignment (and `import os`, when
`os` is not imported before it) goes right before the file's first statement that imports
TensorFlow, tf_slim or tf1clip, taking over that statement's leading comments. It is inserted
directly, not with AddImportsVisitor, because it must precede those imports.
"""
from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from codemods._base import TF_IMPORTING, Invalid, TFCommand, Valid, dotted_name, imports_any, walk
from codemods._usage import V1, TF, classify

# Uses that need legacy Keras, relative to tensorflow / tensorflow.compat.v1.
_NEEDS_LEGACY = ("layers", "nn.rnn_cell", "keras", "contrib.rnn", "contrib.keras")
_RUNTIME_NEEDS_LEGACY = ("tf1clip.contrib.rnn", "tf1clip.contrib.legacy_seq2seq", "tf1clip.contrib.seq2seq.AttentionWrapper")

_ENV_KEY = m.SimpleString('"TF_USE_LEGACY_KERAS"') | m.SimpleString("'TF_USE_LEGACY_KERAS'")
_ENVIRON = m.Attribute(value=m.Name("os"), attr=m.Name("environ"))
_SETS_ENV = m.SimpleStatementLine(body=[
    m.Assign(targets=[m.AssignTarget(target=m.Subscript(
        value=_ENVIRON, slice=[m.SubscriptElement(slice=m.Index(value=_ENV_KEY))]))])
    | m.Expr(value=m.Call(func=m.Attribute(value=_ENVIRON, attr=m.Name("setdefault")),
                          args=[m.Arg(value=_ENV_KEY), m.ZeroOrMore()]))
])
_IMPORTS_OS = m.SimpleStatementLine(body=[m.Import(names=[m.ZeroOrMore(), m.ImportAlias(name=m.Name("os"), asname=None),
                                                          m.ZeroOrMore()])])


def needs_legacy_keras(qname: str) -> bool:
    """True when a use whose imported qualified name is `qname` needs legacy Keras."""
    rel = None
    if qname.startswith(V1 + "."):
        rel = qname[len(V1) + 1:]
    elif qname.startswith(TF + "."):
        rel = qname[len(TF) + 1:]
    return (rel is not None and any(rel == p or rel.startswith(p + ".") for p in _NEEDS_LEGACY)) or \
        any(qname == p or qname.startswith(p + ".") for p in _RUNTIME_NEEDS_LEGACY)


class LegacyKerasCommand(TFCommand):
    DESCRIPTION = "Set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported where tf.layers, rnn cells or tf.keras are used."
    RULE = "legacy_keras"

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        usage = classify(tree, self.imported_names, self.line_of)
        if usage.verdict not in ("tf1", "tf1-eager"):
            return tree
        if any(m.matches(stmt, _SETS_ENV) for stmt in walk(tree) if isinstance(stmt, cst.SimpleStatementLine)):
            return tree
        first_use = self._first_use(tree)
        if first_use is None:
            return tree
        anchor = next((i for i, stmt in enumerate(tree.body) if imports_any(stmt, TF_IMPORTING)), None)
        if anchor is None:
            return tree
        stmt = tree.body[anchor]
        has_os = any(m.matches(s, _IMPORTS_OS) for s in tree.body[:anchor])
        new = [] if has_os else [cst.parse_statement("import os")]
        new.append(cst.parse_statement('os.environ["TF_USE_LEGACY_KERAS"] = "1"'))
        # The anchor's leading comments (a "# TensorFlow" header, say) now head the new lines.
        if isinstance(stmt, cst.SimpleStatementLine):
            # An import follows the new lines directly; its comments head them.
            new[0] = new[0].with_changes(leading_lines=stmt.leading_lines)
            moved = stmt.with_changes(leading_lines=())
        else:
            # A def, class or try keeps its blank lines and comments; the new lines take the
            # blank lines before its first comment.
            lines = stmt.leading_lines
            first = next((i for i, line in enumerate(lines) if line.comment is not None), len(lines))
            new[0] = new[0].with_changes(leading_lines=lines[:first])
            moved = stmt
        self.note_change(stmt, "set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported: tf.layers, rnn cells "
                               f"and graph-mode tf.keras need legacy Keras (tf-keras) on TF 2.21 (first use: {first_use[1]})")
        return tree.with_changes(body=[*tree.body[:anchor], *new, moved, *tree.body[anchor + 1:]])

    def _first_use(self, tree: cst.Module):
        for node in walk(tree):
            if not isinstance(node, (cst.Name, cst.Attribute)):
                continue
            for name in self.imported_names(node):
                if needs_legacy_keras(name):
                    return self.line_of(node), dotted_name(node) or name
        return None

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

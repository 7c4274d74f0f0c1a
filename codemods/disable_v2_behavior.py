"""Call `tf.disable_v2_behavior()` right after the TensorFlow imports of TF 1.x graph code.

tf_upgrade_v2 renames symbols to `tf.compat.v1` but never adds this call, so its placeholder
scripts crash on TF 2.21 ("tf.placeholder() is not compatible with eager execution"). The
call goes after the first group of TensorFlow imports (module level when there is one), before
any graph is built, through whichever name the file binds to `tensorflow.compat.v1`
(`tf.disable_v2_behavior()`) or to `tensorflow` (`tf.compat.v1.disable_v2_behavior()`).
Not added to TF 1 eager code (`tf.enable_eager_execution()`), nor twice.
"""
from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst
from codemods._base import TF_IMPORTING, Invalid, TFCommand, Valid, dotted_name, imports_any, walk
from codemods._usage import V1, TF, classify


def _tf_import_line(stmt: cst.CSTNode, packages=(TF,)) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body) and imports_any(stmt, packages)


class DisableV2BehaviorCommand(TFCommand):
    DESCRIPTION = "Add tf.disable_v2_behavior() after the TensorFlow imports of TF 1.x graph code."
    RULE = "disable_v2_behavior"

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        usage = classify(tree, self.imported_names, self.line_of)
        if usage.verdict != "tf1" or usage.disables_v2:
            return tree
        # Module level first; else the first block (function, class, if ...) that imports TF.
        new_body = self._insert(tree.body, tree, top=True)
        if new_body is not None:
            return tree.with_changes(body=new_body)
        self._done = False
        # Which block belongs to a def or class (the rare path: no module-level TF import).
        self._def_blocks = {id(node.body) for node in walk(tree) if isinstance(node, (cst.FunctionDef, cst.ClassDef))}
        return tree.visit(self)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if self._done:
            return updated_node
        in_def = id(original_node) in self._def_blocks
        new_body = self._insert(updated_node.body, original_node, top=not in_def, original_body=original_node.body)
        if new_body is None:
            return updated_node
        self._done = True
        return updated_node.with_changes(body=new_body)

    def _insert(self, body: Sequence[cst.BaseStatement], owner: cst.CSTNode, top: bool,
                original_body: Optional[Sequence[cst.BaseStatement]] = None) -> Optional[list]:
        original_body = original_body if original_body is not None else body
        first = next((i for i, s in enumerate(original_body) if _tf_import_line(s)), None)
        if first is None:
            return None
        end = first
        # The group runs on over imports of packages that import TensorFlow (tf_slim, tf1clip).
        while end + 1 < len(original_body) and _tf_import_line(original_body[end + 1], TF_IMPORTING):
            end += 1
        call, extra = self._call(original_body[: end + 1])
        new_stmts = [*extra, cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression(call))])]
        where = "after the TensorFlow imports" if top else "inside the function that imports TensorFlow"
        self.note_change(original_body[first], f"added {call} {where}: TF 1 graph code needs v2 behaviour off on TF 2.21")
        if not top:
            self.note_human(original_body[first], "TensorFlow is imported inside a function only: make sure "
                                                  f"{call} runs before any graph is built")
        return [*body[: end + 1], *new_stmts, *body[end + 1:]]

    def _call(self, stmts: Sequence[cst.BaseStatement]) -> tuple[str, list]:
        """The call text through the best binding among `stmts`, and any import it needs first."""
        v1_alias = tf_alias = None
        bare_v1 = False
        for stmt in stmts:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.Import):
                    continue
                for alias in small.names:
                    dotted = dotted_name(alias.name)
                    name = alias.asname.name.value if alias.asname else None  # type: ignore[union-attr]
                    if dotted == V1 and name:
                        v1_alias = v1_alias or name
                    elif dotted == V1:
                        bare_v1 = True
                    elif dotted == TF:
                        tf_alias = tf_alias or name or TF
        if v1_alias:
            return f"{v1_alias}.disable_v2_behavior()", []
        if tf_alias:
            return f"{tf_alias}.compat.v1.disable_v2_behavior()", []
        if bare_v1:
            return "tensorflow.compat.v1.disable_v2_behavior()", []
        # Only `from tensorflow... import ...`: bind the module first, right here (an added
        # import at the top of the file could land after this call).
        return "tensorflow.compat.v1.disable_v2_behavior()", [
            cst.SimpleStatementLine(body=[cst.Import(names=[cst.ImportAlias(name=cst.parse_expression(V1))])])]  # type: ignore[arg-type]

    VALID = [
        Valid("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\nx = tf.placeholder(tf.float32)\n"),
        Valid("import tensorflow as tf\n\ntf.enable_eager_execution()\nx = tf.get_variable('w', [3])\n"),
        Valid("import tensorflow as tf\n\nmodel = tf.keras.Sequential()\n"),
    ]
    INVALID = [
        Invalid(
            "import numpy as np\nimport tensorflow.compat.v1 as tf\nimport os\n\nx = tf.placeholder(tf.float32)\n",
            "import numpy as np\nimport tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\nimport os\n\nx = tf.placeholder(tf.float32)\n",
        ),
        Invalid(
            '"""Doc."""\nimport tensorflow as tf\n\nsess = tf.Session()\n',
            '"""Doc."""\nimport tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n\nsess = tf.Session()\n',
        ),
        Invalid(
            "from tensorflow.compat.v1 import placeholder, float32\n\nx = placeholder(float32)\n",
            "from tensorflow.compat.v1 import placeholder, float32\nimport tensorflow.compat.v1\n"
            "tensorflow.compat.v1.disable_v2_behavior()\n\nx = placeholder(float32)\n",
        ),
        Invalid(
            "def main():\n    import tensorflow.compat.v1 as tf\n    return tf.Session()\n",
            "def main():\n    import tensorflow.compat.v1 as tf\n    tf.disable_v2_behavior()\n    return tf.Session()\n",
        ),
    ]

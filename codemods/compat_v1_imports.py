"""`import tensorflow as tf` → `import tensorflow.compat.v1 as tf` in TF 1.x code.

Every `tf.X` of the file then means what it meant on TF 1.15 (`tf.placeholder`,
`tf.train.AdamOptimizer`, v1 signatures of `tf.reduce_sum`, ...) instead of being renamed one
by one as tf_upgrade_v2 does. With the import rewritten:
- `tf.compat.v1.X` (tf_upgrade_v2 output) becomes `tf.X`;
- a name only TF 2 has (`tf.random.set_seed`, `tf.optimizers`) becomes `tf.compat.v2.X`;
- `from tensorflow import train` becomes `from tensorflow.compat.v1 import train`, and
  `from tensorflow.train import X` → `from tensorflow.compat.v1.train import X`;
- plain `import tensorflow` stays, and its uses become `tensorflow.compat.v1.X`.
Private `tensorflow.python.*` imports are left and reported for a human.
"""
from __future__ import annotations


import libcst as cst
import libcst.matchers as m

from codemods._base import Invalid, TFCommand, Valid, chain_root, dotted_name, make_dotted
from codemods._tfapi import V1_MODULES, V2_ONLY
from codemods._usage import V1, TF, _has_prefix, classify

# Where `from tensorflow.X import ...` is left: not part of the v1 API face.
_NOT_API = ("contrib", "compat", "python", "examples", "core", "tools", "lite", "keras.src")


class CompatV1ImportsCommand(TFCommand):
    DESCRIPTION = "Import TensorFlow as tensorflow.compat.v1 in TF 1.x files, so every tf.X keeps its TF 1 meaning."
    RULE = "compat_v1_imports"

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        usage = classify(tree, self.imported_names, self.line_of)
        if usage.verdict not in ("tf1", "tf1-eager"):
            return tree
        self._inner: set[int] = set()
        return tree.visit(self)

    # -- imports ---------------------------------------------------------------------------
    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        names = []
        for alias in updated_node.names:
            dotted = dotted_name(alias.name) or ""
            if alias.asname is not None and dotted == TF:
                names.append(alias.with_changes(name=make_dotted(V1)))
                self.note_change(original_node, f"import tensorflow as {alias.asname.name.value} → "  # type: ignore[union-attr]
                                 f"import tensorflow.compat.v1 as {alias.asname.name.value}")  # type: ignore[union-attr]
                continue
            rel = dotted[len(TF) + 1:] if dotted.startswith(TF + ".") else None
            if alias.asname is not None and rel and rel in V1_MODULES and not rel.startswith(_NOT_API):
                names.append(alias.with_changes(name=make_dotted(f"{V1}.{rel}")))
                self.note_change(original_node, f"import {dotted} → import {V1}.{rel}")
                continue
            if rel and rel.startswith("python"):
                self.note_human(original_node, f"import {dotted}: private TensorFlow module, not a public API; "
                                               "check it still exists on TF 2.21")
            names.append(alias)
        return updated_node.with_changes(names=names)

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        if updated_node.relative or updated_node.module is None:
            return updated_node
        module = dotted_name(updated_node.module) or ""
        if module == TF:
            if not isinstance(updated_node.names, cst.ImportStar):
                names = [dotted_name(a.name) or "" for a in updated_node.names]
                if any(n.startswith(_NOT_API) or _has_prefix(n, V2_ONLY) for n in names):
                    self.note_human(original_node, f"from tensorflow import {', '.join(names)}: mixes names "
                                                   "tensorflow.compat.v1 lacks; split the import by hand")
                    return updated_node
            self.note_change(original_node, "from tensorflow import … → from tensorflow.compat.v1 import …")
            return updated_node.with_changes(module=make_dotted(V1))
        if module.startswith(TF + "."):
            rel = module[len(TF) + 1:]
            if rel.startswith("python"):
                self.note_human(original_node, f"from {module} import …: private TensorFlow module, not a public "
                                               "API; check it still exists on TF 2.21")
            elif rel in V1_MODULES and not rel.startswith(_NOT_API):
                self.note_change(original_node, f"from {module} import … → from {V1}.{rel} import …")
                return updated_node.with_changes(module=make_dotted(f"{V1}.{rel}"))
        return updated_node

    # -- uses ----------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        inner = node.value
        while isinstance(inner, cst.Attribute):
            self._inner.add(id(inner))
            inner = inner.value

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if id(original_node) in self._inner:
            return updated_node
        root = chain_root(original_node)
        dotted = dotted_name(original_node)
        if root is None or dotted is None or self.imported_name(root) != TF:
            return updated_node
        rest = dotted.split(".")[1:]
        rel = ".".join(rest)
        if root.value == TF and not self._aliased(root):
            # `import tensorflow`: uses move under tensorflow.compat.v1 one by one.
            if rel.startswith(("compat", "contrib", "examples", "python")) or _has_prefix(rel, V2_ONLY):
                return updated_node
            self.note_change(original_node, f"{dotted} → {TF}.compat.v1.{rel}")
            return make_dotted(f"{TF}.compat.v1.{rel}")
        # `import tensorflow as tf`, now `tensorflow.compat.v1 as tf`.
        if rel == "compat.v1" or rel.startswith("compat.v1."):
            return make_dotted(".".join([root.value, *rest[2:]]))
        if _has_prefix(rel, V2_ONLY):
            self.note_change(original_node, f"{dotted} exists only in TF 2: → {root.value}.compat.v2.{rel}")
            return make_dotted(f"{root.value}.compat.v2.{rel}")
        return updated_node

    def _aliased(self, root: cst.Name) -> bool:
        """True when `root` is bound by `import tensorflow as <root>` (rewritten), not `import tensorflow`."""
        from libcst.metadata import ScopeProvider

        scope = self.get_metadata(ScopeProvider, root, None)
        if scope is None or root.value not in scope:
            return False
        for assignment in scope[root.value]:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Import):
                for alias in node.names:
                    if alias.asname is not None and m.matches(alias.asname.name, m.Name(root.value)):
                        return True
        return False

    VALID = [
        Valid("import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"),
        Valid("import tensorflow.compat.v1 as tf\n\ntf.disable_v2_behavior()\nx = tf.placeholder(tf.float32)\n"),
        # Mixed TF 2 eager and TF 1 graph code is left for a human.
        Valid("import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\nwith tf.GradientTape() as tape:\n    pass\n"),
        Valid("import numpy as np\n\nx = np.zeros(3)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 3])\nsess = tf.Session()\n",
            "import tensorflow.compat.v1 as tf\n\nx = tf.placeholder(tf.float32, [None, 3])\nsess = tf.Session()\n",
        ),
        # tf_upgrade_v2 output: its tf.compat.v1.X become plain tf.X.
        Invalid(
            "import tensorflow as tf\n\nx = tf.compat.v1.placeholder(tf.float32)\nsess = tf.compat.v1.Session()\n",
            "import tensorflow.compat.v1 as tf\n\nx = tf.placeholder(tf.float32)\nsess = tf.Session()\n",
        ),
        Invalid(
            "import tensorflow as tf1\nfrom tensorflow import train\n\ntf1.enable_eager_execution()\n"
            "opt = train.AdamOptimizer(0.1)\ntf1.random.set_seed(0)\n",
            "import tensorflow.compat.v1 as tf1\nfrom tensorflow.compat.v1 import train\n\ntf1.enable_eager_execution()\n"
            "opt = train.AdamOptimizer(0.1)\ntf1.compat.v2.random.set_seed(0)\n",
        ),
        Invalid(
            "import tensorflow\n\nx = tensorflow.placeholder(tensorflow.float32)\n",
            "import tensorflow\n\nx = tensorflow.compat.v1.placeholder(tensorflow.compat.v1.float32)\n",
        ),
        Invalid(
            "from tensorflow.train import AdamOptimizer\nimport tensorflow.layers as layers\n\nopt = AdamOptimizer(0.1)\n",
            "from tensorflow.compat.v1.train import AdamOptimizer\nimport tensorflow.compat.v1.layers as layers\n\nopt = AdamOptimizer(0.1)\n",
        ),
        Invalid(
            "def build():\n    import tensorflow as tf\n    return tf.get_variable('w', [3])\n",
            "def build():\n    import tensorflow.compat.v1 as tf\n    return tf.get_variable('w', [3])\n",
        ),
    ]

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

from codemods._tfapi import V1_MODULES, V2_ONLY
from codemods._usage import TF, V1, has_prefix
from codemods.command import command_attribute
from codemods.nodes import ImportStmt, Reference
from codemods.rule import Invalid, Rule, Valid

# Where `from tensorflow.X import ...` is left: not part of the v1 API face.
NOT_API = ("contrib", "compat", "python", "examples", "core", "tools", "lite", "keras.src")


class CompatV1Imports(Rule):
    DESCRIPTION = "Import TensorFlow as tensorflow.compat.v1 in TF 1.x files, so every tf.X keeps its TF 1 meaning."
    RULE = "compat_v1_imports"

    def __init__(self, run):
        super().__init__(run)
        self._from_tensorflow: list = []

    # -- imports ---------------------------------------------------------------------------
    def visit_import(self, imp: ImportStmt) -> None:
        if imp.is_import:
            for alias in imp.aliases:
                self._import(imp, alias)
            return
        module = imp.module
        if module is None:
            return
        if module == TF:
            self._from_tensorflow.append(imp)  # decided once the other rules' rewrites are known
        elif module.startswith(TF + "."):
            rel = module[len(TF) + 1:]
            if rel.startswith("python"):
                self.note_human(imp.line, f"from {module} import …: private TensorFlow module, not a public "
                                          "API; check it still exists on TF 2.21")
            elif rel in V1_MODULES and not rel.startswith(NOT_API):
                self.note_change(imp.line, f"from {module} import … → from {V1}.{rel} import …")
                self.run.set_from_module(self, imp, f"{V1}.{rel}")

    def leave_references(self) -> None:
        """`from tensorflow import X, ...` → `from tensorflow.compat.v1 import ...` unless a name
        it keeps is not in the v1 API (a `contrib` another rule's rewrite leaves unused is gone)."""
        for imp in self._from_tensorflow:
            if not imp.star:
                names = [a.name for a in imp.aliases if not self.run.will_remove(a)]
                if not names:
                    continue
                if any(n.startswith(NOT_API) or has_prefix(n, V2_ONLY) for n in names):
                    self.note_human(imp.line, f"from tensorflow import {', '.join(names)}: mixes names "
                                              "tensorflow.compat.v1 lacks; split the import by hand")
                    continue
            self.note_change(imp.line, "from tensorflow import … → from tensorflow.compat.v1 import …")
            self.run.set_from_module(self, imp, V1)

    def _import(self, imp: ImportStmt, alias) -> None:
        dotted = alias.name
        if alias.asname is not None and dotted == TF:
            self.run.rename_alias(self, alias, V1)
            self.note_change(imp.line, f"import tensorflow as {alias.asname} → import tensorflow.compat.v1 as {alias.asname}")
            return
        rel = dotted[len(TF) + 1:] if dotted.startswith(TF + ".") else None
        if alias.asname is not None and rel and rel in V1_MODULES and not rel.startswith(NOT_API):
            self.run.rename_alias(self, alias, f"{V1}.{rel}")
            self.note_change(imp.line, f"import {dotted} → import {V1}.{rel}")
        elif rel and rel.startswith("python"):
            self.note_human(imp.line, f"import {dotted}: private TensorFlow module, not a public API; "
                                      "check it still exists on TF 2.21")

    # -- uses ----------------------------------------------------------------------------
    def visit_reference(self, ref: Reference) -> None:
        if not ref.parts or ref.qname != TF:
            return
        rel = ".".join(ref.parts)
        if ref.root == TF and not self._aliased(ref):
            # `import tensorflow`: uses move under tensorflow.compat.v1 one by one.
            if rel.startswith(("compat", "contrib", "examples", "python")) or has_prefix(rel, V2_ONLY):
                return
            self.note_change(ref.line, f"{ref.text} → {TF}.compat.v1.{rel}")
            self.run.replace(self, ref, len(ref.parts), f"{TF}.compat.v1.{rel}")
            return
        # `import tensorflow as tf`, now `tensorflow.compat.v1 as tf`.
        if rel == "compat.v1" or rel.startswith("compat.v1."):
            self.run.replace(self, ref, len(ref.parts), ".".join((ref.root, *ref.parts[2:])))
        elif has_prefix(rel, V2_ONLY):
            self.note_change(ref.line, f"{ref.text} exists only in TF 2: → {ref.root}.compat.v2.{rel}")
            self.run.replace(self, ref, len(ref.parts), f"{ref.root}.compat.v2.{rel}")

    def _aliased(self, ref: Reference) -> bool:
        """True when the root is bound by `import tensorflow as <root>` (rewritten), not `import tensorflow`."""
        return any(b.alias is not None and b.alias.stmt.is_import and b.alias.asname == ref.root
                   for b in ref.scope.lookup(ref.root, ref.scope))

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


__getattr__ = command_attribute(CompatV1Imports)  # CompatV1ImportsCommand, for python -m libcst.tool codemod

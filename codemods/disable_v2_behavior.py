"""Call `tf.disable_v2_behavior()` right after the TensorFlow imports of TF 1.x graph code.

tf_upgrade_v2 renames symbols to `tf.compat.v1` but never adds this call, so its placeholder
scripts crash on TF 2.21 ("tf.placeholder() is not compatible with eager execution"). The
call goes after the first group of TensorFlow imports (module level when there is one), before
any graph is built, through whichever name the file binds to `tensorflow.compat.v1`
(`tf.disable_v2_behavior()`) or to `tensorflow` (`tf.compat.v1.disable_v2_behavior()`).
Not added to TF 1 eager code (`tf.enable_eager_execution()`), nor twice.
"""
from __future__ import annotations

from codemods._base import TF_IMPORTING
from codemods._usage import TF, V1
from codemods.command import command_attribute
from codemods.layout import Layout
from codemods.rule import Invalid, Rule, Valid


class DisableV2Behavior(Rule):
    DESCRIPTION = "Add tf.disable_v2_behavior() after the TensorFlow imports of TF 1.x graph code."
    RULE = "disable_v2_behavior"

    def leave_module(self, layout: Layout) -> None:
        usage = layout.final_usage()  # judged on the output, as when each rule was its own pass
        if usage.verdict != "tf1" or usage.disables_v2:
            return
        # Module level first; else the first block (function, class, if ...) that imports TF,
        # innermost first (the order libcst leaves blocks in).
        if self._insert(layout, layout.body, top=True):
            return
        for _, entries, in_def in layout.blocks():
            if self._insert(layout, entries, top=not in_def):
                return

    def _insert(self, layout: Layout, entries: list, top: bool) -> bool:
        first = next((i for i, e in enumerate(entries) if e.import_line((TF,))), None)
        if first is None:
            return False
        end = first
        # The group runs on over imports of packages that import TensorFlow (tf_slim, tf1clip).
        while end + 1 < len(entries) and entries[end + 1].import_line(TF_IMPORTING):
            end += 1
        call, extra = self._call(entries[: end + 1])
        anchor = entries[end]
        for code in [*extra, call]:
            anchor = layout.insert_after(entries, anchor, code, self.RULE)
        line = entries[first].line
        where = "after the TensorFlow imports" if top else "inside the function that imports TensorFlow"
        self.note_change(line, f"added {call} {where}: TF 1 graph code needs v2 behaviour off on TF 2.21")
        if not top:
            self.note_human(line, "TensorFlow is imported inside a function only: make sure "
                                  f"{call} runs before any graph is built")
        return True

    @staticmethod
    def _call(entries: list) -> tuple:
        """The call through the best binding among `entries`' imports, and any import it needs first."""
        v1_alias = tf_alias = None
        bare_v1 = False
        for entry in entries:
            for dotted, name in entry.import_aliases():
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
        return "tensorflow.compat.v1.disable_v2_behavior()", [f"import {V1}"]

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


__getattr__ = command_attribute(DisableV2Behavior)  # DisableV2BehaviorCommand, for python -m libcst.tool codemod

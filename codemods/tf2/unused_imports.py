"""Imports of TF 1.x-only modules that the TF2 rewrite no longer uses are removed.

Only modules under `tensorflow.` other than `tensorflow` itself (contrib, examples.tutorials,
`tensorflow.contrib.slim as slim`) and `tf_slim`; an import still used stays.
"""
from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor

from libcst.metadata import MetadataWrapper

from codemods.tf2._base import Note, code

RULE = "unused_imports"
DESCRIPTION = "Remove imports of TF 1.x modules the rewrite left unused."

EXAMPLES = [
    ("import tensorflow as tf\nimport tensorflow.contrib.slim as slim\nx = tf.constant(1)\n",
     "import tensorflow as tf\nx = tf.constant(1)\n"),
    ("import tensorflow as tf\nimport tensorflow.contrib.slim as slim\nx = slim.l2_regularizer(1.0)\n",
     "import tensorflow as tf\nimport tensorflow.contrib.slim as slim\nx = slim.l2_regularizer(1.0)\n"),
]


def _tf1_module(name: str) -> bool:
    return name.startswith(("tensorflow.contrib", "tensorflow.examples", "tf_slim")) or name == "tf_slim"


def transform(module: cst.Module) -> tuple[cst.Module, list]:
    wrapper = MetadataWrapper(module)
    context = CodemodContext(wrapper=wrapper)
    candidates = []
    for st in wrapper.module.body:
        if not isinstance(st, cst.SimpleStatementLine):
            continue
        for small in st.body:
            if isinstance(small, cst.Import):
                for a in small.names:
                    mod = code(a.name)
                    if _tf1_module(mod):
                        asname = a.asname.name.value if a.asname else None
                        RemoveImportsVisitor.remove_unused_import(context, mod, asname=asname)
                        candidates.append(mod)
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not isinstance(small.names, cst.ImportStar):
                mod = code(small.module)
                if _tf1_module(mod):
                    for a in small.names:
                        RemoveImportsVisitor.remove_unused_import(
                            context, mod, code(a.name), a.asname.name.value if a.asname else None)
                        candidates.append(f"{mod}.{code(a.name)}")
    if not candidates:
        return module, []
    new = wrapper.visit(RemoveImportsVisitor(context))
    notes = []
    if new.code != wrapper.module.code:
        notes.append(Note(0, RULE, "change", "imports of TF 1.x modules left unused by the rewrite removed"))
    return new, notes

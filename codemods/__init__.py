"""The compat tier's rules, one transformation per module, and the engine that runs them.

Pure text in, text out: nothing here imports TensorFlow (tests/test_migrate_startup.py checks).
Each rule carries its own before/after examples (VALID / INVALID), and each also runs on its
own as a libcst codemod command:

    python -m libcst.tool codemod compat_v1_imports.CompatV1ImportsCommand path/

`COMPAT_RULES` is the compat tier (`tf1clip migrate --to compat`), in report order; the engine
(`codemods.engine.apply`) runs them all in one pass over one parse of a file; a `Note` is one
line of its report. The `tf2` package is the TF2 tier.
"""
from codemods._base import Note
from codemods.compat_v1_imports import CompatV1Imports
from codemods.contrib_slim import ContribSlim
from codemods.contrib_symbols import ContribSymbols
from codemods.disable_v2_behavior import DisableV2Behavior
from codemods.legacy_keras import LegacyKeras
from codemods.mnist_input_data import MnistInputData

COMPAT_RULES = (
    MnistInputData,
    ContribSlim,
    ContribSymbols,
    CompatV1Imports,
    DisableV2Behavior,
    LegacyKeras,
)
__all__ = [cls.__name__ for cls in COMPAT_RULES] + ["COMPAT_RULES", "Note"]

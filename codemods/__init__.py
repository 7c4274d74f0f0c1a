"""libcst codemods that move TF 1.x code to TF 2.21, one transformation per module.

Pure text in, text out: nothing here imports TensorFlow (tests/test_migrate_startup.py checks).
Each command carries its own before/after examples (VALID / INVALID) and runs standalone:

    python -m libcst.tool codemod compat_v1_imports.CompatV1ImportsCommand path/

`COMPAT_TIER` is the order `tf1clip migrate --to compat` applies them in: contrib, estimator
and example imports first (they may add `import tensorflow.compat.v1`), then the import
rewrite, then the two insertions that anchor on the final imports. `numpy2` (NumPy 2
spellings) is last; it is the one rule that also runs on files that are not TF 1.x code
(`NUMPY_ONLY`).
"""
from codemods.compat_v1_imports import CompatV1ImportsCommand
from codemods.contrib_slim import ContribSlimCommand
from codemods.contrib_symbols import ContribSymbolsCommand
from codemods.disable_v2_behavior import DisableV2BehaviorCommand
from codemods.estimator import EstimatorCommand
from codemods.legacy_keras import LegacyKerasCommand
from codemods.mnist_input_data import MnistInputDataCommand
from codemods.numpy2 import Numpy2Command
from codemods.soft_placement import SoftPlacementCommand

COMPAT_TIER = (
    MnistInputDataCommand,
    ContribSlimCommand,
    ContribSymbolsCommand,
    EstimatorCommand,
    CompatV1ImportsCommand,
    DisableV2BehaviorCommand,
    LegacyKerasCommand,
    SoftPlacementCommand,
    Numpy2Command,
)
# What a file that is not TF 1.x code (no TensorFlow, TF 2 code, ...) still gets.
NUMPY_ONLY = (Numpy2Command,)

__all__ = [cls.__name__ for cls in COMPAT_TIER] + ["COMPAT_TIER", "NUMPY_ONLY"]

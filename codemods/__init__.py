"""The compat tier's rules, one transformation per module, and the engine that runs them.

Pure text in, text out: nothing here imports TensorFlow (tests/test_migrate_startup.py checks).
Each rule carries its own before/after examples (VALID / INVALID), and each also runs on its
own as a libcst codemod command:

    python -m libcst.tool codemod compat_v1_imports.CompatV1ImportsCommand path/

`COMPAT_RULES` is the compat tier (`tf1clip migrate --to compat`), in report order: contrib,
estimator and example imports first, then the import rewrite, the two insertions that anchor
on the final imports, soft placement, a script's flags over absl.logging's, TF 1.x dataset attributes through `tf.data` functions,
Keras 2's spellings that Keras 3 rejects (`keras2`, in files that are not TF 1.x graph code),
and the rules that also run on files that are not TF 1.x code (`ANY_FILE`): `keras2`, `numpy2`
(NumPy 2 spellings), `numpy_ragged` (NumPy 1.x's object array of a ragged sequence) and
`numpy_promotion` (NumPy 1.x's int64 for `np.max(uint8_labels) + 1`). The engine (`codemods.engine.apply`)
runs them all in one pass over one parse of a file; a `Note` is one line of its report. The
`tf2` package is the TF2 tier.
"""
from codemods._base import Note
from codemods.absl_flags import AbslFlags
from codemods.compat_v1_imports import CompatV1Imports
from codemods.contrib_slim import ContribSlim
from codemods.contrib_symbols import ContribSymbols
from codemods.dataset_v1 import DatasetV1
from codemods.disable_v2_behavior import DisableV2Behavior
from codemods.estimator import Estimator
from codemods.keras2 import Keras2
from codemods.legacy_keras import LegacyKeras
from codemods.mnist_input_data import MnistInputData
from codemods.numpy2 import Numpy2
from codemods.numpy_promotion import NumpyPromotion
from codemods.numpy_ragged import NumpyRagged
from codemods.soft_placement import SoftPlacement

COMPAT_RULES = (
    MnistInputData,
    ContribSlim,
    ContribSymbols,
    Estimator,
    CompatV1Imports,
    DisableV2Behavior,
    LegacyKeras,
    SoftPlacement,
    AbslFlags,
    DatasetV1,
    Keras2,
    Numpy2,
    NumpyRagged,
    NumpyPromotion,
)
# The NumPy rules (a file that is not TF 1.x code gets these and `keras2`: every rule with ANY_FILE).
NUMPY_ONLY = (Numpy2, NumpyRagged, NumpyPromotion)
ANY_FILE = tuple(rule for rule in COMPAT_RULES if rule.ANY_FILE)

__all__ = [cls.__name__ for cls in COMPAT_RULES] + ["ANY_FILE", "COMPAT_RULES", "NUMPY_ONLY", "Note"]

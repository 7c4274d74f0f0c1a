"""tf.contrib.learn, the parts TF 1.x training scripts used around their own models.

- `ModeKeys` (TRAIN 'train', EVAL 'eval', INFER 'infer': contrib.learn's strings);
- `preprocessing`: `VocabularyProcessor`, `CategoricalVocabulary`, `ByteProcessor`, `tokenizer`
  (TF 1.15's text preprocessing, same ids, same pickle-based save/restore);
- `datasets.mnist.read_data_sets` (tf1clip's local-files MNIST reader) and
  `datasets.base.maybe_download` (the file if it is there; tf1clip never downloads), also under
  `python.learn.datasets`.
contrib.learn's Estimator API is gone: the refusal names tf.estimator (tf1clip.estimator).
"""
import importlib
import types

from tf1clip.contrib import forward


class ModeKeys:
    TRAIN = "train"
    EVAL = "eval"
    INFER = "infer"


_SUBMODULES = ("preprocessing", "datasets")
_forward = forward(__name__, "tf.contrib.learn")  # hints: tf1clip.contrib.hints


def __getattr__(name):
    if name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    elif name == "python":  # tf.contrib.learn.python.learn.{datasets,preprocessing}
        learn = types.SimpleNamespace(datasets=importlib.import_module(f"{__name__}.datasets"),
                                      preprocessing=importlib.import_module(f"{__name__}.preprocessing"))
        value = types.SimpleNamespace(learn=learn)
    else:
        return _forward(name)
    globals()[name] = value
    return value

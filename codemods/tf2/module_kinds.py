"""What an import names, read with `ast`: TensorFlow, a package that never imports it (host code), or a
module of the user's; and the shapes of top-level statements that importing a module runs or skips."""
from __future__ import annotations

import ast
import sys
from typing import Optional

TF_ROOTS = frozenset({"tensorflow", "tf_slim"})
PY2_STDLIB = frozenset({"cPickle", "cStringIO", "urllib2", "urlparse", "Queue", "ConfigParser", "StringIO",
                        "HTMLParser", "httplib", "cookielib", "commands", "itertools"})
# packages that never import TensorFlow (a call of theirs cannot make graph state)
HOST_PACKAGES = frozenset({
    "numpy", "scipy", "matplotlib", "pandas", "sklearn", "PIL", "cv2", "skimage", "h5py", "tqdm", "six",
    "nltk", "gensim", "imageio", "yaml", "requests", "gym", "seaborn", "IPython", "absl", "future", "past",
    "jieba", "konlpy", "spacy", "bs4", "lxml", "tabulate", "termcolor", "colorama", "easydict", "munch",
    "pylab", "sympy", "networkx", "librosa", "soundfile", "unidecode", "regex", "msgpack", "joblib",
    "psutil", "click", "fire", "docopt", "pygame", "atari_py", "cloudpickle", "dill", "smart_open", "xlrd",
    "openpyxl", "progressbar", "simplejson", "ujson", "pydub", "tensorboard_logger",
})


def host_package(top: str) -> bool:
    """A top-level package whose code cannot make TensorFlow graph state: Python's own, or a known package."""
    return top in sys.stdlib_module_names or top in PY2_STDLIB or top in HOST_PACKAGES


def absolute(module: Optional[str], level: int, package: str) -> str:
    """The absolute module a `from` import names (`from ..m import x` in the package `a.b.c`: `a.b.m`)."""
    if not level:
        return module or ""
    parts = package.split(".") if package else []
    parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
    return ".".join(p for p in (*parts, module) if p)


def import_targets(node, package: str) -> list:
    """[(bound name, absolute dotted target)] of an import statement (`*` as the name of a star import)."""
    if isinstance(node, ast.Import):
        return [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0]) for a in node.names]
    base = absolute(node.module, node.level, package)
    return [(a.asname or a.name if a.name != "*" else "*", f"{base}.{a.name}" if a.name != "*" else base)
            for a in node.names]


def main_guard(st) -> bool:
    """`if __name__ == "__main__":`, whose body importing the module does not run."""
    test = st.test if isinstance(st, ast.If) else None
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__" and \
        len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant) and \
        test.comparators[0].value == "__main__"

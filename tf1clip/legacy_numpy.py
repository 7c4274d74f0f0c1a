"""NumPy as TF 1.x scripts knew it, for the user's own files under `tf1clip run`.

`tf1clip run` hands `import numpy` in the user's files (not in libraries) a view of the real
module: every attribute is numpy's own object, except the names NumPy 2 removed
(`tf1clip.numpy_removed`), which mean what NumPy 1.x meant (`np.float` is `float`,
`np.asscalar(a)` is `a.item()`, `np.reshape(a, newshape=s)` reshapes, ...), and the functions
that make an array of their argument (`np.array`, `np.nan_to_num`, `np.stack`, ...:
`RAGGED_MAKERS`), which give NumPy 1.x's object array of a ragged nested sequence where NumPy 2
raises. TensorFlow, pandas
and every other library keep seeing the real, unchanged module, and so does
`sys.modules["numpy"]`; submodules (`numpy.random`, `numpy.linalg`) are the real ones.
"""
from __future__ import annotations

import functools
import os
import sys
import types

import numpy as _np

from tf1clip.numpy_removed import ALIASES, CALLS, RAGGED_HELPER as HELPER, RAGGED_HELPER_LINES, RAGGED_MAKERS


def _asscalar(a):
    """NumPy 1.16: `a.item()`."""
    return a.item()


def _msort(a):
    return _np.sort(a, axis=0)


def _in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    return _np.isin(ar1, ar2, assume_unique=assume_unique, invert=invert, kind=kind).ravel()


def _asfarray(a, dtype=_np.float64):
    """NumPy 1.x: a float64 array unless an inexact dtype is asked for."""
    if not _np.issubdtype(dtype, _np.inexact):
        dtype = _np.float64
    return _np.asarray(a, dtype=dtype)


def _fromstring(string, dtype=float, count=-1, sep="", **kwargs):
    """Binary mode (no `sep`) as NumPy 1.x: a new, writable array of the bytes."""
    if sep == "":
        if isinstance(string, str):
            string = string.encode("latin-1")
        return _np.frombuffer(string, dtype=dtype, count=count).copy()
    return _np.fromstring(string, dtype=dtype, count=count, sep=sep, **kwargs)


def _reshape(*args, **kwargs):
    """`newshape=` (and `a=`) as keywords, as NumPy 1.x took them."""
    if "newshape" in kwargs:
        kwargs["shape"] = kwargs.pop("newshape")
    if "a" in kwargs:
        args = (kwargs.pop("a"), *args)
    return _np.reshape(*args, **kwargs)


def _ragged_helper():
    """The function `codemods/numpy_ragged.py` writes into migrated files, run here as it is
    written there (it imports the real numpy: this module is not the user's)."""
    scope: dict = {"__name__": __name__}
    code = compile("\n".join(RAGGED_HELPER_LINES), f"<{HELPER}: tf1clip migrate writes it>", "exec")
    exec(code, scope)  # noqa: S102 - our own table's function
    return scope[HELPER]


def _ragged_to_object(original, helper):
    """NumPy < 1.24 made an object array of a ragged nested sequence (1.20-1.23 with a warning)
    wherever a function made an array of its argument; NumPy 2 raises. `helper` (RAGGED_HELPER's
    function, the one the migration writes) gives NumPy 1.x's array; the first time a line of
    the user's needs it, stderr names the line. No codemod can see that a value is ragged, and
    `dtype=object` on regular data would change its dtype: regular data gets NumPy's own array."""
    noted: set = set()

    @functools.wraps(original)
    def make(obj, *args, **kwargs):
        try:
            return original(obj, *args, **kwargs)
        except ValueError as exc:
            if "inhomogeneous" not in str(exc) or not isinstance(obj, (list, tuple)):
                raise
        result = helper(original, obj, *args, **kwargs)
        _note_ragged(original.__name__, sys._getframe(1), noted)
        return result

    return make


def _note_ragged(name: str, frame, noted: set) -> None:
    where = (frame.f_code.co_filename, frame.f_lineno)
    if where in noted:
        return
    noted.add(where)
    path = os.path.relpath(where[0]) if where[0].startswith(os.getcwd() + os.sep) else where[0]
    print(f"tf1clip: {path}:{where[1]}: np.{name} of a ragged sequence made an object array, as NumPy 1.x "
          f"did; NumPy 2 raises there: tf1clip migrate keeps the object array ({HELPER}), code migrated "
          "otherwise needs dtype=object", file=sys.stderr)


_CALLS = {"asscalar": _asscalar, "msort": _msort, "in1d": _in1d, "asfarray": _asfarray,
          "fromstring": _fromstring}
assert set(_CALLS) == set(CALLS), "every CALLS row has its NumPy 1.x function here"


def _legacy_values() -> dict:
    values = {name: eval(row.spelling, {"np": _np}) for name, row in ALIASES.items()}  # noqa: S307 - our table
    values.update(_CALLS)
    values["reshape"] = _reshape
    helper = _ragged_helper()
    for name in RAGGED_MAKERS:
        values[name] = _ragged_to_object(getattr(_np, name), helper)
    return values


class LegacyNumpy(types.ModuleType):
    """A module that answers from real numpy, after the legacy names given to it."""

    def __init__(self, legacy: dict):
        super().__init__("numpy", _np.__doc__)
        self.__dict__.update({k: getattr(_np, k) for k in ("__file__", "__path__", "__spec__", "__version__")
                              if hasattr(_np, k)})
        self.__dict__.update(legacy)

    def __getattr__(self, name):
        value = getattr(_np, name)
        if not name.startswith("__"):
            self.__dict__[name] = value  # next time a plain lookup
        return value

    def __dir__(self):
        return sorted(set(dir(_np)) | set(self.__dict__))

    def __repr__(self):
        return f"<module 'numpy' (NumPy {_np.__version__} with the NumPy 1.x names, tf1clip)>"


def numpy_view() -> LegacyNumpy:
    """A fresh view of numpy with the NumPy 1.x names (one per `tf1clip run`)."""
    return LegacyNumpy(_legacy_values())

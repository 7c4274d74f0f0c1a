"""What NumPy 2 removed that legacy scripts use, as data: the NumPy 1.x meaning and the NumPy 2 spelling.

TensorFlow 2.21 runs on NumPy 2.x; TF 1.x scripts were written against the NumPy of their
time (1.13-1.19, where `np.float` was the builtin `float`). One row per removed name, used by
both rooms and importing nothing (no NumPy, no TensorFlow):

- the runtime (`tf1clip.legacy_numpy`) gives the user's own files under `tf1clip run` a NumPy
  in which each row's name means what NumPy 1.x meant;
- the codemod (`codemods/numpy2.py`) rewrites each use to its NumPy 2 spelling.

`spelling` is an expression over `np` (the alias the file uses). An `ALIASES` row replaces the
attribute wherever it appears; a `CALLS` row has a meaning only as a call (its arguments move),
so only calls of the shape `template` describes are rewritten, `{0}` being the first argument
and `{rest}` the other arguments as written. `tests/test_numpy2.py` proves every row under
NumPy 2: the spelling evaluates, and gives the NumPy 1.x value and dtype that `numpy1` states.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Removed:
    spelling: str    # the NumPy 2 expression (ALIASES) or call template (CALLS)
    numpy1: str      # what the name was in NumPy 1.x, for the docs and the report
    removed: str     # the NumPy release that removed it


_BUILTIN = "NumPy <1.20: numpy's name for the builtin {0} (dtype={0} is the same dtype)"
_NEP52 = "2.0 (NEP 52)"

# np.NAME -> its NumPy 2 spelling, the same object or value as NumPy 1.x gave.
ALIASES: dict[str, Removed] = {
    # The builtin aliases (deprecated 1.20, removed 1.24). np.bool and np.long came back in
    # NumPy 2 as numpy.bool_ and the C long type: the builtin keeps the legacy meaning
    # (np.bool(1) is True, not np.True_; np.long(2**70) does not overflow).
    "float": Removed("float", _BUILTIN.format("float"), "1.24"),
    "int": Removed("int", _BUILTIN.format("int"), "1.24"),
    "bool": Removed("bool", _BUILTIN.format("bool"), "1.24 (NumPy 2: numpy.bool_)"),
    "object": Removed("object", _BUILTIN.format("object"), "1.24"),
    "str": Removed("str", _BUILTIN.format("str"), "1.24"),
    "complex": Removed("complex", _BUILTIN.format("complex"), "1.24"),
    "long": Removed("int", "NumPy <1.20 on Python 3: the builtin int", "1.24 (NumPy 2: the C long type)"),
    "unicode": Removed("str", "NumPy <1.20 on Python 3: the builtin str", "1.24"),
    # Scalar type aliases.
    "float_": Removed("np.float64", "numpy.float64", _NEP52),
    "complex_": Removed("np.complex128", "numpy.complex128", _NEP52),
    "cfloat": Removed("np.complex128", "numpy.complex128", _NEP52),
    "singlecomplex": Removed("np.complex64", "numpy.complex64", _NEP52),
    "longfloat": Removed("np.longdouble", "numpy.longdouble", _NEP52),
    "clongfloat": Removed("np.clongdouble", "numpy.clongdouble", _NEP52),
    "longcomplex": Removed("np.clongdouble", "numpy.clongdouble", _NEP52),
    "unicode_": Removed("np.str_", "numpy.str_", _NEP52),
    "string_": Removed("np.bytes_", "numpy.bytes_", _NEP52),
    "int0": Removed("np.intp", "numpy.intp", "1.24"),
    "uint0": Removed("np.uintp", "numpy.uintp", "1.24"),
    "bool8": Removed("np.bool_", "numpy.bool_", "1.24"),
    "object0": Removed("np.object_", "numpy.object_", "1.24"),
    "str0": Removed("np.str_", "numpy.str_", "1.24"),
    "bytes0": Removed("np.bytes_", "numpy.bytes_", "1.24"),
    "void0": Removed("np.void", "numpy.void", "1.24"),
    # Constants.
    "Inf": Removed("np.inf", "float('inf')", _NEP52),
    "Infinity": Removed("np.inf", "float('inf')", _NEP52),
    "infty": Removed("np.inf", "float('inf')", _NEP52),
    "PINF": Removed("np.inf", "float('inf')", _NEP52),
    "NINF": Removed("-np.inf", "float('-inf')", _NEP52),
    "NaN": Removed("np.nan", "float('nan')", _NEP52),
    "PZERO": Removed("0.0", "0.0", _NEP52),
    "NZERO": Removed("-0.0", "-0.0", _NEP52),
    # Functions that were other names of a function NumPy 2 still has (same signature).
    "rank": Removed("np.ndim", "numpy.ndim's older name (removed 1.18)", "1.18"),
    "product": Removed("np.prod", "numpy.prod", _NEP52),
    "cumproduct": Removed("np.cumprod", "numpy.cumprod", _NEP52),
    "sometrue": Removed("np.any", "numpy.any", _NEP52),
    "alltrue": Removed("np.all", "numpy.all", _NEP52),
    "round_": Removed("np.round", "numpy.round (around)", _NEP52),
    "mat": Removed("np.asmatrix", "numpy.asmatrix", _NEP52),
    "trapz": Removed("np.trapezoid", "numpy.trapezoid's older name", "2.x (deprecated 2.0; gone by 2.4)"),
    "row_stack": Removed("np.vstack", "numpy.vstack (deprecated 2.0)", "deprecated 2.0"),
    # Moved to a submodule.
    "byte_bounds": Removed("np.lib.array_utils.byte_bounds", "numpy.lib.array_utils.byte_bounds", _NEP52),
    "format_parser": Removed("np.rec.format_parser", "numpy.rec.format_parser", _NEP52),
    "DataSource": Removed("np.lib.npyio.DataSource", "numpy.lib.npyio.DataSource", _NEP52),
    "compare_chararrays": Removed("np.char.compare_chararrays", "numpy.char.compare_chararrays", _NEP52),
}

# np.NAME(...) whose NumPy 2 spelling moves the arguments.
CALLS: dict[str, Removed] = {
    "asscalar": Removed("{0}.item()", "a.item() (NumPy 1.16 source)", "1.23"),
    "msort": Removed("np.sort({0}, axis=0)", "numpy.sort(a, axis=0)", _NEP52),
    # in1d flattened its first argument; isin keeps its shape.
    "in1d": Removed("np.isin({0}{rest}).ravel()", "numpy.isin(...).ravel(): a flat boolean array",
                    "2.x (deprecated 2.0; gone by 2.4)"),
    # asfarray's default dtype was float64 (an inexact dtype given was kept).
    "asfarray": Removed("np.asarray({0}, dtype=np.float64)", "numpy.asarray(a, dtype=numpy.float64)", _NEP52),
    # fromstring's binary mode (no sep) returned a new, writable array.
    "fromstring": Removed("np.frombuffer({0}{rest}).copy()", "a copy of numpy.frombuffer(string, dtype, count)",
                          "2.x (binary mode, deprecated 1.14; gone by 2.4)"),
}

# Removed names with no mechanical NumPy 2 spelling: reported for a human with NumPy's advice.
BY_HAND: dict[str, str] = {
    "cast": "np.cast[T](x) is np.asarray(x).astype(T)",
    "find_common_type": "use np.result_type or np.promote_types",
    "issubclass_": "use issubclass (np.issubclass_ returned False on a TypeError)",
    "issctype": "use issubclass(rep, np.generic)",
    "obj2sctype": "use np.dtype(obj).type",
    "sctype2char": "use np.dtype(obj).char",
    "maximum_sctype": "name the dtype you need",
    "sctypes": "name the dtypes you need",
    "issubsctype": "use np.issubdtype",
    "set_string_function": "use np.set_printoptions with a formatter",
    "safe_eval": "use ast.literal_eval",
    "source": "use inspect.getsource",
    "lookfor": "search NumPy's documentation",
    "who": "use locals() or an IDE's variable explorer",
    "deprecate": "use warnings.warn(..., DeprecationWarning)",
    "deprecate_with_doc": "use warnings.warn(..., DeprecationWarning)",
    "disp": "use print",
    "recfromcsv": "use np.genfromtxt(..., delimiter=',', names=True, dtype=None)",
    "recfromtxt": "use np.genfromtxt(..., dtype=None)",
    "geterrobj": "use np.errstate",
    "seterrobj": "use np.errstate",
    "add_newdoc_ufunc": "set the ufunc's __doc__",
    "fastCopyAndTranspose": "use arr.T.copy()",
    "loads": "use pickle.loads",
}

# np.reshape(a, newshape=...): the keyword was renamed `shape` (2.1) and the old name removed.
RESHAPE_KEYWORD = ("reshape", "newshape")
# A ragged nested sequence given to a function that makes an array of its argument: NumPy < 1.24
# made an object array of it, NumPy 2 raises. The runtime keeps the object array; the codemod
# writes RAGGED_HELPER_LINES into the file, and the runtime runs the same function
# (tf1clip.legacy_numpy), so a script and its migration make the same arrays.
RAGGED_HELPER = "_object_if_ragged"
# The functions that join a sequence of arrays made an array of each item (np.stack([a, b])).
RAGGED_JOINERS = ("concatenate", "stack", "vstack", "hstack", "dstack", "column_stack")
# The functions whose first argument is made an array, and whose NumPy 1.x result on an object
# array is the same objects converted, counted, rearranged or joined (np.mean: summed and
# divided, which lists of equal-length rows and arrays that broadcast survive). Reductions that
# compute on the elements (sum, max, argmax, std, ...) are left out: on an object array of Python
# sequences NumPy 1.x added lists (concatenation) or raised TypeError.
# np.ndim is left out too (numpy2 writes it for np.rank, and a second pass must not change the file).
RAGGED_MAKERS = ("array", "asarray", "asanyarray", "ascontiguousarray", "copy", "nan_to_num", "shape", "size", "squeeze", "ravel", "expand_dims", "transpose", "take", "repeat", "tile",
                 "append", "mean", "average") + RAGGED_JOINERS
RAGGED_HELPER_LINES = (
    f"def {RAGGED_HELPER}(make, obj, *args, **kwargs):",
    '    """make(obj, ...) as NumPy < 1.24 ran it: where NumPy 2 raises on a ragged nested sequence,',
    "    NumPy 1.x made an object array of it (of each of its items, for the functions that join",
    '    arrays). Written by tf1clip migrate (rule numpy_ragged)."""',
    "    try:",
    "        return make(obj, *args, **kwargs)",
    "    except ValueError as error:",
    '        if "inhomogeneous" not in str(error) or not isinstance(obj, (list, tuple)):',
    "            raise",
    "    import numpy",
    "",
    f"    if getattr(make, \"__name__\", None) not in ({', '.join(f'{n!r}' for n in RAGGED_JOINERS)}):".replace("'", '"'),
    "        return make(numpy.array(obj, dtype=object), *args, **kwargs)",
    "    items = []",
    "    for item in obj:",
    "        try:",
    "            numpy.array(item)",
    "        except ValueError as error:",
    '            if "inhomogeneous" not in str(error) or not isinstance(item, (list, tuple)):',
    "                raise",
    "            item = numpy.array(item, dtype=object)",
    "        items.append(item)",
    "    return make(items, *args, **kwargs)",
)


def render_markdown() -> str:
    """The table docs/runtime.md shows (tests/test_numpy2.py checks the docs carry it)."""
    lines = ["| name | NumPy 1.x meaning (what `tf1clip run` gives the user's files) | NumPy 2 spelling "
             "(`tf1clip migrate`) | gone since |", "|---|---|---|---|"]
    for name, row in ALIASES.items():
        lines.append(f"| `np.{name}` | {row.numpy1} | `{row.spelling}` | {row.removed} |")
    for name, row in CALLS.items():
        call = row.spelling.replace("{0}", "a").replace("{rest}", ", ...")
        lines.append(f"| `np.{name}(a, ...)` | {row.numpy1} | `{call}` (calls of this form) | {row.removed} |")
    lines.append(f"| `np.{RESHAPE_KEYWORD[0]}(a, {RESHAPE_KEYWORD[1]}=s)` | the keyword taken | "
                 "`np.reshape(a, s)` | 2.x (renamed `shape` in 2.1; gone by 2.4) |")
    return "\n".join(lines)


# NEP 50 (NumPy 2.0): a NumPy scalar combined with a Python int keeps the scalar's type
# (`np.max(uint8_labels) + 1` is uint8, and TensorFlow refuses it as a shape); NumPy 1.x made it
# int64. The codemod wraps the reductions that return a scalar of their input's type, where a
# Python int literal meets them, in this function; the runtime hands TensorFlow such a value as
# int64 (tf1clip.numpy_shapes), which is where NumPy 2's uint8 changes a TF 1.x script's meaning.
PROMOTION_HELPER = "_int64_if_narrow"
PROMOTION_REDUCTIONS = ("max", "min", "amax", "amin", "ptp")
PROMOTION_HELPER_LINES = (
    f"def {PROMOTION_HELPER}(value):",
    '    """value as NumPy 1.x added a Python int to it: a NumPy integer scalar narrower than int64 made',
    "    int64 (NumPy 2 keeps its type: NEP 50), anything else as it is. Written by tf1clip migrate",
    '    (rule numpy_promotion)."""',
    "    import numpy",
    "",
    "    if isinstance(value, (numpy.int8, numpy.uint8, numpy.int16, numpy.uint16, numpy.int32, numpy.uint32)):",
    "        return numpy.int64(value)",
    "    return value",
)

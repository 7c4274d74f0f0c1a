"""What each variable's start value was drawn from: its initializer, resolved to a distribution.

A TF 1.x graph and its TF 2 translation draw their initial values from different random
streams (op-count seeds against Keras seed generators), so their start values never agree
number for number even when the initializers are the same. What can agree exactly is the
distribution each value was drawn from. Hooks tag every tensor that a random op or an
initializer returns with a *draw*:

    {"kind": "normal" | "truncated_normal" | "uniform" | "orthogonal",
     "shape": [...], "dtype": "float32", <parameters>, "from": "<initializer>" (shown, not compared)}

with the parameters resolved to numbers: `mean`/`stddev` (normal, truncated normal: TF
truncates at two standard deviations everywhere), `minval`/`maxval` (uniform), `gain`
(orthogonal). An initializer is resolved as far as the op it calls: TF 1.x's
`glorot_uniform_initializer()` on [3, 4] (VarianceScaling(scale=1, mode="fan_avg",
distribution="uniform")) draws `uniform(minval=-sqrt(6/7), maxval=sqrt(6/7))`, which is the
same draw as Keras 3's GlorotUniform there and as `tf.random.uniform([3, 4], -sqrt(6/7),
sqrt(6/7))`; `VarianceScaling(distribution="normal")` is a truncated normal with stddev
sqrt(scale / fan) / 0.8796 in TF 1.x's init_ops and in Keras alike. A fan mode is therefore
compared through the limits it gives: fan_in and fan_avg on a square kernel draw the same.

Hooked (every public name they are reachable by, in every TensorFlow / Keras module loaded,
and anything imported later): `random_ops.random_normal` / `truncated_normal` /
`random_uniform` (tf.random.*, tf.compat.v1.random_normal, ...), their stateless versions
(Keras 3's random, tf-keras with a seed), `tf.random.Generator.normal` / `truncated_normal` /
`uniform`, and the `__call__` of the random initializers of TF 1.x (`init_ops`), TF 2
(`init_ops_v2`), Keras 3 and tf-keras (which name the draw; orthogonal ones are only known
there). A variable's draw is the tag of its initial value as given (a tensor, or what the
callable that `tf.get_variable`, Keras and tf-keras pass returns): anything computed from a
draw (`tf.random.normal(s) * 0.1`, a cast, a NumPy array, a constant) has no draw, "not known".
No graph op is added, and no random op draws anything it would not have drawn.
"""
from __future__ import annotations

import functools
import inspect
import math
import sys
import types
import weakref

from tf1clip.parity.post_import import after_import

_RAW = {  # module path -> {function name: kind}
    "tensorflow.python.ops.random_ops": {"random_normal": "normal", "truncated_normal": "truncated_normal",
                                         "random_uniform": "uniform"},
    "tensorflow.python.ops.stateless_random_ops": {"stateless_random_normal": "normal",
                                                   "stateless_truncated_normal": "truncated_normal",
                                                   "stateless_random_uniform": "uniform"},
}
_GENERATOR = {"normal": "normal", "truncated_normal": "truncated_normal", "uniform": "uniform"}
_PARAMS = {"normal": ("mean", "stddev"), "truncated_normal": ("mean", "stddev"), "uniform": ("minval", "maxval")}
_INITIALIZER_MODULES = ("tensorflow.python.ops.init_ops", "tensorflow.python.ops.init_ops_v2",
                        "keras.src.initializers.random_initializers", "tf_keras.src.initializers.initializers")
_INITIALIZERS = ("RandomUniform", "RandomNormal", "TruncatedNormal", "UniformUnitScaling", "VarianceScaling",
                 "Orthogonal")
_SHOWN = ("scale", "mode", "distribution", "mean", "stddev", "minval", "maxval", "gain")
_PATCHED = ("tensorflow", "keras", "tf_keras", "tf1clip")  # the modules whose names are rebound
RTOL = 1e-6  # float32 keeps ~7 digits: sqrt(6/7) computed in float64 and cast to float32 stays equal


class Draws:
    """The draws tagged in this process, and the variables' draws.

    `mine` maps each key this side recorded a start value for to that variable's draw (written
    into initial.npz); on NEW, `old` is OLD's, read back from there, and `entries` says, per
    matched variable under --no-transfer, both draws and whether OLD's value was loaded (`judge`)."""

    def __init__(self):
        self._tags = {}  # id(tensor) -> (weak reference, draw)
        self._by_var = {}  # id(variable) -> (variable, draw): eager variables, seen by the creator
        self.mine = {}  # key -> draw of this side's recorded start values
        self.old = {}
        self.entries = []

    # ---- tagging ------------------------------------------------------------------------------
    def tag(self, tensor, draw) -> None:
        if draw is None:
            return
        key = id(tensor)
        try:
            ref = weakref.ref(tensor, lambda r, key=key: self._forget(key, r))
        except TypeError:
            return
        self._tags[key] = (ref, draw)

    def _forget(self, key, ref) -> None:
        entry = self._tags.get(key)
        if entry is not None and entry[0] is ref:
            del self._tags[key]

    def of_value(self, value):
        entry = self._tags.get(id(value))
        if entry is None or entry[0]() is not value:
            return None
        draw = entry[1]
        if callable(draw):  # a random op's call, resolved when first asked (most never are)
            draw = draw()
            self._tags[id(value)] = (entry[0], draw)
        return draw

    # ---- variables ----------------------------------------------------------------------------
    def watch(self, kwargs):
        """variable_creator_scope: (kwargs to create with, holder of the draw). A plain callable
        initial value (tf.get_variable's, Keras') is wrapped to see what it returns."""
        holder = []
        value = kwargs.get("initial_value")
        if isinstance(value, (types.FunctionType, types.MethodType, functools.partial)):
            def initial_value(*args, **kw):
                result = value(*args, **kw)
                holder.append(self.of_value(result))
                return result
            kwargs = dict(kwargs, initial_value=initial_value)
        else:
            holder.append(self.of_value(value))
        return kwargs, holder

    def remember(self, var, holder) -> None:
        draw = holder[0] if holder else None
        if draw is not None:
            self._by_var[_identity(var)] = (var, draw)

    def of_variable(self, var):
        """The draw `var`'s start value came from, or None (not known)."""
        entry = self._by_var.get(_identity(var))
        if entry is not None:
            return entry[1]
        try:  # graph mode: the variable keeps its initial value tensor
            return self.of_value(var.initial_value)
        except Exception:  # noqa: BLE001 - eager variables keep none
            return None

    def note_start(self, keyed, members, values) -> None:
        """Into `members` (the start values' metadata, by key): the draw of each start value in
        `values` that is a plausible sample of it (one restored from a checkpoint, or assigned
        pretrained weights, is not: it keeps no draw). The graph recorder noted its variables'
        draws at the first step; eager ones are noted here."""
        for key, var in keyed:
            self.mine.setdefault(key, self.of_variable(var))
        for key, draw in self.mine.items():
            if draw is not None and key in values and plausible(values[key], draw):
                members.setdefault(key, {})["draw"] = draw

    def judge(self, key, var, name) -> bool:
        """NEW, --no-transfer: is `var` drawn as OLD's `key` was (then OLD's draw is loaded)?"""
        old, new = self.old.get(key), self.of_variable(var)
        same = old is not None and new is not None and same_draw(old, new)
        self.entries.append({"key": key, "name": name, "old": old, "new": new, "loaded": same})
        return same

    def pair(self, key, var) -> dict:
        """Both draws of a matched variable, for the start-value check of the default mode."""
        return {"old_draw": self.old.get(key), "new_draw": self.of_variable(var)}


def _identity(var):
    inner = getattr(var, "_value", None)  # a Keras 3 variable wraps the tf.Variable
    if inner is not None and not callable(inner):
        var = inner
    primary = getattr(var, "_primary", None)
    return id(primary if primary is not None else var)


# ---- the draws --------------------------------------------------------------------------------
def same_draw(a, b) -> bool:
    """The same distribution of the same shape and dtype (the `from` names are not compared)."""
    if a.get("kind") != b.get("kind") or a.get("shape") != b.get("shape") or a.get("dtype") != b.get("dtype"):
        return False
    for name in set(a) | set(b):
        if name in ("kind", "shape", "dtype", "from"):
            continue
        x, y = a.get(name), b.get(name)
        if x is None or y is None or abs(x - y) > RTOL * max(abs(x), abs(y)) + 1e-12:
            return False
    return True


def describe(draw) -> str:
    if draw is None:
        return "not known"
    params = ", ".join(f"{k}={_num(draw[k])}" for k in _PARAMS.get(draw["kind"], ("gain",)) if k in draw)
    text = f"{draw['kind']}({params}) {list(draw['shape'])} {draw['dtype']}"
    return f"{text} ({draw['from']})" if draw.get("from") else text


def plausible(value, draw) -> bool:
    """Could `value` be a sample of `draw`? Its shape; every value inside the support (a uniform's
    [minval, maxval], a truncated normal's mean +- 2 stddev); mean and standard deviation within
    six standard errors of the distribution's (an honest draw fails about once in 10^8); an
    orthogonal one's columns (rows) orthonormal up to the gain."""
    import numpy as np

    a = np.asarray(value, dtype=np.float64)
    if list(a.shape) != list(draw["shape"]) or not np.all(np.isfinite(a)):
        return False
    if draw["kind"] == "orthogonal":
        flat = a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a.reshape(1, -1)
        if flat.shape[0] < flat.shape[1]:
            flat = flat.T
        gram, square = flat.T @ flat, draw["gain"] ** 2
        return bool(np.allclose(gram, square * np.eye(gram.shape[0]), atol=1e-3 * max(1.0, square)))
    if draw["kind"] == "uniform":
        low, high = draw["minval"], draw["maxval"]
        center, spread = (low + high) / 2, (high - low) / math.sqrt(12)
        slack = 1e-6 * max(abs(low), abs(high), 1e-30)
        if a.size and (a.min() < low - slack or a.max() > high + slack):
            return False
    else:
        truncated = draw["kind"] == "truncated_normal"
        center, spread = draw["mean"], draw["stddev"] * (0.87962566103423978 if truncated else 1)
        bound = 2 if truncated else 12
        if a.size and np.abs(a - center).max() > bound * draw["stddev"] * (1 + 1e-5) + 1e-30:
            return False
    if a.size < 2 or spread == 0:
        return bool(np.all(a == center)) if spread == 0 else True
    n = a.size
    return bool(abs(a.mean() - center) <= 6 * spread / math.sqrt(n) and abs(a.std() / spread - 1) <= 4.5 / math.sqrt(n))


def verdict(entry) -> str:
    """What --no-transfer made of one variable's draws (a record's `draws` entry; {} for none)."""
    old, new = entry.get("old"), entry.get("new")
    if entry.get("loaded"):
        return f"same initializer: {describe(new)}; OLD's draw loaded"
    if old is not None and new is not None:
        return "different initializers"
    sides = " and ".join(side for side, draw in (("OLD", old), ("NEW", new)) if draw is None)
    return f"no known random draw on {sides} (a constant, or a value computed further): the values compared"


def _num(x) -> str:
    return f"{x:.6g}"


def _resolve(value):
    """A scalar parameter as a float, or None when it is not a known number."""
    import numpy as np

    if value is None:
        return None
    if isinstance(value, (bool, int, float, np.number)):
        return float(value)
    try:
        from tensorflow.python.framework import tensor_util
        from tensorflow.python.ops import variables

        if isinstance(value, variables.Variable):
            return None
        array = np.asarray(value if isinstance(value, (np.ndarray, list, tuple)) else tensor_util.constant_value(value))
        return float(array.reshape(())) if array.size == 1 and array.dtype != object else None
    except Exception:  # noqa: BLE001 - a computed parameter
        return None


def _frame(shape, dtype):
    """(shape, dtype) of a drawn tensor as lists and names, or None when its shape is not fully known."""
    try:
        if shape.rank is None or not shape.is_fully_defined():
            return None
        return [int(d) for d in shape.as_list()], dtype.base_dtype.name
    except Exception:  # noqa: BLE001 - not a tensor
        return None


def _draw(kind, signature, args, kwargs, shape, dtype):
    """The draw of one random op's call (its arguments, its result's shape and dtype), or None."""
    frame = _frame(shape, dtype)
    try:
        bound = signature.bind(*args, **kwargs).arguments
    except TypeError:
        return None
    if frame is None:
        return None
    draw = {"kind": kind, "shape": frame[0], "dtype": frame[1]}
    defaults = {"mean": 0.0, "stddev": 1.0, "minval": 0.0, "maxval": 1.0}
    for name in _PARAMS[kind]:
        raw = bound.get(name, defaults[name])
        if raw is None and name == "maxval" and frame[1].startswith(("float", "bfloat", "half")):
            raw = 1.0
        value = _resolve(raw)
        if value is None:
            return None
        draw[name] = value
    return draw


# ---- hooks ------------------------------------------------------------------------------------
def install(draws: Draws) -> None:
    """Tag what the random ops and initializers return, for `draws`. Adds no graph ops."""
    wrappers = {}
    for module_name, functions in _RAW.items():
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=["_"])
        for name, kind in functions.items():
            original = getattr(module, name)
            if not getattr(original, "_tf1clip_draws", False):
                wrappers[id(original)] = (original, _raw_wrapper(draws, original, kind))
    _rebind(wrappers)
    from tensorflow.python.ops import stateful_random_ops

    for name, kind in _GENERATOR.items():
        method = getattr(stateful_random_ops.Generator, name)
        if not getattr(method, "_tf1clip_draws", False):
            setattr(stateful_random_ops.Generator, name, _raw_wrapper(draws, method, kind))

    for module_name in _INITIALIZER_MODULES:
        after_import(module_name, lambda module: _wrap_initializers(draws, module))


def _raw_wrapper(draws, original, kind):
    signature = inspect.signature(original)

    @functools.wraps(original)
    def draw(*args, **kwargs):
        result = original(*args, **kwargs)
        draws.tag(result, functools.partial(_draw, kind, signature, args, kwargs, getattr(result, "shape", None),
                                            getattr(result, "dtype", None)))
        return result

    draw._tf1clip_draws = True
    return draw


def _rebind(wrappers: dict) -> None:
    """Every name bound to an original of `wrappers` (id -> (original, wrapper)) in TensorFlow's,
    Keras' and tf1clip's loaded modules now names its wrapper (tf.random.normal,
    tf.compat.v1.random_normal, ... are the same function); one walk over the modules for all."""
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(_PATCHED):
            continue
        try:
            attributes = list(vars(module).items())
        except TypeError:
            continue
        for attr, value in attributes:
            pair = wrappers.get(id(value))
            if pair is not None and pair[0] is value:
                setattr(module, attr, pair[1])


def _wrap_initializers(draws, module) -> None:
    for name in _INITIALIZERS:
        cls = getattr(module, name, None)
        if not isinstance(cls, type) or "__call__" not in vars(cls):
            continue
        original = vars(cls)["__call__"]
        if getattr(original, "_tf1clip_draws", False):
            continue

        def __call__(self, shape, *args, _original=original, **kwargs):
            result = _original(self, shape, *args, **kwargs)
            draw = draws.of_value(result)
            if draw is None and hasattr(self, "gain") and "Orthogonal" in type(self).__name__:
                frame = _frame(getattr(result, "shape", None), getattr(result, "dtype", None))
                gain = _resolve(self.gain)
                if frame is not None and gain is not None:
                    draw = {"kind": "orthogonal", "shape": frame[0], "dtype": frame[1], "gain": gain}
            if draw is not None:
                draws.tag(result, dict(draw, **{"from": _named(self)}))
            return result

        __call__._tf1clip_draws = True
        functools.update_wrapper(__call__, original)
        cls.__call__ = __call__


def _named(initializer) -> str:
    shown = []
    for attr in _SHOWN:
        value = getattr(initializer, attr, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            shown.append(f"{attr}={_num(value)}")
        elif isinstance(value, str):
            shown.append(f"{attr}={value}")
    return f"{type(initializer).__name__}({', '.join(shown)})"

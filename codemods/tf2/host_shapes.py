"""The shape of a NumPy array the script makes, when the file alone decides it.

`tf.placeholder(tf.float32, x.shape)` gave TF 1.x a placeholder of the array's static shape: the
script made `x` a few lines above (`x = np.linspace(-1, 1, 100)[:, np.newaxis]`), and a layer on
the placeholder took its width from there. The TF2 tier needs that width where TF 1.x made the
layer's variables, so it computes the array's shape here, by NumPy's own rules, from the
expression a name is bound to:

- a name bound exactly once in the file (CPython's symbol tables count every binding in every
  scope), by an assignment at module level, and never given a new shape in place
  (`x.shape = ...`, `x.resize(...)`);
- NumPy's constructors with the shape in their arguments (`zeros`, `ones`, `empty`, `full`, their
  `_like` forms, `linspace`, `arange` of integers, `eye`, `array` of a nested list literal,
  `random.rand` / `randn` / `random` / `normal` / `uniform` / `randint` / ...);
- element-wise functions and operators (broadcasting, as NumPy does), `vstack`, `hstack`,
  `concatenate`, `reshape` (with one -1), `.T`, `.astype`, and indexing by slices, integers and
  `np.newaxis` / `None`.

Anything else is not known (None), and the caller refuses what needs it. Never imports TensorFlow
or NumPy: the rules are written out, each as NumPy defines it.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import libcst as cst

from codemods.tf2 import fixed_values
from codemods.tf2.syntax import assignments, walk_nodes

Shape = Optional[tuple]  # a tuple of ints (() for a scalar), or None: not known
Raw = Callable[[cst.CSTNode], Optional[str]]  # the dotted name a Name/Attribute chain denotes, as imported

MAX_DEPTH = 32
_ELEMENTWISE = frozenset(f"numpy.{f}" for f in (
    "power", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sqrt", "abs", "absolute", "square",
    "maximum", "minimum", "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "sign", "round",
    "floor", "ceil", "clip", "where", "logical_and", "logical_or", "logical_not", "greater", "less", "equal"))
_SIZED_RANDOM = {  # numpy.random.X: the position of `size` among the positional arguments
    "normal": 2, "uniform": 2, "randint": 2, "binomial": 2, "poisson": 1, "exponential": 1, "standard_normal": 0,
    "random": 0, "random_sample": 0, "sample": 0, "beta": 2, "gamma": 2, "laplace": 2,
    "logistic": 2, "lognormal": 2}


_KEYWORDS = frozenset({"dtype", "size", "shape", "num", "axis", "loc", "scale", "low", "high", "endpoint", "newshape",
                       "a", "object", "M", "N", "n", "order", "fill_value", "copy", "tup", "arrays", "lam", "p"})
_BROADCASTING = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)


class HostShapes:
    """Shapes of the NumPy arrays of one file (`shape_of`), each name's computed once."""

    def __init__(self, fixed: "fixed_values.Fixed", raw: Raw):
        self.fixed = fixed
        self.raw = raw
        self.module_level = _module_level_assignments(fixed.module)
        self.reshaped = _reshaped_names(fixed.module)
        self.cache: dict = {}

    def shape_of(self, node: cst.BaseExpression, depth: int = 0) -> Shape:
        """The shape of the array `node` computes, or None."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, (cst.Integer, cst.Float)):
            return ()
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self.shape_of(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _BROADCASTING):
            return _broadcast([self.shape_of(node.left, depth + 1), self.shape_of(node.right, depth + 1)])
        if isinstance(node, cst.Name):
            return self._name(node.value, depth)
        if isinstance(node, cst.Attribute):
            if node.attr.value == "T":
                inner = self.shape_of(node.value, depth + 1)
                return None if inner is None else tuple(reversed(inner))
            return None
        if isinstance(node, cst.Subscript):
            return self._indexed(self.shape_of(node.value, depth + 1), node.slice)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        return None

    def dims_of(self, node: cst.BaseExpression) -> Shape:
        """The dimensions a shape expression holds: `x.shape` of an array known here, else None."""
        if isinstance(node, cst.Attribute) and node.attr.value == "shape":
            return self.shape_of(node.value)
        return None

    # -- names -------------------------------------------------------------------------------------------
    def _name(self, name: str, depth: int) -> Shape:
        if name in self.cache:
            return self.cache[name]
        self.cache[name] = None  # a name whose value reads itself is not known
        value = fixed_values.once(self.fixed, name)
        known = None
        if value is not None and name in self.module_level and name not in self.reshaped \
                and self.module_level[name] is value:
            known = self.shape_of(value, depth + 1)
        self.cache[name] = known
        return known

    def _int(self, node) -> Optional[int]:
        return fixed_values.number(self.fixed, node) if node is not None else None

    def _ints(self, node) -> Shape:
        """A shape argument: an int, a tuple or list of ints, or an array's `.shape`."""
        single = self._int(node)
        if single is not None:
            return (single,)
        if isinstance(node, (cst.Tuple, cst.List)):
            dims = [self._int(e.value) if isinstance(e, cst.Element) else None for e in node.elements]
            return None if None in dims else tuple(dims)
        if isinstance(node, cst.Name):
            bound = fixed_values.once(self.fixed, node.value)
            if isinstance(bound, (cst.Tuple, cst.List)) and node.value in self.module_level:
                return self._ints(bound)
        return self.dims_of(node)

    # -- indexing ----------------------------------------------------------------------------------------
    def _indexed(self, shape: Shape, index: tuple) -> Shape:
        if shape is None:
            return None
        out, axis = [], 0
        for element in index:
            part = element.slice
            if isinstance(part, cst.Slice):
                if axis >= len(shape):
                    return None
                bounds = [None if b is None else self._int(b) for b in (part.lower, part.upper, part.step)]
                if any(b is None and given is not None for b, given in zip(bounds, (part.lower, part.upper, part.step))):
                    return None
                if bounds[2] == 0:
                    return None
                out.append(len(range(*slice(*bounds).indices(shape[axis]))))
                axis += 1
                continue
            value = part.value
            if _is_newaxis(value, self.raw):
                out.append(1)
                continue
            if self._int(value) is not None and axis < len(shape):
                axis += 1  # an integer takes its axis away
                continue
            return None  # an array, an Ellipsis or a name not known: not followed
        return tuple(out) + tuple(shape[axis:])

    # -- calls -------------------------------------------------------------------------------------------
    def _call(self, node: cst.Call, depth: int) -> Shape:
        if any(a.star for a in node.args):
            return None
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}

        def arg(i: int, name: str):
            return positional[i] if i < len(positional) else keywords.get(name)

        if isinstance(node.func, cst.Attribute) and self.raw(node.func) is None \
                and self._generator_method(node.func) is None:  # a method of an array
            method = node.func.attr.value
            if method in ("astype", "copy"):
                return self.shape_of(node.func.value, depth + 1)
            if method == "reshape":
                target = positional[0] if len(positional) == 1 else cst.Tuple([cst.Element(p) for p in positional])
                return _reshaped(self.shape_of(node.func.value, depth + 1), self._ints(target))
            if method == "flatten" or method == "ravel":
                inner = self.shape_of(node.func.value, depth + 1)
                return None if inner is None else (math.prod(inner),)
            return None
        if set(keywords) - _KEYWORDS:
            return None  # `ndmin=`, `retstep=`, ...: arguments that change the shape are not followed
        q = self._generator_method(node.func) or self.raw(node.func)
        if q is None or not q.startswith("numpy."):
            return None
        name = q[len("numpy."):]
        if name in ("zeros", "ones", "empty", "full"):
            return self._ints(arg(0, "shape"))
        if name in ("zeros_like", "ones_like", "empty_like", "full_like", "copy"):
            return self.shape_of(arg(0, "a"), depth + 1) if arg(0, "a") is not None else None
        if name in ("array", "asarray"):
            given = arg(0, "object" if name == "array" else "a")
            if isinstance(given, (cst.List, cst.Tuple)):
                return _literal_shape(given, self)
            return self.shape_of(given, depth + 1) if given is not None else None
        if name == "linspace":
            num = arg(2, "num")
            count = 50 if num is None else self._int(num)
            return None if count is None else (count,)
        if name == "arange":
            numbers = [self._int(p) for p in positional]
            if keywords or not 1 <= len(numbers) <= 3 or None in numbers or (len(numbers) == 3 and numbers[2] == 0):
                return None
            return (len(range(*numbers)),)
        if name in ("eye", "identity"):
            n = self._int(arg(0, "N" if name == "eye" else "n"))
            m = self._int(arg(1, "M")) if name == "eye" and arg(1, "M") is not None else n
            return None if n is None or m is None else (n, m)
        if name in ("random.rand", "random.randn"):
            dims = [self._int(p) for p in positional]
            return None if keywords or None in dims else tuple(dims)
        if name.startswith("random.") and name[len("random."):] in _SIZED_RANDOM:
            position = _SIZED_RANDOM[name[len("random."):]]
            size = arg(position, "size")
            if size is not None:
                return None if isinstance(size, cst.Name) and size.value == "None" else self._ints(size)
            operands = positional + [v for k, v in keywords.items() if k != "dtype"]
            return _broadcast([self.shape_of(p, depth + 1) for p in operands]) if operands else ()
        if q in _ELEMENTWISE:
            operands = [a.value for a in node.args if a.keyword is None]
            return _broadcast([self.shape_of(p, depth + 1) for p in operands]) if operands else None
        if name in ("vstack", "hstack", "concatenate"):
            return self._stacked(name, arg(0, "tup" if name != "concatenate" else "arrays"),
                                 arg(1, "axis") if name == "concatenate" else None, depth)
        if name == "reshape":
            return _reshaped(self.shape_of(arg(0, "a"), depth + 1), self._ints(arg(1, "newshape")))
        if name == "transpose" and len(positional) == 1 and not keywords:
            inner = self.shape_of(positional[0], depth + 1)
            return None if inner is None else tuple(reversed(inner))
        if name == "expand_dims":
            inner, axis = self.shape_of(arg(0, "a"), depth + 1), self._int(arg(1, "axis"))
            if inner is None or axis is None or not -len(inner) - 1 <= axis <= len(inner):
                return None
            axis = axis if axis >= 0 else len(inner) + 1 + axis
            return inner[:axis] + (1,) + inner[axis:]
        return None

    def _generator_method(self, func) -> Optional[str]:
        """`rng.randn` for a name bound once, at module level, to `np.random.RandomState(...)`:
        `numpy.random.randn` (a RandomState's methods draw arrays of the shapes the module's do)."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        bound = fixed_values.once(self.fixed, func.value.value)
        if not (isinstance(bound, cst.Call) and self.module_level.get(func.value.value) is bound
                and self.raw(bound.func) == "numpy.random.RandomState"):
            return None
        return f"numpy.random.{func.attr.value}"

    def _stacked(self, name: str, parts, axis_node, depth: int) -> Shape:
        if not isinstance(parts, (cst.Tuple, cst.List)) or not parts.elements:
            return None
        shapes = [self.shape_of(e.value, depth + 1) if isinstance(e, cst.Element) else None for e in parts.elements]
        if any(s is None for s in shapes):
            return None
        if name == "vstack":
            shapes = [(1,) + s if len(s) == 1 else s for s in shapes]
            axis = 0
        elif name == "hstack":
            axis = 0 if len(shapes[0]) == 1 else 1
        else:
            axis = 0 if axis_node is None else self._int(axis_node)
        if axis is None or any(len(s) != len(shapes[0]) or len(s) == 0 for s in shapes):
            return None
        rank = len(shapes[0])
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank or any(s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:]
                                       for s in shapes):
            return None
        total = sum(s[axis] for s in shapes)
        return shapes[0][:axis] + (total,) + shapes[0][axis + 1:]


def _broadcast(shapes: list) -> Shape:
    """NumPy's broadcast of operand shapes (None when one is not known or they do not broadcast)."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0} - {1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _reshaped(shape: Shape, target: Shape) -> Shape:
    if shape is None or target is None or sum(1 for d in target if d == -1) > 1 or any(d < -1 for d in target):
        return None
    size, known = math.prod(shape), math.prod(d for d in target if d != -1)
    if -1 in target:
        if known == 0 or size % known:
            return None
        return tuple(size // known if d == -1 else d for d in target)
    return target if known == size else None


def _literal_shape(node, shapes: HostShapes) -> Shape:
    """The shape of a nested list or tuple literal of numbers (regular, as np.array makes it)."""
    if isinstance(node, (cst.List, cst.Tuple)):
        inner = [_literal_shape(e.value, shapes) if isinstance(e, cst.Element) else None for e in node.elements]
        if any(s is None for s in inner) or len(set(inner)) > 1:
            return None
        return (len(inner),) + (inner[0] if inner else ())
    if isinstance(node, (cst.Integer, cst.Float)) or shapes._int(node) is not None:
        return ()
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return ()
    return None


def _is_newaxis(node, raw: Raw) -> bool:
    return (isinstance(node, cst.Name) and node.value == "None") or raw(node) == "numpy.newaxis"


def _module_level_assignments(module: cst.Module) -> dict:
    """name → the value of its assignment at module level (outside every def and class)."""
    found: dict = {}

    def visit(body) -> None:
        for st in body:
            if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(st, cst.SimpleStatementLine):
                for target, value in assignments(st):
                    if isinstance(target, cst.Name) and value is not None:
                        found.setdefault(target.value, value)
            elif isinstance(st, cst.BaseCompoundStatement):
                for block in _blocks(st):
                    visit(block)
    visit(module.body)
    return found


def _blocks(st: cst.BaseCompoundStatement):
    """The statement lists of a compound statement's blocks (an `elif` as a statement of its own)."""
    parts = [st.body, getattr(st, "orelse", None), *getattr(st, "handlers", ()), getattr(st, "finalbody", None)]
    for part in parts:
        if part is None:
            continue
        if isinstance(part, cst.If):
            yield [part]
            continue
        block = part if isinstance(part, cst.BaseSuite) else getattr(part, "body", None)
        if isinstance(block, cst.IndentedBlock):
            yield block.body
        elif isinstance(block, cst.SimpleStatementSuite):
            yield [cst.SimpleStatementLine(block.body)]


def _reshaped_names(module: cst.Module) -> frozenset:
    """Names whose array may take another shape in place: `x.shape = ...`, `x.resize(...)`."""
    names = set()
    for node in walk_nodes(module):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if isinstance(t, cst.Attribute) and t.attr.value == "shape" and isinstance(t.value, cst.Name):
                    names.add(t.value.value)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "resize" \
                and isinstance(node.func.value, cst.Name):
            names.add(node.func.value.value)
    return frozenset(names)


__all__ = ["HostShapes"]

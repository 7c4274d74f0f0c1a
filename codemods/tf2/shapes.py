"""Static shapes of graph values, as TF 1.x knew them when it built the graph.

TF 1.x created a layer's variables from its input's static shape (`tf.layers.dense(x, 16)`
made a kernel `[x.shape[-1], 16]` at that line). The TF 2 form builds the Keras layer there
too, so the translator must know the same shape without running anything: a shape is a list
of dimensions, each None (unknown) or an expression node (`8`, `n_input`, `7 * 7 * 64`),
folded to an integer when every part is a literal. Unknown stays unknown: the caller refuses.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.tf2.model import AV, Input, Number, Shape, StateKind, StateRef, Tensor

Dim = Optional[cst.BaseExpression]

ELEMENTWISE = frozenset(f"tensorflow.{n}" for n in (
    "nn.relu", "nn.relu6", "nn.elu", "nn.selu", "nn.softplus", "nn.softsign", "nn.leaky_relu", "nn.tanh", "tanh",
    "nn.sigmoid", "sigmoid", "math.sigmoid", "math.tanh", "nn.softmax", "nn.log_softmax", "identity", "nn.dropout",
    "stop_gradient", "square", "math.square", "sqrt", "math.sqrt", "exp", "math.exp", "log", "math.log", "abs",
    "math.abs", "negative", "cast", "to_float", "nn.l2_normalize", "clip_by_value", "clip_by_norm", "round",
    "sign", "math.log1p", "zeros_like", "ones_like", "check_numerics", "debugging.check_numerics", "nn.lrn",
    "nn.local_response_normalization", "pow", "math.pow", "floor", "ceil", "nn.bias_add", "add", "subtract",
    "multiply", "maximum", "minimum", "math.maximum", "math.minimum", "math.add", "math.multiply", "div", "divide",
    "truediv", "math.divide", "squared_difference", "math.squared_difference",
    "nn.sigmoid_cross_entropy_with_logits",
))
# of those, the ones of two tensors: their result has the two shapes broadcast (`tf.add(b, h)` is h's shape)
BINARY = frozenset(f"tensorflow.{n}" for n in (
    "add", "subtract", "multiply", "maximum", "minimum", "math.maximum", "math.minimum", "math.add", "math.multiply",
    "div", "divide", "truediv", "math.divide", "squared_difference", "math.squared_difference", "pow", "math.pow",
))
REDUCTIONS = frozenset(f"tensorflow.{n}" for n in (
    "reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "math.reduce_mean",
    "math.reduce_sum", "argmax", "argmin", "math.argmax", "arg_max", "reduce_logsumexp", "reduce_any", "reduce_all",
))


# -- dimension arithmetic ---------------------------------------------------------------------
def literal(dim: Dim) -> Optional[int]:
    if isinstance(dim, cst.Integer):
        return int(dim.value)
    if isinstance(dim, cst.UnaryOperation) and isinstance(dim.operator, cst.Minus):
        inner = literal(dim.expression)
        return None if inner is None else -inner
    return None


def indexed(shape: list, slices) -> Optional[list]:
    """The static shape of `tensor[slices]`: an integer literal drops its axis, `:` keeps it, a bounded
    slice keeps it with an unknown length, later axes are kept; anything else (`...`, `None`, a tensor
    index) is not known (None)."""
    if len(slices) > len(shape):
        return None
    out = []
    for s, dim in zip(slices, shape):
        if isinstance(s.slice, cst.Index):
            if literal(s.slice.value) is None:
                return None
            continue
        full = s.slice.lower is None and s.slice.upper is None and s.slice.step is None
        out.append(dim if full else None)
    return out + list(shape[len(slices):])


def integer(value: int) -> cst.BaseExpression:
    return cst.Integer(str(value)) if value >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, (cst.Name, cst.Integer, cst.Attribute, cst.Call, cst.Subscript)) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _binary(a: Dim, op, b: Dim, fold) -> Dim:
    if a is None or b is None:
        return None
    la, lb = literal(a), literal(b)
    if la is not None and lb is not None:
        return integer(fold(la, lb))
    return cst.BinaryOperation(_paren(a), op, _paren(b))


def mul(a: Dim, b: Dim) -> Dim:
    return _binary(a, cst.Multiply(), b, lambda x, y: x * y)


def add(a: Dim, b: Dim) -> Dim:
    return _binary(a, cst.Add(), b, lambda x, y: x + y)


def ceil_div(a: Dim, b: Dim) -> Dim:
    """`ceil(a / b)` for positive dimensions."""
    if a is None or b is None:
        return None
    la, lb = literal(a), literal(b)
    if la is not None and lb is not None:
        return integer(-(-la // lb))
    if lb == 1:
        return a
    return cst.BinaryOperation(_paren(add(a, _binary(b, cst.Subtract(), integer(1), lambda x, y: x - y))),
                               cst.FloorDivide(), _paren(b))


def same(a: Dim, b: Dim) -> bool:
    if a is None or b is None:
        return False
    la, lb = literal(a), literal(b)
    if la is not None or lb is not None:
        return la == lb
    return cst.Module(body=[]).code_for_node(a) == cst.Module(body=[]).code_for_node(b)


def compatible(a: Shape, b: Shape) -> bool:
    """Not known to be incompatible (TF 1.x's `TensorShape.is_compatible_with`, on what is known here):
    False only when both ranks are known and differ, or two dimensions are integers that differ."""
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    return all(literal(x) is None or literal(y) is None or literal(x) == literal(y) for x, y in zip(a, b))


def operand(av: AV, node: cst.BaseExpression) -> Shape:
    """The static shape of an operand of arithmetic or a binary op: a number written there, or a helper's
    parameter given one (`Number`), is a scalar (`h * 0.5` has the shape of `h`)."""
    if not av.graph and (isinstance(node, (cst.Integer, cst.Float)) or isinstance(av, Number)):
        return []
    return of(av)


def may_be_one(dim: Dim) -> bool:
    """TF 1.x's `Dimension.is_compatible_with(1)`, on what is known here: unknown, or 1."""
    return literal(dim) in (None, 1)


def from_literal(node: Optional[cst.BaseExpression]) -> Shape:
    """`[None, 8]` → [None, 8]; anything but a list/tuple literal (or an int) → None (unknown)."""
    if isinstance(node, cst.Integer):
        return [node]
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    dims = []
    for el in node.elements:
        if isinstance(el, cst.StarredElement):
            return None
        v = el.value
        dims.append(None if isinstance(v, cst.Name) and v.value == "None" else v)
    return dims


def broadcast(a: Shape, b: Shape) -> Shape:
    """TF's static broadcast of two shapes (None where TF 1.x knew nothing either)."""
    if a is None or b is None:
        return None
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    offset = len(a) - len(b)
    for i, db in enumerate(b):
        da = a[offset + i]
        if literal(da) == 1:
            out[offset + i] = db
        elif literal(db) == 1 or same(da, db):
            out[offset + i] = da
        elif da is None:
            out[offset + i] = db
        elif db is None:
            out[offset + i] = da
        else:
            return None
    return out


def reduce(shape: Shape, axis: Optional[cst.BaseExpression], keepdims: bool) -> Shape:
    if shape is None:
        return None
    if axis is None:
        return [integer(1)] * len(shape) if keepdims else []
    axes = [literal(axis)] if not isinstance(axis, (cst.List, cst.Tuple)) else [literal(e.value) for e in axis.elements]
    if any(a is None for a in axes):
        return None
    axes = {a % len(shape) for a in axes} if shape else set()
    if keepdims:
        return [integer(1) if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


def reshape(shape: Shape, target: Shape) -> Shape:
    """The shape `tf.reshape(x, target)` gives: a -1 is the element count left over, when known."""
    if target is None:
        return None
    minus = [i for i, d in enumerate(target) if literal(d) == -1]
    if not minus:
        return target
    if len(minus) > 1:
        return None
    if shape is None:  # TF's static shape: the other dimensions as written, the -1 unknown
        return [None if i == minus[0] else d for i, d in enumerate(target)]
    total: Dim = integer(1)
    for d in shape:
        total = mul(total, d)
    known: Dim = integer(1)
    for i, d in enumerate(target):
        if i != minus[0]:
            known = mul(known, d)
    out = list(target)
    lt, lk = literal(total), literal(known)
    out[minus[0]] = integer(lt // lk) if lt is not None and lk not in (None, 0) and lt % lk == 0 else None
    if out[minus[0]] is None and total is not None and known is not None and literal(known) == 1:
        out[minus[0]] = total
    return out


def conv_output(size: Dim, kernel: Dim, stride: Dim, padding: str) -> Dim:
    """One spatial dimension of a convolution or pooling output, as TF computes it."""
    if padding == "SAME":
        return ceil_div(size, stride)
    if padding == "VALID":
        if size is None or kernel is None:
            return None
        return ceil_div(_binary(size, cst.Subtract(), _binary(kernel, cst.Subtract(), integer(1),
                                                              lambda x, y: x - y), lambda x, y: x - y), stride)
    return None


def padding_of(node: Optional[cst.BaseExpression], default: str) -> Optional[str]:
    if node is None:
        return default
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value.upper() if isinstance(value, str) and value.upper() in ("SAME", "VALID") else None
    return None


def pair(node: Optional[cst.BaseExpression], default: int) -> Optional[list]:
    """A kernel size or stride given as an int or a pair/list (`[2, 2]`, `2`)."""
    if node is None:
        return [integer(default), integer(default)]
    if isinstance(node, (cst.List, cst.Tuple)):
        dims = [e.value for e in node.elements]
        if len(dims) == 4:  # tf.nn's NHWC [1, h, w, 1]
            return dims[1:3]
        return dims if len(dims) == 2 else None
    return [node, node]


def matmul(a: Shape, b: Shape, transpose_a: bool = False, transpose_b: bool = False) -> Shape:
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return None
    return [a[1] if transpose_a else a[0], b[0] if transpose_b else b[1]]


def concat(parts: list, axis: Optional[int]) -> Shape:
    if axis is None or not parts or any(p is None for p in parts) or len({len(p) for p in parts}) != 1:
        return None
    axis %= len(parts[0])
    out = list(parts[0])
    total: Dim = parts[0][axis]
    for p in parts[1:]:
        total = add(total, p[axis])
    out[axis] = total
    return out


def of(av: AV) -> Shape:
    """The static shape of a graph value's abstract value (None: unknown)."""
    if isinstance(av, Tensor):
        return av.shape
    if isinstance(av, Input):
        return av.placeholder.dims
    if isinstance(av, StateRef) and av.state.kind == StateKind.VARIABLE:
        return av.state.shape
    return None


def static_dim(av: AV, index: int, folded: dict) -> Optional[cst.Integer]:
    """Dimension `index` of a graph value's static shape, when it is a known number (TF 1.x's
    `x.shape[index]`, a `Dimension` that computes like that int); else None. `folded`: the numbers
    names bound once hold (a dimension written as such a name)."""
    dims = of(av)
    if dims is None or not -len(dims) <= index < len(dims):
        return None
    dim = dims[index]
    if isinstance(dim, cst.Name) and dim.value in folded:
        return integer(folded[dim.value])
    if isinstance(dim, cst.Subscript):  # an item of a literal list (`[784, 512][0]`: a helper's list read in place)
        number = fold(dim)
        return integer(number) if number is not None else None
    return dim if isinstance(dim, cst.Integer) else None


def fold(node: cst.BaseExpression) -> Optional[int]:
    """The int an expression of integer literals (+, -, *, //, parentheses) computes; else None."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = fold(node.expression)
        return None if inner is None else -inner
    if isinstance(node, cst.Subscript) and isinstance(node.value, (cst.List, cst.Tuple)) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Index):
        k, items = fold(node.slice[0].slice.value), node.value.elements
        return fold(items[k].value) if k is not None and -len(items) <= k < len(items) else None
    if isinstance(node, cst.BinaryOperation):
        a, b = fold(node.left), fold(node.right)
        if a is None or b is None:
            return None
        if isinstance(node.operator, cst.Add):
            return a + b
        if isinstance(node.operator, cst.Subtract):
            return a - b
        if isinstance(node.operator, cst.Multiply):
            return a * b
        if isinstance(node.operator, cst.FloorDivide) and b != 0:
            return a // b
    return None

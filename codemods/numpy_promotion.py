"""`np.max(labels) + 1` on narrow integers: NumPy 1.x's int64 kept (NEP 50).

NumPy 1.x promoted a NumPy scalar combined with a Python int to int64: `np.max(uint8_labels) +
1` was `int64`. NumPy 2 keeps the scalar's type (NEP 50): the sum is `uint8`, TensorFlow refuses
it as a shape ("DataType uint8 not in list of allowed values: int32, int64") and 255 + 1 wraps
to 0. A call of a reduction that returns a scalar of its argument's type (`np.max`, `np.min`,
`np.amax`, `np.amin`, `np.ptp`, one positional argument, no axis) that meets a Python int
literal in `+ - * // % **` becomes `_int64_if_narrow(np.max(labels)) + 1`: a function added
once after the imports, which makes a NumPy integer scalar narrower than int64 an int64 and
leaves every other value (floats, int64, Python ints, arrays) as it is. Only the dtype changes,
the value does not (but for 255 + 1, which is NumPy 1.x's 256 again). `tf1clip run` gives
TensorFlow such values as int64 (`tf1clip.numpy_shapes`). Never imports NumPy.
"""
from __future__ import annotations

import ast

import libcst as cst

from codemods.command import command_attribute
from codemods.nodes import Reference
from codemods.numpy_ragged import HelperRule
from codemods.rule import Invalid, Valid
from tf1clip.numpy_removed import PROMOTION_HELPER as HELPER
from tf1clip.numpy_removed import PROMOTION_HELPER_LINES, PROMOTION_REDUCTIONS

_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow)


def _int_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


class NumpyPromotion(HelperRule):
    DESCRIPTION = ("Keep NumPy 1.x's int64 where a Python int literal meets np.max / np.min / np.ptp of narrow "
                   "integers (NumPy 2 keeps uint8: NEP 50).")
    RULE = "numpy_promotion"
    TRIGGERS = FUNCTIONS = PROMOTION_REDUCTIONS
    HELPER, HELPER_LINES = HELPER, PROMOTION_HELPER_LINES

    def visit_reference(self, ref: Reference) -> None:
        if self.numpy_function(ref) is None:
            return
        call = self.file.parent(ref.node, ref.stmt)
        if not (isinstance(call, ast.Call) and call.func is ref.node and len(call.args) == 1
                and not isinstance(call.args[0], ast.Starred) and not call.keywords):
            return
        operation = self.file.parent(call, ref.stmt)
        if not (isinstance(operation, ast.BinOp) and isinstance(operation.op, _OPERATORS)):
            return
        other = operation.right if operation.left is call else operation.left
        if not _int_literal(other):
            return
        helper = self.file.lookup(HELPER, ref.scope)
        if helper and not all(isinstance(getattr(b, "stmt", None), ast.FunctionDef) for b in helper):
            self.note_human(ref.line, f"{self.file.source(call)}: NumPy 2 keeps a narrow integer's type with a "
                                      f"Python int where NumPy 1.x made int64; this file binds {HELPER} "
                                      "itself, so the expression is left: check the dtype by hand")
            return
        self.run.transform(self, call, ref.stmt, _wrapped)
        self.rewritten += 1
        self.note_change(ref.line, f"{self.file.source(ref.node)}(x) → {HELPER}({self.file.source(ref.node)}(x)) "
                                   "next to a Python int: NumPy 2 keeps a uint8 scalar's type there (NEP 50), "
                                   "NumPy 1.x made it int64, which TensorFlow takes as a shape")

    VALID = [
        Valid("import numpy as np\n\nn = np.max(labels, axis=0) + 1\nm = np.max(labels) + offset\n"
              "k = np.argmax(labels) + 1\nf = np.max(x) * 2.0\n"),
    ]
    INVALID = [
        Invalid(
            "import numpy as np\n\nn_classes = np.max(labels) + 1\nspan = 1 + np.ptp(ids)\n",
            "import numpy as np\n\n\n" + "\n".join(PROMOTION_HELPER_LINES) + "\n\n\nn_classes = " + HELPER
            + "(np.max(labels)) + 1\nspan = 1 + " + HELPER + "(np.ptp(ids))\n",
        ),
    ]


def _wrapped(node: cst.Call) -> cst.Call:
    return cst.Call(func=cst.Name(HELPER), args=[cst.Arg(node)])


__getattr__ = command_attribute(NumpyPromotion)  # NumpyPromotionCommand, for python -m libcst.tool codemod

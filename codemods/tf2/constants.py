"""Constants of a loop's pass, read as Python computes them: what `unroll` folds into each pass.

`pairs` gives the pass's names their constants (`for i, units in enumerate([12, 8])`: i → 0,
units → 12); `Fold` writes them in and folds `'w%d' % 0` and `f'w{0}'` into the string;
`decided` tells which branch an `if` comparing constants takes (`if 0 < 2 - 1:`), where `+ - *`
of integers are computed first.
"""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from codemods.tf2._base import code
from codemods.tf2.syntax import Replace, is_literal

_COMPARE = {cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b, cst.LessThan: lambda a, b: a < b,
            cst.LessThanEqual: lambda a, b: a <= b, cst.GreaterThan: lambda a, b: a > b,
            cst.GreaterThanEqual: lambda a, b: a >= b}


def decided(test) -> Optional[bool]:
    """Whether a test that compares two constants holds (None when it is not such a test)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and type(test.comparisons[0].operator) in _COMPARE):
        return None
    try:
        left = ast.literal_eval(_arithmetic(code(test.left)))
        right = ast.literal_eval(_arithmetic(code(test.comparisons[0].comparator)))
        return bool(_COMPARE[type(test.comparisons[0].operator)](left, right))
    except (ValueError, TypeError, SyntaxError):
        return None


def _arithmetic(text: str) -> str:
    """`2 - 1` → `1`: + - * of integer constants, as Python computes them (else the text unchanged)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return text
    if all(isinstance(n, (ast.Expression, ast.BinOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.UnaryOp,
                          ast.USub)) for n in ast.walk(tree)) and \
            all(isinstance(n.value, int) for n in ast.walk(tree) if isinstance(n, ast.Constant)):
        return repr(eval(compile(tree, "<constant>", "eval"), {"__builtins__": {}}))  # only int + - * nodes
    return text


def pairs(target, value) -> dict:
    """name → its constant in this pass (`i, units` = `(0, 12)`: i → 0, units → 12)."""
    if isinstance(target, cst.Name):
        return {target.value: value}
    if isinstance(value, cst.Tuple) and len(value.elements) == len(target.elements):
        out = {}
        for t, v in zip(target.elements, value.elements):
            out.update(pairs(t.value, v.value))
        return out
    return {}


def folded_str(node) -> Optional[str]:
    """The string an expression of constants makes (`'layer_%d' % 0`, `'conv{}'.format(1)`, `f'w{2}'`, a
    literal), as Python computes it; None for anything else."""
    if node is None:
        return None
    folded = node.visit(Fold({}))
    if isinstance(folded, cst.SimpleString) and "b" not in folded.prefix.lower():
        value = folded.evaluated_value
        return value if isinstance(value, str) else None
    return None


class Fold(Replace):
    """The pass's names → their constants, and `'fmt' % constants` / `f'...{constant}...'` → the string."""

    def leave_Name(self, original, updated):
        new = super().leave_Name(original, updated)
        return updated if new is updated else new.deep_clone()  # each place its own node

    def leave_BinaryOperation(self, original, updated):
        if isinstance(updated.operator, cst.Add) and isinstance(updated.left, cst.SimpleString) and \
                isinstance(updated.right, cst.SimpleString):  # 'conv' + '1'
            left, right = updated.left.evaluated_value, updated.right.evaluated_value
            if isinstance(left, str) and isinstance(right, str):
                return cst.SimpleString(repr(left + right))
        if not (isinstance(updated.operator, cst.Modulo) and isinstance(updated.left, cst.SimpleString)):
            return updated
        try:
            fmt = ast.literal_eval(updated.left.value)
            values = ast.literal_eval(code(updated.right))
            text = fmt % values
        except (ValueError, TypeError, SyntaxError, KeyError):
            return updated
        return cst.SimpleString(repr(text)) if isinstance(text, str) else updated

    def leave_Call(self, original, updated):
        """`'layer_{}'.format(0)`: str.format of constants."""
        func = updated.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.SimpleString)
                and func.attr.value == "format") or any(a.star for a in updated.args):
            return updated
        try:
            fmt = ast.literal_eval(func.value.value)
            args = [ast.literal_eval(code(a.value)) for a in updated.args if a.keyword is None]
            kwargs = {a.keyword.value: ast.literal_eval(code(a.value)) for a in updated.args if a.keyword is not None}
            text = fmt.format(*args, **kwargs)
        except (ValueError, TypeError, SyntaxError, KeyError, IndexError, AttributeError):
            return updated
        return cst.SimpleString(repr(text)) if isinstance(text, str) else updated

    def leave_FormattedString(self, original, updated):
        parts = []
        for part in updated.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value)
            elif part.conversion is None and part.format_spec is None and is_literal(part.expression):
                parts.append(str(ast.literal_eval(code(part.expression))))
            else:
                return updated
        if "b" in updated.prefix.lower() or "r" in updated.prefix.lower():
            return updated
        return cst.SimpleString(repr("".join(parts)))

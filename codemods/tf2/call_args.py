"""Reading and writing a libcst Call's arguments: what the API applier, its transforms and the twins share
(reading one argument is `codemods.tf2._base.arg`)."""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from codemods.tf2._base import code

# how a script spells float32 (the dtype TF 2's initializers and variables take by default)
FLOAT32 = ("tf.float32", "tensorflow.float32", "'float32'", '"float32"', "'float'", '"float"')


def literal_str(node) -> Optional[str]:
    """The value of a plain string literal, else None."""
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def number_literal(node, literal_of) -> Optional[cst.BaseExpression]:
    """The number literal `node` is (`0.5`, `-1`), or that a name stands for (`literal_of(name)`: the literal
    a module-level name is bound to once, else None), else None."""
    if isinstance(node, cst.Name):
        node = literal_of(node.value)
    inner = node.expression if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        else node
    return node if isinstance(inner, (cst.Integer, cst.Float)) else None


def number_value(node, literal_of) -> Optional[float]:
    """The value of `number_literal(node, literal_of)`, as a float, else None."""
    node = number_literal(node, literal_of)
    if node is None:
        return None
    if isinstance(node, cst.UnaryOperation):
        return -float(node.expression.evaluated_value)
    return float(node.evaluated_value)


def is_false(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def is_literal(node: cst.BaseExpression, wanted: str) -> bool:
    """Is `node` the literal `wanted` (source text; "<str>": any string literal)?"""
    if wanted == "<str>":
        return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
    if wanted in ("True", "False", "None"):
        return isinstance(node, cst.Name) and node.value == wanted
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value == wanted.strip("'\"")
    return code(node) == wanted


def literal_kind(literal: str) -> Optional[str]:
    """'number', 'bool', 'str', ... for a literal's source text; None if it is not a literal."""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def same_number(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spelled without spaces around `=`."""
    return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def with_commas(args: list) -> list:
    """Arguments with a comma after each but the last (kept as written where there was one)."""
    out = []
    for i, a in enumerate(args):
        if i == len(args) - 1:
            out.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        elif a.comma is cst.MaybeSentinel.DEFAULT:
            out.append(a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        else:
            out.append(a)
    return out

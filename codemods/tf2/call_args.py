"""Reading and writing a libcst Call's arguments: what the API applier, its transforms and the twins share."""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst


def argument(call: cst.Call, keyword: str, position: Optional[int]) -> Optional[cst.BaseExpression]:
    """The value of argument `keyword`, given by keyword or at positional `position` (None if absent)."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position is not None and 0 <= position < len(positional):
        return positional[position].value
    return None


def code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


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

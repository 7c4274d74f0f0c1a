"""The exact argument transforms behind tf_upgrade_v2's code transformers, as small named functions.

tf_upgrade_v2 rewrites a few calls with code rather than data; `tools/gen_api_spec.py`
classifies each of those transformers, and the ones that keep TF 1's meaning exactly are
these. Each takes (spec name, libcst Call, the module's alias of `tensorflow`) after the
spec's reorders and keyword renames were applied, and returns (TF 2 name or None for
"unchanged", the new Call); `Unmappable(reason)` when this call cannot be kept exact.
tests/test_api_changes.py runs each one's TF 1 call (graph mode) against its TF 2 call
(eager) on the same inputs.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.children import children
from codemods.tf2.call_args import keyword_arg, with_commas


class Unmappable(Exception):
    """This call's meaning cannot be kept (the reason is one line)."""


def _kw(call: cst.Call, name: str) -> Optional[cst.Arg]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _replace(call: cst.Call, old: cst.Arg, new: Optional[cst.Arg]) -> cst.Call:
    args = [new if a is old else a for a in call.args if a is not old or new is not None]
    return call.with_changes(args=with_commas(args))


def _simple(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Call, cst.Subscript))


def _tf(alias: str, dotted: str) -> cst.BaseExpression:
    return cst.parse_expression(f"{alias}.{dotted}")


def keep_prob_to_rate(name: str, call: cst.Call, alias: str) -> tuple[Optional[str], cst.Call]:
    """`tf.nn.dropout(x, keep_prob)` → `tf.nn.dropout(x, rate=1 - keep_prob)`.

    TF 1.15's dropout is `dropout_v2(x, rate=1 - keep_prob)` (the same Python float or tensor
    subtraction), so the rewrite computes exactly what TF 1 did."""
    keep = _kw(call, "keep_prob")
    rate = _kw(call, "rate")
    if keep is None:
        if rate is None:
            raise Unmappable("neither keep_prob nor rate is given")
        return None, call
    if rate is not None:
        raise Unmappable("both keep_prob and rate are given (TF 1 raised)")
    value = keep.value
    if not _simple(value):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    one_minus = cst.BinaryOperation(left=cst.Integer("1"), operator=cst.Subtract(
        whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")), right=value)
    return None, _replace(call, keep, keyword_arg("rate", one_minus).with_changes(comma=keep.comma))


_CASTS = {"to_float": "float32", "to_double": "float64", "to_int32": "int32", "to_int64": "int64",
          "to_bfloat16": "bfloat16", "to_complex64": "complex64", "to_complex128": "complex128"}


def to_cast(name: str, call: cst.Call, alias: str) -> tuple[Optional[str], cst.Call]:
    """`tf.to_float(x, name)` → `tf.cast(x, tf.float32, name=name)` (TF 1's to_* were exactly this cast)."""
    dtype = _CASTS.get(name.rsplit(".", 1)[-1])
    if dtype is None:
        raise Unmappable("not a tf.to_<dtype> function")
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    if len(positional) > 2 or any(a.keyword.value not in ("x", "name") for a in keywords):
        raise Unmappable("arguments other than (x, name)")
    x = positional[0].value if positional else next((a.value for a in keywords if a.keyword.value == "x"), None)
    label = positional[1].value if len(positional) > 1 else next(
        (a.value for a in keywords if a.keyword.value == "name"), None)
    if x is None:
        raise Unmappable("no x")
    args = [cst.Arg(value=x), cst.Arg(value=_tf(alias, dtype))]
    if label is not None:
        args.append(keyword_arg("name", label))
    return "tf.cast", call.with_changes(args=with_commas(args))


def stop_gradient_labels(name: str, call: cst.Call, alias: str) -> tuple[Optional[str], cst.Call]:
    """TF 1's `softmax_cross_entropy_with_logits` let no gradient into `labels`; TF 2's (the old
    `_v2`) does: the labels are wrapped in `tf.stop_gradient`, as tf_upgrade_v2 does, unless they
    are a literal constant (nothing to stop) or already stopped."""
    labels = _kw(call, "labels")
    if labels is None:
        raise Unmappable("labels are not given by keyword")
    value = labels.value
    if isinstance(value, (cst.Integer, cst.Float, cst.List, cst.Tuple)) and all(
            isinstance(n, (cst.Integer, cst.Float, cst.List, cst.Tuple, cst.Element, cst.UnaryOperation,
                           cst.Comma, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftParen,
                           cst.RightParen, cst.SimpleWhitespace, cst.Minus))
            for n in _walk(value)):
        return None, call
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "stop_gradient":
        return None, call
    wrapped = cst.Call(func=_tf(alias, "stop_gradient"), args=[cst.Arg(value=value)])
    return None, _replace(call, labels, labels.with_changes(value=wrapped))


def _walk(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from _walk(child)


def _regularizer(call: cst.Call, factor: Optional[str], keras: str) -> tuple[str, cst.Call]:
    positional = [a for a in call.args if a.keyword is None]
    keywords = [a for a in call.args if a.keyword is not None]
    if len(positional) > 2 or any(a.keyword.value not in ("scale", "scope") for a in keywords):
        raise Unmappable("arguments other than (scale, scope)")
    scale = positional[0].value if positional else next((a.value for a in keywords if a.keyword.value == "scale"), None)
    if scale is None:
        raise Unmappable("no scale")
    if factor is not None:
        if not _simple(scale):
            scale = scale.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        scale = cst.BinaryOperation(left=cst.Float(factor), operator=cst.Multiply(
            whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")), right=scale)
    return keras, call.with_changes(args=[cst.Arg(value=scale)])


def l1_regularizer(name: str, call: cst.Call, alias: str) -> tuple[Optional[str], cst.Call]:
    """contrib/slim `l1_regularizer(scale)`: scale * sum(|w|), which is Keras' `l1(scale)`."""
    return _regularizer(call, None, "tf.keras.regularizers.l1")


def l2_regularizer(name: str, call: cst.Call, alias: str) -> tuple[Optional[str], cst.Call]:
    """contrib/slim `l2_regularizer(scale)`: scale * tf.nn.l2_loss(w) = scale * sum(w**2) / 2, which is
    Keras' `l2(0.5 * scale)` (Keras: l2 * sum(w**2))."""
    return _regularizer(call, "0.5", "tf.keras.regularizers.l2")


FUNCTIONS = {f.__name__: f for f in (keep_prob_to_rate, to_cast, stop_gradient_labels, l1_regularizer,
                                     l2_regularizer)}

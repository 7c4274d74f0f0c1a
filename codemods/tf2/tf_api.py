"""Every TensorFlow call the translator emits goes through `to_tf2` (and every uncalled symbol
through `reference_to_tf2`): the TF 1.x name and arguments → the TF 2 call with the same
meaning, or `NoTF2Mapping(reason)`.

The applier of TensorFlow's own upgrade spec (`codemods.tf2.api_changes`, generated from
`tensorflow/tools/compatibility/`) has this interface; until it is on main, this module is a
stand-in with the few rows the fixtures need, so that switching is one import.
"""
from __future__ import annotations

import libcst as cst

from codemods._tfapi import V1_ONLY


class NoTF2Mapping(Exception):
    """The call has no TF 2 form with the same meaning; `reason` says why, in one line."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


_RENAMES = {
    "tf.set_random_seed": "tf.random.set_seed",
    "tf.global_norm": "tf.linalg.global_norm",
    "tf.nn.softmax_cross_entropy_with_logits_v2": "tf.nn.softmax_cross_entropy_with_logits",
    "tf.log": "tf.math.log",
    "tf.random_normal": "tf.random.normal",
    "tf.random_uniform": "tf.random.uniform",
    "tf.truncated_normal": "tf.random.truncated_normal",
    "tf.squared_difference": "tf.math.squared_difference",
    "tf.rsqrt": "tf.math.rsqrt",
    "tf.div_no_nan": "tf.math.divide_no_nan",
    "tf.random_normal_initializer": "tf.random_normal_initializer",
    "tf.glorot_uniform_initializer": "tf.keras.initializers.GlorotUniform",
    "tf.truncated_normal_initializer": "tf.keras.initializers.TruncatedNormal",
    "tf.arg_max": "tf.argmax",
    "tf.to_float": None,
}
_KEYWORDS = {"reduction_indices": "axis", "keep_dims": "keepdims"}
_REDUCTIONS = {"tf.reduce_mean", "tf.reduce_sum", "tf.reduce_max", "tf.reduce_min", "tf.reduce_prod",
               "tf.reduce_any", "tf.reduce_all", "tf.argmax", "tf.argmin", "tf.reduce_logsumexp"}


def _spec_name(qualified_name: str) -> str:
    for prefix in ("tensorflow.compat.v1.", "tensorflow.", "tf.compat.v1.", "tf."):
        if qualified_name.startswith(prefix):
            return "tf." + qualified_name[len(prefix):]
    return qualified_name


def _check_v2(name: str) -> None:
    rel = name[len("tf."):]
    parts = rel.split(".")
    if any(".".join(parts[:i]) in V1_ONLY for i in range(1, len(parts) + 1)) or rel.startswith("contrib"):
        raise NoTF2Mapping(f"{name} has no TF 2 equivalent with the same meaning")


def to_tf2(qualified_name: str, call: cst.Call, *, alias: str = "tf") -> tuple[str, cst.Call]:
    name = _spec_name(qualified_name)
    if not name.startswith("tf."):
        return qualified_name, call
    args = []
    for a in call.args:
        if a.keyword is not None and a.keyword.value in _KEYWORDS and name in _REDUCTIONS:
            a = a.with_changes(keyword=cst.Name(_KEYWORDS[a.keyword.value]))
        args.append(a)
    call = call.with_changes(args=args)
    if name == "tf.nn.dropout":
        return "tf.nn.dropout", _dropout(call)
    if name == "tf.nn.softmax_cross_entropy_with_logits":
        return name, _softmax_v1(call, alias)
    if name in _RENAMES:
        new = _RENAMES[name]
        if new is None:
            raise NoTF2Mapping(f"{name} is not mapped by the stand-in table")
        return new, call
    _check_v2(name)
    return name, call


def reference_to_tf2(qualified_name: str) -> str:
    name = _spec_name(qualified_name)
    if not name.startswith("tf."):
        return qualified_name
    if name in _RENAMES and _RENAMES[name] is not None:
        return _RENAMES[name]
    _check_v2(name)
    return name


def _softmax_v1(call: cst.Call, alias: str) -> cst.Call:
    """TF 1's softmax_cross_entropy_with_logits took no gradient into the labels: TF 2's does, so
    the labels are wrapped in tf.stop_gradient (tf_upgrade_v2's rewrite); `dim` → `axis`."""
    args = []
    for a in call.args:
        if a.keyword is None:
            raise NoTF2Mapping("tf.nn.softmax_cross_entropy_with_logits with positional arguments")
        if a.keyword.value == "labels":
            stop = cst.Call(cst.Attribute(cst.Name(alias), cst.Name("stop_gradient")), [cst.Arg(a.value)])
            a = a.with_changes(value=stop)
        elif a.keyword.value == "dim":
            a = a.with_changes(keyword=cst.Name("axis"))
        args.append(a)
    return call.with_changes(args=args)


def _dropout(call: cst.Call) -> cst.Call:
    """`tf.nn.dropout(x, keep_prob)` → `tf.nn.dropout(x, rate=1 - keep_prob)` (TF 2's second
    argument is the drop rate)."""
    out, keep = [], None
    positional = 0
    for a in call.args:
        if a.keyword is None and not a.star:
            positional += 1
            if positional == 2:
                keep = a.value
                continue
        if a.keyword is not None and a.keyword.value == "keep_prob":
            keep = a.value
            continue
        if a.keyword is None and positional > 2:
            raise NoTF2Mapping("tf.nn.dropout with positional noise_shape/seed is not mapped")
        out.append(a)
    if keep is None:
        if any(a.keyword is not None and a.keyword.value == "rate" for a in call.args):
            return call
        raise NoTF2Mapping("tf.nn.dropout without keep_prob")
    rate = cst.BinaryOperation(cst.Integer("1"), cst.Subtract(), _paren(keep))
    out.append(cst.Arg(rate, keyword=cst.Name("rate"), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
    return call.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in out])


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Call, cst.Subscript)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

"""Exact TF 2 twins of TF 1.x layers whose math or weight layout Keras does differently.

Where Keras' layer is not TF 1.x's (BasicLSTMCell's fused kernel and forget_bias, GRUCell's
gate order, dynamic_rnn's sequence_length rule, slim.batch_norm's defaults), the TF2 tier emits
a small Keras layer, as plain TF 2 source in the user's file, that computes TF 1.x's math with
TF 1.x's variable names (a layer's weights have the paths TF 1 gave its variables, so a TF 1
checkpoint maps by name). One module per twin holds:

* `SOURCE`: the class, TF 2 source text (it needs only `tensorflow as tf`, and `IMPORTS`);
* `TF1`: the TF 1.x constructs it replaces (canonical qualified names, as `codemods.tf2._base`
  spells them: `tensorflow.nn.rnn_cell.BasicLSTMCell`, `slim.batch_norm`);
* `PARAMS`: each TF 1 parameter in signature order and what becomes of it;
* `KIND`: "cell" (an object), "rnn"/"layer" (an object made once, called in the step).

    from codemods.tf2 import twins
    made = twins.instantiate("tensorflow.nn.dynamic_rnn", call)   # a libcst Call of TF 1
    made.construct   # DynamicRNN(cell, name="rnn")        → state, created once
    made.call        # layer(x, sequence_length=lengths)   → in the step (func: the layer's name)
    twins.source([made.twin.CLASS])                        # the classes to write into the file

`TwinUnavailable(reason)` when the call uses what no twin reproduces. Never imports TensorFlow;
tests/test_twins.py runs each TF 1 construct (graph mode) and its twin (eager) from the same
weights and inputs and compares outputs, states and gradients.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple, Optional

import libcst as cst

from codemods.tf2._base import code
from codemods.tf2.call_args import keyword_arg, with_commas
from codemods.tf2.twins import (basic_lstm_cell, basic_rnn_cell, bidirectional_dynamic_rnn, dropout_wrapper,
                                dynamic_rnn, gru_cell, layers_batch_norm, lstm_cell, lstm_state_tuple, multi_rnn_cell,
                                slim_batch_norm,
                                static_rnn)

MODULES = (lstm_state_tuple, basic_lstm_cell, basic_rnn_cell, lstm_cell, gru_cell, dropout_wrapper, multi_rnn_cell,
           dynamic_rnn, static_rnn, bidirectional_dynamic_rnn, slim_batch_norm, layers_batch_norm)
BY_CLASS = {m.CLASS: m for m in MODULES}
TWINS = {name: m for m in MODULES if hasattr(m, "PARAMS") for name in m.TF1}


class TwinUnavailable(Exception):
    """The TF 1 call uses something no twin reproduces exactly (`reason`: one line)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Made(NamedTuple):
    twin: object                      # the twin's module (CLASS, SOURCE, ...)
    construct: cst.Call               # the layer object, created once: `DynamicRNN(cell, name="rnn")`
    call: Optional[cst.Call]          # its call in the step (func `layer`), or None for a cell


def canonical(qualified: str) -> str:
    for old, new in (("tensorflow.compat.v1.", "tensorflow."), ("tensorflow.contrib.slim.", "slim."),
                     ("tf_slim.", "slim."), ("tf.", "tensorflow.")):
        if qualified.startswith(old):
            return new + qualified[len(old):]
    return qualified


def lookup(qualified: str):
    """The twin module for a TF 1.x construct, or None."""
    return TWINS.get(canonical(qualified))


def source(classes: Iterable[str]) -> str:
    """TF 2 source of the given twin classes and what they need, dependencies first."""
    order: list = []

    def add(module) -> None:
        for need in module.NEEDS:
            add(_module(need))
        if module not in order:
            order.append(module)

    for name in classes:
        add(BY_CLASS[name])
    return "\n\n".join(m.SOURCE.rstrip("\n") + "\n" for m in order)


def imports(classes: Iterable[str]) -> list:
    """Modules besides `tensorflow` the source of these classes imports (`collections`)."""
    needed: set = set()
    for name in classes:
        stack = [BY_CLASS[name]]
        while stack:
            module = stack.pop()
            needed |= set(getattr(module, "IMPORTS", ()))
            stack += [_module(n) for n in module.NEEDS]
    return sorted(needed)


def _module(short: str):
    return next(m for m in MODULES if m.__name__.rsplit(".", 1)[1] == short)


def instantiate(qualified: str, call: cst.Call, name: Optional[str] = None) -> Made:
    """The twin's constructor (and per-step call) for TF 1's `qualified(call.args)`.

    `name` overrides the layer name (the translator's TF 1 name for it, e.g. `basic_lstm_cell_1`);
    argument values are the user's expressions, which the translator converts as any other."""
    twin = lookup(qualified)
    if twin is None:
        raise TwinUnavailable(f"{qualified}: no TF 2 twin")
    bound = _bind(twin, call)
    init, step, layer_name = [], [], None
    for param, rule in twin.PARAMS:
        value = bound.get(param)
        if value is None:
            continue
        role = rule if isinstance(rule, str) else rule[0]
        if role in ("pass", "init"):
            init.append((param, value))
        elif role == "call":
            step.append((param, value))
        elif role == "rename":
            init.append((rule[1], value))
        elif role == "rename_call":
            step.append((rule[1], value))
        elif role == "name":
            layer_name = value
        elif role == "drop":
            continue
        elif not _allowed(role, rule, value):
            raise TwinUnavailable(f"{qualified}({param}={code(value)}): {rule[-1]}")
    if twin.KIND == "cell" and any(p == "name" for p, _ in init):
        layer_name = dict(init).pop("name")
        init = [(p, v) for p, v in init if p != "name"]
    # positional as in TF 1: a cell's first argument (num_units, cells), an rnn's cell(s)
    positional = {"cell": {init[0][0]} if init else set(), "rnn": {"cell", "cell_fw", "cell_bw"}}.get(twin.KIND, set())
    args = [cst.Arg(value=v) if p in positional else keyword_arg(p, v) for p, v in init]
    if name is not None:
        args.append(keyword_arg("name", cst.SimpleString(repr(name))))
    elif layer_name is not None:
        args.append(keyword_arg("name", layer_name))
    construct = cst.Call(func=cst.Name(twin.CLASS), args=with_commas(args))
    if twin.KIND == "cell":
        return Made(twin, construct, None)
    step_args = [cst.Arg(value=v) if i == 0 else keyword_arg(p, v) for i, (p, v) in enumerate(step)]
    return Made(twin, construct, cst.Call(func=cst.Name("layer"), args=with_commas(step_args)))


def _bind(twin, call: cst.Call) -> dict:
    params = [p for p, _ in twin.PARAMS]
    bound: dict = {}
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        raise TwinUnavailable(f"{twin.CLASS}: *args / **kwargs cannot be checked")
    if len(positional) > len(params):
        raise TwinUnavailable(f"{twin.CLASS}: more positional arguments than TF 1 took")
    for a, param in zip(positional, params):
        bound[param] = a.value
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value not in params:
                raise TwinUnavailable(f"{twin.TF1[0]}: argument `{a.keyword.value}` is not one TF 1 took")
            bound[a.keyword.value] = a.value
    return bound


def _allowed(role: str, rule: tuple, value: cst.BaseExpression) -> bool:
    text = code(value)
    if role == "only":
        return text == rule[1] or (isinstance(value, cst.SimpleString) and repr(value.evaluated_value) == rule[1])
    if role == "only_float32":
        return text in ("tf.float32", "tensorflow.float32", "'float32'", '"float32"', "None") or \
            text.endswith(".float32")
    if role == "only_not_false":
        return text != "False"
    return False

"""What the TF2 tier decides for one TF 1.x symbol, read from the tables the translator itself uses.

    from codemods.tf2.coverage import decide
    decide("tf.nn.relu")            # Decision("kept", "tf.nn.relu", ...)
    decide("tf.train.AdamOptimizer") # Decision("converter", "optimizers", ...)

The answer is the one the interpreter gives a call of the symbol (a constant: a use of it), with
no arguments: `constructs.CALLS` / `REFERENCES` first, then `ops.route` (flags, host utilities,
modules of state with no row, plain ops) and TensorFlow's upgrade spec (`api_changes`). A
decision is one of FORMS; a call's own arguments can still refuse it (a removed argument, a
`keep_prob` that is not a number), which the per-call checks say at the call. Never imports
TensorFlow. `tools/api_coverage.py` turns the answers into docs/api-coverage.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from codemods.tf2 import constructs, flags
from codemods.tf2.api_changes import NoTF2Mapping, reference_to_tf2, to_tf2
from codemods.tf2.ops import UNMAPPED_REASON, Route, route

# The forms, in the order the table shows them.
FORMS = {
    "converter": "native TF 2, written by a construct converter of the TF2 tier (its module named)",
    "mapped": "native TF 2: TensorFlow's upgrade spec maps it to a TF 2 call with the same meaning",
    "kept": "its own spelling, which means the same in TF 2 (eager and in tf.function)",
    "model mapping": "kept in its TF 1.x spelling inside a Keras layer (track_tf1_style_variables)",
    "refused": "refused, with a reason (TF 2 has nothing with that meaning, or the spec's TF 2 call differs)",
    "undecided": "refused by the fallback: under a module of state or session machinery, with no row yet",
}
DECIDED = ("converter", "mapped", "kept", "model mapping", "refused")


@dataclass(frozen=True)
class Decision:
    form: str     # a key of FORMS
    detail: str   # the converter's module, the TF 2 name, or the reason


def _canonical(name: str) -> str:
    """`tf.nn.relu` / `tf.compat.v1.nn.relu` → `tensorflow.nn.relu`, the translator's qualified name."""
    for prefix in ("tf.compat.v1.", "tensorflow.compat.v1.", "tf.", "tensorflow."):
        if name.startswith(prefix):
            return "tensorflow." + name[len(prefix):]
    return name


def _converter(handler) -> str:
    return getattr(handler, "__module__", "constructs").rsplit(".", 1)[-1]


def _through_spec(short: str, called: bool) -> Decision:
    try:
        if called:
            new, _ = to_tf2(short, cst.Call(cst.Name("f")))
        else:
            new = reference_to_tf2(short)
    except NoTF2Mapping as exc:
        return Decision("refused", exc.reason)
    kept = new in (short, "tf.compat.v1." + short[len("tf."):])  # its own spelling (KEPT_V1_OPS: under compat.v1)
    return Decision("kept", new) if kept else Decision("mapped", new)


def decide(name: str, called: bool = True) -> Decision:
    """The TF2 tier's decision for the TF 1.x symbol `name` (`tf.X`), called or used as a value."""
    q = _canonical(name)
    short = "tf." + q[len("tensorflow."):]
    if not called:
        if q in constructs.REFERENCES:
            return Decision("converter", "constructs")
        if flags.is_flags(q):
            return Decision("converter", "flags")
        return _through_spec(short, called=False)
    handler = constructs.CALLS.get(q)
    if handler is not None:
        return Decision("converter", _converter(handler))
    way = route(q)
    if way == Route.FLAGS:
        return Decision("converter", "flags")
    if way == Route.UNMAPPED:
        return Decision("undecided", UNMAPPED_REASON.format(name=short))
    return _through_spec(short, called=True)


__all__ = ["DECIDED", "Decision", "FORMS", "decide"]

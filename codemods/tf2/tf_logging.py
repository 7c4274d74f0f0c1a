"""`tf.logging` (TF 1.x) → TensorFlow's Python logger, which `tf.logging` wrapped.

TF 1.15's `tensorflow/python/platform/tf_logging.py` (TF 2.21 still ships it as
`tf.compat.v1.logging`) defines each function as one call on `get_logger()`, the `tensorflow`
Python logger that TF 2 returns from `tf.get_logger()`:

    info(msg, *args, **kwargs)     get_logger().info(msg, *args, **kwargs)
    warn / warning                 get_logger().warning(...)
    debug, error, fatal, log       get_logger().<same name>(...)
    vlog(level, msg, *args)        get_logger().log(level, msg, *args)
    set_verbosity(v)               get_logger().setLevel(v)
    get_verbosity()                get_logger().getEffectiveLevel()

and its levels are Python's: DEBUG 10, INFO 20, WARN 30, ERROR 40, FATAL 50, written as those
numbers (TF 2 has no names for them, and the output imports only what the script imported).
`log_every_n`, `log_first_n`, `log_if`, `flush` and `TaskLevelStatusMessage` keep per-call state
or print otherwise: they stay refused by the upgrade spec. A call given graph values is refused:
TF 1.x logged the symbolic tensor, TF 2 would log its value.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2.model import Other, OtherKind

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite, Evaluation

METHODS = {"info": "info", "warn": "warning", "warning": "warning", "debug": "debug", "error": "error",
           "fatal": "fatal", "log": "log", "vlog": "log", "set_verbosity": "setLevel",
           "get_verbosity": "getEffectiveLevel"}
LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "FATAL": 50}
MODULE = "tensorflow.logging"


def call(site: "CallSite"):
    function = site.qname.rsplit(".", 1)[-1]
    if any(a.star for a in site.node.args):
        site.refuse(f"tf.logging.{function} is called with *args/**kwargs: not read")
    if any(site.ev.value_of(a.value).graph for a in site.node.args):
        site.refuse(f"tf.logging.{function} is given graph values: TF 1.x logged the symbolic tensor, TF 2 would "
                    "log its value")
    logger = cst.Call(func=site.tr.tf("tensorflow.get_logger"))
    node = site.node.with_changes(func=cst.Attribute(value=logger, attr=cst.Name(METHODS[function])))
    return Other(OtherKind.HOST_CALL), node


def level(ev: "Evaluation", av, node: cst.BaseExpression) -> cst.BaseExpression:
    return cst.Integer(str(LEVELS[av.qname.rsplit(".", 1)[-1]]))


CALLS = {f"{MODULE}.{name}": call for name in METHODS}
REFERENCES = {f"{MODULE}.{name}": level for name in LEVELS}

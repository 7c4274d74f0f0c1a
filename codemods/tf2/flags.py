"""Command-line flags and the entry point (TF 1.x) → absl, which TF 1.x wrapped.

`tf.app.flags` / `tf.flags` were absl's `flags` with TF's keyword names (`flag_name`,
`default_value`, `docstring`); `tf.app.run(main)` was `absl.app.run(main)` (parse the flags,
call `main(argv)`). TF 2 has neither; the output imports them from absl (a TensorFlow
dependency) and uses absl's keyword names. A flag named like one of absl.logging's (`log_dir`,
`v`, ...: absl.logging defines them, and TF 2 imports it) drops absl.logging's first, as the
compat tier's `absl_flags` rule does, so the script's own takes the name as on TF 1.x.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.absl_flags import ABSL_LOGGING_FLAGS, guard
from codemods.tf2 import emit
from codemods.tf2.model import HOST, Func, Other, OtherKind
from codemods.tf2.names import FLAG_MODULES

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite, Evaluation

PREFIXES = FLAG_MODULES
KEYWORDS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def is_flags(qname: str) -> bool:
    return any(qname == p or qname.startswith(p + ".") for p in PREFIXES)


def _module(tr) -> str:
    return tr.absl("flags")


def _member(qname: str) -> str:
    for p in PREFIXES:
        if qname.startswith(p + "."):
            return qname[len(p) + 1:]
    return ""


def reference(ev: "Evaluation", qname: str) -> cst.BaseExpression:
    """`tf.app.flags.FLAGS` → `flags.FLAGS`; `tf.app.flags` → `flags`."""
    member = _member(qname)
    node: cst.BaseExpression = cst.Name(_module(ev.tr))
    for part in member.split(".") if member else ():
        node = cst.Attribute(node, cst.Name(part))
    return node


def call(site: "CallSite"):
    member = _member(site.qname)
    if member.startswith("FLAGS.") and not member.split(".")[1].startswith("_"):  # FLAGS.x.split(",")
        return HOST, site.node.with_changes(func=reference(site.ev, site.qname))
    if not member.startswith(("DEFINE_", "mark_flag_as_required")):
        site.refuse(f"`{site.qname.replace('tensorflow.', 'tf.')}` is not converted")
    args = [a.with_changes(keyword=cst.Name(KEYWORDS[a.keyword.value]))
            if a.keyword is not None and a.keyword.value in KEYWORDS else a for a in site.node.args]
    site.tr.note("tf.app.flags → absl's flags (what TF 1.x's flags were)")
    name = next((a.value for a in args if a.keyword is not None and a.keyword.value == "name"),
                args[0].value if args and args[0].keyword is None else None)
    if member.startswith("DEFINE_") and isinstance(name, cst.SimpleString) and \
            name.evaluated_value in ABSL_LOGGING_FLAGS:
        site.tr.pending.append(cst.parse_statement(guard(_module(site.tr), name.evaluated_value)))
        site.tr.note(f'flag "{name.evaluated_value}": absl.logging defines it too; its flag is dropped first, so '
                     "the script's own takes the name, as on TF 1.x")
    return HOST, emit.with_args(emit.call(reference(site.ev, site.qname)), args)


def run(site: "CallSite"):
    """`tf.app.run(main=None, argv=None)` → `app.run(main)` (absl), main defaulting to `main`."""
    tr = site.tr
    site.only({"main", "argv"}, 2)
    main, main_av = site.arg(0, "main")
    argv, _ = site.arg(1, "argv")
    if main is None:
        main_av = tr.env.get("main")
        main = cst.Name("main")
    if not isinstance(main_av, Func):
        site.refuse("tf.app.run() without a function `main` of the script")
    tr.functions.walk_program(main_av.node)
    tr.note("tf.app.run() → absl's app.run(main) (parses the flags, calls main(argv))")
    app = cst.Name(tr.absl("app"))
    args = [cst.Arg(main)] + ([emit.keyword("argv", argv)] if argv is not None else [])
    return Other(OtherKind.HOST_CALL), emit.with_args(emit.call(cst.Attribute(app, cst.Name("run"))), args)


CALLS = {"tensorflow.app.run": run}
__all__ = ["CALLS", "is_flags", "reference", "call", "HOST"]

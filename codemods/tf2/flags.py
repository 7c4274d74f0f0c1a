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
from codemods.tf2.syntax import closed_under_calls, walk_nodes

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


def parse_before_first_read(tr, out: list) -> list:
    """The module's statements `out` (TF 2), with absl's flags parsed before the first one that reads them.

    TF 1.x's `tf.app.flags.FLAGS` parsed the command line at its first read (`_FlagValuesWrapper`:
    `FLAGS(sys.argv)` unless parsed); absl's FLAGS raise `UnparsedFlagAccessError` until `app.run` or a
    call parses them. A module-level statement that reads a flag before `app.run` (`dtype = data_type()`,
    a function reading `FLAGS.use_fp16`) gets that parse before it, as TF 1.x made it."""
    local = tr.emitted.get("absl:flags")
    if local is None:
        return out
    flag_values = {t.target.value for st in out if isinstance(st, cst.SimpleStatementLine)  # `FLAGS = flags.FLAGS`
                   for small in st.body if isinstance(small, cst.Assign) and _is_flag_values(small.value, local)
                   for t in small.targets if isinstance(t.target, cst.Name)}

    def reads(node, found) -> bool:
        for n in walk_nodes(node):
            if isinstance(n, cst.Attribute) and not _is_flag_values(n, local) and not _own(n.attr.value) and (
                    _is_flag_values(n.value, local) or isinstance(n.value, cst.Name) and n.value.value in flag_values):
                return True
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in found:
                return True
        return False

    defs = {st.name.value: st for st in out if isinstance(st, (cst.FunctionDef, cst.ClassDef))}
    readers = closed_under_calls(defs, reads)
    for i, st in enumerate(out):
        if not isinstance(st, (cst.FunctionDef, cst.ClassDef)) and reads(st, readers):
            argv = cst.Attribute(cst.Name(tr.module_name("sys")), cst.Name("argv"))
            parse = emit.stmt("if not {f}.is_parsed():\n    {f}({argv})", f=_flag_values(local), argv=argv)
            parse = emit.with_comment(parse.with_changes(leading_lines=st.leading_lines),
                                      "TF 1.x's FLAGS parsed the command line at their first read; absl's raise "
                                      "until parsed")
            tr.note("a flag read before app.run → absl's FLAGS parsed there first, as TF 1.x's parsed themselves at "
                    "their first read")
            return [*out[:i], parse, st.with_changes(leading_lines=[]), *out[i + 1:]]
    return out


# absl's FlagValues' own members: reading one is no flag read (TF 1.x's wrapper parsed only for flags, which its
# `__getattr__` reached after Python's lookup failed)
FLAG_VALUES_MEMBERS = frozenset({
    "append_flag_values", "append_flags_into_file", "find_module_defining_flag", "find_module_id_defining_flag",
    "flag_values_dict", "flags_by_module_dict", "flags_by_module_id_dict", "flags_into_string", "get_flag_value",
    "get_flags_for_module", "get_help", "get_key_flags_for_module", "is_gnu_getopt", "is_parsed",
    "key_flags_by_module_dict", "main_module_help", "mark_as_parsed", "module_help", "read_flags_from_files",
    "register_flag_by_module", "register_flag_by_module_id", "register_key_flag_for_module", "remove_flag_values",
    "set_default", "set_gnu_getopt", "unparse_flags", "validate_all_flags", "write_help_in_xml_format"})


def _own(attr: str) -> bool:
    return attr in FLAG_VALUES_MEMBERS or attr.startswith("_")


def _flag_values(local: str) -> cst.Attribute:
    return cst.Attribute(cst.Name(local), cst.Name("FLAGS"))


def _is_flag_values(node, local: str) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "FLAGS" and isinstance(node.value, cst.Name) \
        and node.value.value == local


CALLS = {"tensorflow.app.run": run}
__all__ = ["CALLS", "is_flags", "parse_before_first_read", "reference", "call", "HOST"]

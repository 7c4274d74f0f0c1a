"""A flag a TF 1.x script defines under a name absl.logging already took: the script's wins.

absl.logging, which TF 2 imports, defines `--log_dir`, `--logtostderr`, `-v`/`--verbosity` and
a few more. Scripts of the time when `tf.app.flags` was TensorFlow's own parser define such
names themselves (`tf.app.flags.DEFINE_string("log_dir", "./logs", ...)`) and stop on TF 2.21
with "DuplicateFlagError: The flag 'log_dir' is defined twice". Before each such definition at
module level this rule puts

    if tf.app.flags.FLAGS.find_module_defining_flag("log_dir") == "absl.logging": delattr(tf.app.flags.FLAGS, "log_dir")

through the same flags module the definition uses, so absl.logging's flag is dropped and the
script's own takes its name, as `tf1clip run` does (`tf1clip/v1/flags.py`). absl.logging reads
its flag only to place log files when asked to (`use_absl_log_file`), which TF never does. A
definition inside a function or class is reported for a human.
"""
from __future__ import annotations

import ast
from codemods.command import command_attribute
from codemods.nodes import Reference
from codemods.rule import Invalid, Rule, Valid

# The flags absl.logging defines (absl 2.x; a name and its short name).
ABSL_LOGGING_FLAGS = frozenset({"alsologtostderr", "log_dir", "logger_levels", "logtostderr", "showprefixforinfo",
                                "stderrthreshold", "v", "verbosity"})
_FLAGS_MODULES = ("tensorflow.compat.v1.app.flags", "tensorflow.compat.v1.flags", "tensorflow.app.flags",
                  "tensorflow.flags")
_OWNER = "absl.logging"


def _absl_name(call: ast.Call):
    """The flag name a DEFINE call gives, when absl.logging defines it too (else None)."""
    name = call.args[0] if call.args else None
    return name.value if isinstance(name, ast.Constant) and name.value in ABSL_LOGGING_FLAGS else None


def guard(owner: str, name: str) -> str:
    """The statement that drops absl.logging's flag `name` from `owner`.FLAGS (a flags module)."""
    return (f'if {owner}.FLAGS.find_module_defining_flag("{name}") == "{_OWNER}": '
            f'delattr({owner}.FLAGS, "{name}")')


class AbslFlags(Rule):
    DESCRIPTION = "Let a TF 1.x script's flag take a name absl.logging defined (log_dir, v, ...)."
    RULE = "absl_flags"
    TRIGGERS = ("DEFINE",)

    def __init__(self, run):
        super().__init__(run)
        self.defines: list = []        # (Stmt, the DEFINE ast.Call, flag name, its flags module as the output spells it)
        self.aliases: set = set()      # module-level names assigned a flags module

    def visit_reference(self, ref: Reference) -> None:
        qname = self.run.final_qname(ref)
        if qname is None:
            return
        module, _, function = qname.rpartition(".")
        if module in _FLAGS_MODULES and function.startswith("DEFINE"):
            self._define(ref, ref.node, self._final_owner(ref))
        elif qname in _FLAGS_MODULES:
            self._alias(ref)

    def _alias(self, ref: Reference) -> None:
        """`flags = tf.app.flags` at module level: `flags.DEFINE_x(...)` defines through it."""
        stmt = ref.stmt.node
        if ref.stmt.parent is None and isinstance(stmt, ast.Assign) and stmt.value is ref.node and \
                len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self.aliases.add(stmt.targets[0].id)

    def _final_owner(self, ref: Reference) -> str:
        """The flags module of `ref` (a DEFINE function) as the output spells it."""
        edit = self.run.edit_of(ref)
        text = ref.text if edit is None else ".".join((edit.text, *ref.parts[edit.parts:]))
        return text.rpartition(".")[0]

    def _define(self, ref: Reference, callee: ast.expr, owner: str) -> None:
        call = self.file.parent(callee, ref.stmt)
        if isinstance(call, ast.Call) and call.func is callee and _absl_name(call):
            self.defines.append((ref.stmt, call, _absl_name(call), owner))

    def leave_module(self, layout) -> None:
        self._aliased_defines()
        for stmt, call, name, owner in self.defines:
            line = guard(owner, name)
            if line in self.file.text:
                continue  # migrated already
            if stmt.parent is not None:
                self.note_human(call.lineno, f'flag "{name}": absl.logging (imported by TF 2) defines it too, and '
                                             f"TF 2.21 stops on the second definition; put `{line}` before it")
                continue
            anchor = next(e for e in layout.body if e.stmt is stmt)
            layout.insert_before(anchor, [line], self.RULE)
            self.note_change(call.lineno, f'flag "{name}": absl.logging (imported by TF 2) defines it too; its flag '
                                          "is dropped first, so this file's own takes the name, as on TF 1.x")

    def _aliased_defines(self) -> None:
        """`flags.DEFINE_x("log_dir", ...)` through a module-level `flags = tf.app.flags`."""
        if not self.aliases:
            return
        for stmt in self.file.stmts.values():
            node = stmt.node
            call = node.value if isinstance(node, ast.Expr) else None
            callee = call.func if isinstance(call, ast.Call) else None
            if isinstance(callee, ast.Attribute) and callee.attr.startswith("DEFINE") and \
                    isinstance(callee.value, ast.Name) and callee.value.id in self.aliases and _absl_name(call) \
                    and len(self.file.lookup(callee.value.id, self.file.module_scope)) == 1:
                self.defines.append((stmt, call, _absl_name(call), callee.value.id))
        self.defines.sort(key=lambda d: d[1].lineno)

    VALID = [
        Valid("import tensorflow.compat.v1 as tf\n\ntf.app.flags.DEFINE_string('data_dir', 'd', 'data')\n"
              "x = tf.placeholder(tf.float32)\n"),
        # migrated already
        Valid("import tensorflow.compat.v1 as tf\n\n"
              'if tf.app.flags.FLAGS.find_module_defining_flag("log_dir") == "absl.logging": '
              'delattr(tf.app.flags.FLAGS, "log_dir")\n'
              "tf.app.flags.DEFINE_string('log_dir', './logs', 'logs')\nx = tf.placeholder(tf.float32)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n\n# where to log\ntf.app.flags.DEFINE_string('log_dir', './logs', 'logs')\n"
            "x = tf.placeholder(tf.float32)\n",
            "import tensorflow as tf\n\n# where to log\n"
            'if tf.app.flags.FLAGS.find_module_defining_flag("log_dir") == "absl.logging": '
            'delattr(tf.app.flags.FLAGS, "log_dir")\n'
            "tf.app.flags.DEFINE_string('log_dir', './logs', 'logs')\nx = tf.placeholder(tf.float32)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\nflags = tf.flags\nflags.DEFINE_integer('v', 1, 'verbosity')\n"
            "x = tf.placeholder(tf.float32)\n",
            "import tensorflow as tf\n\nflags = tf.flags\n"
            'if flags.FLAGS.find_module_defining_flag("v") == "absl.logging": delattr(flags.FLAGS, "v")\n'
            "flags.DEFINE_integer('v', 1, 'verbosity')\nx = tf.placeholder(tf.float32)\n",
        ),
    ]


__getattr__ = command_attribute(AbslFlags)  # AbslFlagsCommand, for python -m libcst.tool codemod

"""Give the sessions of a file that pins ops to devices `allow_soft_placement=True`, visibly.

`with tf.device('/gpu:0'):` stops TF 2.21 with "Cannot assign a device for operation" on a
machine without that GPU; TF 1.x users ran such scripts elsewhere with soft placement (which
`tf1clip run` turns on by itself). In a file that pins devices (a `tf.device(...)` that is not
a CPU device written out), each session it makes (`tf.Session`, `tf.InteractiveSession`,
`tf.train.MonitoredTrainingSession`, the session creators) gets it in the file, where the
user sees it: `config=tf.ConfigProto(allow_soft_placement=True)` when it has no config, the
keyword added to a `tf.ConfigProto(...)` it is given or that its `config` name is bound to
once. A config made some other way is left and reported for a human. The numbers do not
change: soft placement only moves ops whose pinned device is missing or has no kernel.
"""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from codemods._usage import TF, V1
from codemods.command import command_attribute
from codemods.nodes import Reference, one_string_token
from codemods.rule import Invalid, Rule, Valid

# Session makers (relative to tensorflow.compat.v1) -> the position of their `config` argument.
SESSIONS = {
    "Session": 2, "InteractiveSession": 2, "train.MonitoredTrainingSession": 9,
    "train.SingularMonitoredSession": 3, "train.ChiefSessionCreator": 2, "train.WorkerSessionCreator": 2,
}
_SOFT = "allow_soft_placement"


def _relative(qname: Optional[str]) -> Optional[str]:
    for prefix in (V1 + ".", TF + ".", TF + ".compat.v1."):
        if qname and qname.startswith(prefix):
            rel = qname[len(prefix):]
            return rel[len("compat.v1."):] if rel.startswith("compat.v1.") else rel
    return None


def _keyword(call: ast.Call, name: str) -> Optional[ast.keyword]:
    return next((k for k in call.keywords if k.arg == name), None)


def _appending(name: str, code: str):
    """A NodeEdit maker: the call with `name=code` as its last argument."""
    def make(call: cst.Call) -> cst.Call:
        arg = cst.Arg(keyword=cst.Name(name), value=cst.parse_expression(code),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
        args = list(call.args)
        if args and not isinstance(args[-1].comma, cst.Comma):
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return call.with_changes(args=[*args, arg])

    return make


class SoftPlacement(Rule):
    DESCRIPTION = "Add allow_soft_placement=True to the sessions of files that pin ops to devices."
    RULE = "soft_placement"
    TRIGGERS = ("device",)

    def __init__(self, run):
        super().__init__(run)
        self.calls: list = []          # (Reference, ast.Call, relative name) of the calls of TF names
        self.refs: dict = {}           # id(ast node) -> Reference, for the callees of ConfigProto calls

    def visit_reference(self, ref: Reference) -> None:
        node = ref.node
        parent = self.file.parent(node, ref.stmt)
        if isinstance(parent, ast.Call) and parent.func is node:
            rel = _relative(self.run.final_qname(ref))
            if rel is not None:
                self.calls.append((ref, parent, rel))
                self.refs[id(node)] = ref

    def leave_module(self, layout) -> None:
        if layout.final_usage().verdict not in ("tf1", "tf1-eager"):  # the output's, as its own pass saw it
            return
        pins = [(ref.line, self.file.source(call.args[0])) for ref, call, rel in self.calls
                if rel == "device" and _pins_a_device(self.file, call)]
        sessions = [(ref, call, rel) for ref, call, rel in self.calls if rel in SESSIONS]
        if not pins:
            return
        pin_line, pin = pins[0]
        why = (f"this file pins ops to devices (tf.device({pin}), line {pin_line}): TF 2.21 stops with "
               "'Cannot assign a device for operation' where that device is missing; TF 1.x users ran such "
               "scripts with soft placement")
        if not sessions:
            if any(_literal_accelerator(p) for _, p in pins):
                self.note_human(pin_line, f"tf.device({pin}) pins ops, but this file makes no session: give the "
                                          f"session that runs them config=tf.ConfigProto({_SOFT}=True) to run "
                                          "where that device is missing")
            return
        softened: set = set()
        for ref, call, rel in sessions:
            self._soften(ref, call, rel, why, softened)

    def _soften(self, ref: Reference, call: ast.Call, rel: str, why: str, softened: set) -> None:
        config = _keyword(call, "config")
        value = config.value if config is not None else None
        starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        if config is None and starred:
            self.note_human(ref.line, f"{rel}(*args/**kwargs): make sure its config has {_SOFT}=True; {why}")
            return
        if config is None and len(call.args) > SESSIONS[rel]:
            value = call.args[SESSIONS[rel]]
        if value is None:
            proto = self._config_proto(ref)
            if proto is None:
                self.note_human(ref.line, f"give this session config=tf.ConfigProto({_SOFT}=True); {why}")
                return
            self.run.transform(self, call, ref.stmt, _appending("config", f"{proto}({_SOFT}=True)"))
            self.note_change(ref.line, f"added config={proto}({_SOFT}=True) to {rel}(...): {why}")
            return
        found = self._proto_of(value, ref)
        if found is None:
            if not self._sets_soft_later(value):
                self.note_human(ref.line, f"set {_SOFT}=True on this session's config; {why}")
            return
        proto_call, proto_stmt = found
        existing = _keyword(proto_call, _SOFT)
        if existing is not None:
            if isinstance(existing.value, ast.Constant) and existing.value.value is False:
                self.note_human(proto_call.lineno, f"{_SOFT}=False: {why}")
            return
        if id(proto_call) not in softened:
            softened.add(id(proto_call))
            self.run.transform(self, proto_call, proto_stmt, _appending(_SOFT, "True"))
            self.note_change(proto_call.lineno, f"added {_SOFT}=True to the ConfigProto of {rel}(...) "
                                                f"(line {ref.line}): {why}")

    def _config_proto(self, ref: Reference) -> Optional[str]:
        """`tf.ConfigProto` through the root the session call is written with (or a v1 alias)."""
        if ref.parts:
            finals = {self.run.bound(b) for b in ref.bindings}
            qname = finals.pop() if len(finals) == 1 else None
            if qname == V1:
                return f"{ref.root}.ConfigProto"
            if qname == TF:
                return f"{ref.root}.compat.v1.ConfigProto"
        for module, suffix in ((V1, ".ConfigProto"), (TF, ".compat.v1.ConfigProto")):
            alias = self.run.visible_alias(ref, module)
            if alias is not None:
                return alias + suffix
        return None

    def _proto_of(self, value: ast.expr, ref: Reference) -> Optional[tuple]:
        """(the ConfigProto(...) call, its Stmt): `value` itself, or what its name is bound to by
        its one assignment."""
        if isinstance(value, ast.Call):
            callee = self.refs.get(id(value.func))
            rel = _relative(self.run.final_qname(callee)) if callee is not None else None
            return (value, callee.stmt) if (rel or "").endswith("ConfigProto") else None
        if not isinstance(value, ast.Name):
            return None
        bindings = self.file.lookup(value.id, ref.scope)
        if len(bindings) != 1:
            return None
        node = bindings[0].stmt
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets):
            return self._proto_of(node.value, ref)
        return None

    def _sets_soft_later(self, value: ast.expr) -> bool:
        """`config.allow_soft_placement = ...` somewhere in the file, for the name `value`."""
        if not isinstance(value, ast.Name):
            return False
        return any(isinstance(t, ast.Attribute) and t.attr == _SOFT and isinstance(t.value, ast.Name)
                   and t.value.id == value.id for stmt in self.file.assignments() for t in stmt.targets)

    VALID = [
        Valid("import tensorflow.compat.v1 as tf\n\nwith tf.device('/cpu:0'):\n    x = tf.placeholder(tf.float32)\n"
              "sess = tf.Session()\n"),
        Valid("import tensorflow.compat.v1 as tf\n\nx = tf.placeholder(tf.float32)\nsess = tf.Session()\n"),
        Valid("import tensorflow.compat.v1 as tf\n\nwith tf.device('/gpu:0'):\n    x = tf.placeholder(tf.float32)\n"
              "sess = tf.Session(config=tf.ConfigProto(allow_soft_placement=True))\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow.compat.v1 as tf\n\nwith tf.device('/gpu:0'):\n    x = tf.placeholder(tf.float32)\n"
            "with tf.Session() as sess:\n    pass\n",
            "import tensorflow.compat.v1 as tf\n\nwith tf.device('/gpu:0'):\n    x = tf.placeholder(tf.float32)\n"
            "with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:\n    pass\n",
        ),
        Invalid(
            "import tensorflow.compat.v1 as tf\n\nconfig = tf.ConfigProto(log_device_placement=True)\n"
            "config.gpu_options.allow_growth = True\nwith tf.device(DEVICE):\n    x = tf.placeholder(tf.float32)\n"
            "sess = tf.Session(config=config)\n",
            "import tensorflow.compat.v1 as tf\n\nconfig = tf.ConfigProto(log_device_placement=True, allow_soft_placement=True)\n"
            "config.gpu_options.allow_growth = True\nwith tf.device(DEVICE):\n    x = tf.placeholder(tf.float32)\n"
            "sess = tf.Session(config=config)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\nwith tf.device('/device:GPU:1'):\n    x = tf.compat.v1.placeholder(tf.float32)\n"
            "sess = tf.compat.v1.train.MonitoredTrainingSession(checkpoint_dir='ckpt')\n",
            "import tensorflow as tf\n\nwith tf.device('/device:GPU:1'):\n    x = tf.compat.v1.placeholder(tf.float32)\n"
            "sess = tf.compat.v1.train.MonitoredTrainingSession(checkpoint_dir='ckpt', "
            "config=tf.compat.v1.ConfigProto(allow_soft_placement=True))\n",
        ),
    ]


def _pins_a_device(file, call: ast.Call) -> bool:
    """A first positional argument that may name an accelerator: not None, not a CPU written out."""
    if not call.args:
        return False
    value = call.args[0]
    if isinstance(value, ast.Constant) and value.value is None:
        return False
    if isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes)) and one_string_token(file.source(value)):
        return bool(value.value) and "cpu" not in str(value.value).lower()
    return True  # computed (or strings written together): may name a GPU


def _literal_accelerator(pin: str) -> bool:
    low = pin.lower()
    return pin[:1] in "'\"" and ("gpu" in low or "tpu" in low)


__getattr__ = command_attribute(SoftPlacement)  # SoftPlacementCommand, for python -m libcst.tool codemod

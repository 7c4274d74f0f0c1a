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

from typing import Optional

import libcst as cst
from libcst.metadata import Assignment, ScopeProvider

from codemods._base import Invalid, TFCommand, Valid, chain_root, walk
from codemods._usage import TF, V1, classify

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


def _keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(keyword=cst.Name(name), value=value,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _append(call: cst.Call, arg: cst.Arg) -> cst.Call:
    args = list(call.args)
    if args and not isinstance(args[-1].comma, cst.Comma):
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, arg])


class SoftPlacementCommand(TFCommand):
    DESCRIPTION = "Add allow_soft_placement=True to the sessions of files that pin ops to devices."
    RULE = "soft_placement"
    TRIGGERS = ("device",)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        usage = classify(tree, self.imported_names, self.line_of)
        if usage.verdict not in ("tf1", "tf1-eager"):
            return tree
        self._pins: list[tuple[int, str]] = []
        self._sessions: list[tuple[cst.Call, str]] = []
        self._append_to: dict[cst.Call, cst.Arg] = {}  # call -> the argument it gets
        for node in _calls(tree):
            rel = _relative(self.imported_name(node.func))
            if rel == "device" and self._pins_a_device(node):
                self._pins.append((self.line_of(node), self.module.code_for_node(node.args[0].value)))
            elif rel in SESSIONS:
                self._sessions.append((node, rel))
        if not self._pins:
            return tree
        pin_line, pin = self._pins[0]
        why = (f"this file pins ops to devices (tf.device({pin}), line {pin_line}): TF 2.21 stops with "
               "'Cannot assign a device for operation' where that device is missing; TF 1.x users ran such "
               "scripts with soft placement")
        if not self._sessions:
            if any(_literal_accelerator(p) for _, p in self._pins):
                self.note_human(pin_line, f"tf.device({pin}) pins ops, but this file makes no session: give the "
                                          f"session that runs them config=tf.ConfigProto({_SOFT}=True) to run "
                                          "where that device is missing")
            return tree
        for call, rel in self._sessions:
            self._soften(call, rel, why)
        return tree.visit(self)

    def _pins_a_device(self, call: cst.Call) -> bool:
        if not call.args or call.args[0].keyword is not None:
            return False
        value = call.args[0].value
        if isinstance(value, cst.Name) and value.value == "None":
            return False
        if isinstance(value, cst.SimpleString):
            text = value.evaluated_value
            return bool(text) and "cpu" not in str(text).lower()
        return True  # computed: may name a GPU

    def _soften(self, call: cst.Call, rel: str, why: str) -> None:
        config = _keyword(call, "config")
        positional = [a for a in call.args if a.keyword is None]
        if config is None and any(a.star for a in call.args):
            self.note_human(call, f"{rel}(*args/**kwargs): make sure its config has {_SOFT}=True; {why}")
            return
        if config is None and len(positional) > SESSIONS[rel]:
            config = positional[SESSIONS[rel]]
        if config is None:
            proto = self._config_proto(call)
            if proto is None:
                self.note_human(call, f"give this session config=tf.ConfigProto({_SOFT}=True); {why}")
                return
            self._append_to[call] = _keyword_arg("config", cst.parse_expression(f"{proto}({_SOFT}=True)"))
            self.note_change(call, f"added config={proto}({_SOFT}=True) to {rel}(...): {why}")
            return
        proto_call = self._proto_of(config.value)
        if proto_call is None:
            if not self._sets_soft_later(config.value):
                self.note_human(call, f"set {_SOFT}=True on this session's config; {why}")
            return
        existing = _keyword(proto_call, _SOFT)
        if existing is not None:
            if isinstance(existing.value, cst.Name) and existing.value.value == "False":
                self.note_human(proto_call, f"{_SOFT}=False: {why}")
            return
        if proto_call not in self._append_to:
            self._append_to[proto_call] = _keyword_arg(_SOFT, cst.Name("True"))
            self.note_change(proto_call, f"added {_SOFT}=True to the ConfigProto of {rel}(...) "
                                         f"(line {self.line_of(call)}): {why}")

    def _config_proto(self, call: cst.Call) -> Optional[str]:
        """`tf.ConfigProto` through the root the session call is written with (or a v1 alias)."""
        root = chain_root(call.func)
        qname = self.imported_name(root) if root is not None and root is not call.func else None
        if qname == V1:
            return f"{root.value}.ConfigProto"  # type: ignore[union-attr]
        if qname == TF:
            return f"{root.value}.compat.v1.ConfigProto"  # type: ignore[union-attr]
        for module, suffix in ((V1, ".ConfigProto"), (TF, ".compat.v1.ConfigProto")):
            alias = self.visible_alias(call, module)
            if alias is not None:
                return alias + suffix
        return None

    def _proto_of(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """The ConfigProto(...) call `value` is, or that its name is bound to by one assignment."""
        if isinstance(value, cst.Call):
            return value if (_relative(self.imported_name(value.func)) or "").endswith("ConfigProto") else None
        if not isinstance(value, cst.Name):
            return None
        scope = self.get_metadata(ScopeProvider, value, None)
        if scope is None:
            return None
        assignments = [a for a in scope[value.value] if isinstance(a, Assignment)]
        if len(assignments) != 1:
            return None
        target = assignments[0].node
        for stmt in _assigns(self.module):
            if any(t.target is target for t in stmt.targets) and isinstance(stmt.value, cst.Call):
                return self._proto_of(stmt.value)
        return None

    def _sets_soft_later(self, value: cst.BaseExpression) -> bool:
        """`config.allow_soft_placement = ...` somewhere in the file, for the name `value`."""
        if not isinstance(value, cst.Name):
            return False
        for stmt in _assigns(self.module):
            for target in stmt.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and t.attr.value == _SOFT and \
                        isinstance(t.value, cst.Name) and t.value.value == value.value:
                    return True
        return False

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        arg = self._append_to.get(original_node)
        return updated_node if arg is None else _append(updated_node, arg)

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


def _calls(tree: cst.CSTNode):
    return [n for n in walk(tree) if isinstance(n, cst.Call)]


def _assigns(tree: cst.CSTNode):
    return [n for n in walk(tree) if isinstance(n, cst.Assign)]


def _literal_accelerator(pin: str) -> bool:
    low = pin.lower()
    return pin[:1] in "'\"" and ("gpu" in low or "tpu" in low)

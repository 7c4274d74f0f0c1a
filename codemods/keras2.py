"""Keras 2's spellings (TF 1.13-2.10 `tf.keras`, standalone Keras 2) → Keras 3's, with the same numbers.

Keras 3, `tf.keras` on TF 2.21, rejects `Adam(lr=0.01)` ("Argument(s) not recognized"), warns
and *ignores* `decay=`, and has no `fit_generator` / `predict_generator` / `evaluate_generator`.
tf-keras (the legacy-Keras switch) is no way out in eager code: its optimizers warn and ignore
`lr=` (the default learning rate is used) and reject `decay=`. Only in graph mode (v2 behaviour
off) does tf-keras build Keras 2's own optimizer (optimizer_v2), which takes both with Keras 2's
numbers, so a TF 1.x graph file (which the compat tier runs with v2 behaviour off and the switch)
is left as it is, and the TF2 tier converts its optimizers itself (codemods/tf2/training.py).

In every other file (TF 2 code, TF 1.x eager code, no TensorFlow at all):
- `lr=x` → `learning_rate=x`;
- `decay=d` → `learning_rate=<optimizers>.schedules.InverseTimeDecay(lr, decay_steps=1, decay_rate=d)`:
  Keras 2 used lr / (1 + d * iterations), the count before the update (optimizer_v2's
  `_decayed_lr`), and Keras 3 evaluates a schedule at that same count; Keras 2's default learning
  rate where none is given;
- `m.fit_generator(g, ...)` → `m.fit(g, ...)`, `predict_generator` → `predict`,
  `evaluate_generator` → `evaluate` (Keras 3 takes a generator as `x`): positional arguments
  become keywords (their positions differ), `verbose=0` is kept as Keras 2's default for the last
  two, and the worker-pool arguments (`max_queue_size`, `workers`, `use_multiprocessing`), which
  Keras 3's methods do not take, go: batches come in the generator's order, as with one worker.
Anything else of these calls (starred arguments, more positional arguments than Keras 2 and 3
agree on) is left for a human.
"""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from codemods.command import command_attribute
from codemods.nodes import Reference
from codemods.rule import Invalid, Rule, Valid

_PACKAGES = ("tensorflow.keras.optimizers", "tensorflow.compat.v1.keras.optimizers", "tensorflow.compat.v2.keras.optimizers",
             "keras.optimizers")
# Keras 2 (optimizer_v2) default learning rate, and how many leading positional arguments Keras 2
# and Keras 3 agree on (Keras 2's next one is `name`, Keras 3's `weight_decay`).
_OPTIMIZERS = {"Adam": ("0.001", 5), "SGD": ("0.01", 3), "RMSprop": ("0.001", 5), "Adagrad": ("0.001", 3),
               "Adadelta": ("0.001", 3), "Adamax": ("0.001", 4), "Nadam": ("0.001", 4), "Ftrl": ("0.001", 5)}
# Keras 2's generator methods: the Keras 3 method, the names of the positional arguments both
# Keras 2 generations agree on, and the keywords to add where Keras 2's default differs.
_METHODS = {
    "fit_generator": ("fit", ("x", "steps_per_epoch", "epochs", "verbose", "callbacks", "validation_data",
                              "validation_steps"), ()),
    "predict_generator": ("predict", ("x", "steps", "callbacks"), (("verbose", "0"),)),
    "evaluate_generator": ("evaluate", ("x", "steps", "callbacks"), (("verbose", "0"),)),
}
_WORKERS = ("max_queue_size", "workers", "use_multiprocessing")


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def _commas(args: list, original: cst.Call) -> list:
    """`args` with a comma after each but the last, which keeps the call's own trailing comma (the
    arguments kept keep theirs: a call over several lines stays so)."""
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = original.args[-1].comma if original.args else cst.MaybeSentinel.DEFAULT
    out = [a if isinstance(a.comma, cst.Comma) else a.with_changes(comma=comma) for a in args[:-1]]
    return out + [a.with_changes(comma=last) for a in args[-1:]]


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == 0


class Keras2(Rule):
    DESCRIPTION = ("Rewrite Keras 2 spellings Keras 3 rejects or ignores (lr=, decay=, fit_generator, ...) "
                   "to Keras 3's, with the same numbers.")
    RULE = "keras2"
    TRIGGERS = ("lr", "decay", "_generator")
    ANY_FILE = True

    def _active(self) -> bool:
        """Not in TF 1.x graph code: there tf-keras builds Keras 2's own optimizer (see above)."""
        return self.usage.verdict != "tf1"

    # -- optimizers -----------------------------------------------------------------------------
    def visit_reference(self, ref: Reference) -> None:
        if not self._active() or ref.qname is None:
            return
        full = ".".join((ref.qname, *ref.parts))
        package, _, name = full.rpartition(".")
        if package not in _PACKAGES or name not in _OPTIMIZERS:
            return
        call = self.file.parent(ref.node, ref.stmt)
        if not (isinstance(call, ast.Call) and call.func is ref.node):
            return
        keywords = {k.arg: k.value for k in call.keywords}
        if "lr" not in keywords and "decay" not in keywords:
            return
        text = self.file.source(ref.node)
        default, agreed = _OPTIMIZERS[name]
        if None in keywords or any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > agreed \
                or ("lr" in keywords and "learning_rate" in keywords):
            self.note_human(ref.line, f"{text}(...): Keras 2 arguments (lr=, decay=) in a call of a shape not "
                                      "rewritten here; Keras 3 rejects lr= and ignores decay=: rewrite it by hand")
            return
        decay = keywords.get("decay")
        schedule = None
        if decay is not None and not _is_zero(decay):
            schedule = self._schedule(ref, package)
        self.run.transform(self, call, ref.stmt, lambda node: _optimizer(node, schedule, default))
        if "lr" in keywords:
            self.note_change(ref.line, f"{text}(lr=...) → learning_rate=: Keras 3 rejects lr= (tf-keras ignores it)")
        if schedule is not None:
            self.note_change(ref.line, f"{text}(decay=d) → learning_rate={schedule}(lr, decay_steps=1, "
                                       "decay_rate=d): Keras 2's lr / (1 + d * iterations); Keras 3 ignores decay=")
        elif decay is not None:
            self.note_change(ref.line, f"{text}(decay=0) dropped: Keras 2 did not decay, Keras 3 has no decay=")

    def _schedule(self, ref: Reference, package: str) -> str:
        """InverseTimeDecay as the output can spell it at `ref`."""
        if ref.parts:
            return ref.prefix_text(len(ref.parts) - 1) + ".schedules.InverseTimeDecay"
        top = package.split(".")[0]
        alias = self.run.visible_alias(ref, top)
        if alias is None:
            self.run.add_import(self, top)
            alias = top
        return alias + package[len(top):] + ".schedules.InverseTimeDecay"

    # -- generator methods ----------------------------------------------------------------------------
    def leave_references(self) -> None:
        if not self._active() or not self.usage.imports_tf and "keras" not in self.file.text:
            return
        defined = {n.name for n in ast.walk(self.file.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for node in ast.walk(self.file.tree):
            if not isinstance(node, ast.stmt):
                continue
            stmt = self.file.stmt(node)
            for call in self.file.expressions(stmt):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                        and call.func.attr in _METHODS and call.func.attr not in defined:
                    self._method(call, stmt)

    def _method(self, call: ast.Call, stmt) -> None:
        old = call.func.attr
        new, names, added = _METHODS[old]
        keywords = [k.arg for k in call.keywords]
        if None in keywords or any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(names):
            self.note_human(call.lineno, f".{old}(...): Keras 3 has no {old}; this call's arguments are not of the "
                                         f"form rewritten here: call .{new}(generator, ...) by hand")
            return
        dropped = [k for k in keywords if k in _WORKERS]
        self.run.transform(self, call, stmt, lambda node: _generator_call(node, new, names, added))
        extra = (f"; {', '.join(dropped)} dropped (Keras 3's {new} has no worker pool: batches in the "
                 "generator's order, as with one worker)") if dropped else ""
        self.note_change(call.lineno, f".{old}(...) → .{new}(...): Keras 3 takes the generator as x{extra}")

    VALID = [
        Valid("import tensorflow as tf\n\nopt = tf.keras.optimizers.Adam(learning_rate=0.01, clipvalue=1.0)\n"),
        # TF 1.x graph code: the compat tier's legacy-Keras switch runs Keras 2's own optimizer.
        Valid("import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\nopt = tf.keras.optimizers.Adam(lr=0.01)\n"),
        # Not Keras' method.
        Valid("import tensorflow as tf\n\n\ndef fit_generator(g, n):\n    return n\n\n\nmodel.fit_generator(g, 3)\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n\nopt = tf.keras.optimizers.Adam(lr=0.01, clipvalue=1.0)\n",
            "import tensorflow as tf\n\nopt = tf.keras.optimizers.Adam(learning_rate=0.01, clipvalue=1.0)\n",
        ),
        Invalid(
            "from tensorflow.keras import optimizers\n\nsgd = optimizers.SGD(0.1, decay=1e-3, momentum=0.9, nesterov=True)\n",
            "from tensorflow.keras import optimizers\n\nsgd = optimizers.SGD(optimizers.schedules.InverseTimeDecay(0.1, "
            "decay_steps=1, decay_rate=1e-3), momentum=0.9, nesterov=True)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.keras.optimizers import RMSprop\n\nopt = RMSprop(decay=0.01)\n",
            "import tensorflow as tf\nfrom tensorflow.keras.optimizers import RMSprop\n\nopt = RMSprop("
            "learning_rate=tf.keras.optimizers.schedules.InverseTimeDecay(0.001, decay_steps=1, decay_rate=0.01))\n",
        ),
        Invalid(
            "import tensorflow as tf\n\nmodel.fit_generator(batches(), 4, 2, verbose=0, workers=1)\n"
            "loss = model.evaluate_generator(batches(), steps=4)\np = model.predict_generator(batches(), 1)\n",
            "import tensorflow as tf\n\nmodel.fit(batches(), steps_per_epoch=4, epochs=2, verbose=0)\n"
            "loss = model.evaluate(batches(), steps=4, verbose=0)\np = model.predict(batches(), steps=1, verbose=0)\n",
        ),
    ]


def _optimizer(node: cst.Call, schedule: Optional[str], default: str) -> cst.Call:
    """The call with `lr=` as `learning_rate=`, and `decay=` folded into an InverseTimeDecay of it."""
    args, decay = [], None
    for a in node.args:
        name = a.keyword.value if a.keyword is not None else None
        if name == "decay":
            decay = a.value
        elif name == "lr":
            args.append(a.with_changes(keyword=cst.Name("learning_rate")))
        else:
            args.append(a)
    if schedule is not None:
        at = next((i for i, a in enumerate(args) if a.keyword is None or a.keyword.value == "learning_rate"), None)
        lr = args[at].value if at is not None else cst.Float(default)
        value = cst.parse_expression(f"{schedule}(lr, decay_steps=1, decay_rate=d)")
        value = value.with_changes(args=[value.args[0].with_changes(value=lr), value.args[1],
                                         value.args[2].with_changes(value=decay)])
        if at is not None:
            args[at] = args[at].with_changes(value=value)
        else:
            args.append(_keyword("learning_rate", value))
    return node.with_changes(args=_commas(args, node))


def _generator_call(node: cst.Call, new: str, names: tuple, added: tuple) -> cst.Call:
    args = []
    for i, a in enumerate(node.args):
        name = a.keyword.value if a.keyword is not None else None
        if name in _WORKERS:
            continue
        if name == "generator":
            a = a.with_changes(keyword=cst.Name("x"))
        elif name is None and i > 0:
            a = _keyword(names[i], a.value)
        args.append(a)
    given = {a.keyword.value for a in args if a.keyword is not None}
    args += [_keyword(k, cst.Integer(v)) for k, v in added if k not in given]
    return node.with_changes(func=node.func.with_changes(attr=cst.Name(new)), args=_commas(args, node))


__getattr__ = command_attribute(Keras2)  # Keras2Command, for python -m libcst.tool codemod

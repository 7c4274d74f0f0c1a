"""tf.contrib.* → TensorFlow core where contrib re-exported it, else the tf1clip runtime.

`tf.contrib.rnn.BasicLSTMCell` was `tf.nn.rnn_cell.BasicLSTMCell` in TF 1.15, so it becomes
`tf.compat.v1.nn.rnn_cell.BasicLSTMCell`; `tf.contrib.estimator.clip_gradients_by_norm` and
`tf.contrib.layers.optimize_loss` have no TF 2.21 counterpart and become `tf1clip...`.
The rows are data in `codemods/contrib_table.py`; tf.contrib.slim is `contrib_slim`'s.

A contrib name in neither column (`tf.contrib.rnn.NASCell`) must not stop the whole module at
import when only one branch uses it: each use becomes `_tf1clip_not_provided("<message>")`, a
small class written once after the imports whose objects raise the runtime's own one-line
message (`tf1clip.contrib.hints`, as AttributeError like the runtime's) when called or when an
attribute is read, so only the branch that uses the name stops; the contrib import goes once
nothing else needs it (a module-level `from ... import NASCell` becomes `NASCell = ...`). The output imports nothing new. Each such use is a place left for a
human. A contrib module used whole (`rnn = tf.contrib.rnn`, `f(rnn)`) keeps its import, and
is left for a human: the module then fails at import, as its input did.
"""
from __future__ import annotations

import ast

from codemods.command import command_attribute
from codemods.contrib_table import CONTRIB_ROWS, SLIM, lookup
from codemods.nodes import ImportStmt, Reference
from codemods.rule import Invalid, Valid
from codemods.table_rename import TableRenameRule
from tf1clip.contrib.hints import not_provided

STUB = "_tf1clip_not_provided"
_STUB_LINES = (
    f"class {STUB}:",
    '    """Stands for a TF 1.x name that neither TF 2.21 nor tf1clip provides: calling it or reading',
    '    an attribute of it raises (written by tf1clip migrate, rule contrib_symbols)."""',
    "",
    "    def __init__(self, message):",
    "        self.message = message",
    "",
    "    def __call__(self, *args, **kwargs):",
    "        raise AttributeError(self.message)",
    "",
    "    def __getattr__(self, name):",
    "        raise AttributeError(self.message)",
)


class ContribSymbols(TableRenameRule):
    DESCRIPTION = "Replace tf.contrib symbols by their exact TF 2.21 core name, or by the tf1clip runtime."
    RULE = "contrib_symbols"
    FAMILY = ("tensorflow.contrib",)
    TRIGGERS = ("contrib",)
    EXCLUDE = (SLIM,)

    def __init__(self, run):
        super().__init__(run)
        self.stubbed = 0
        self.first_stub = 0
        self.unmapped_aliases: list = []
        self.bound: list = []  # `NAME = _tf1clip_not_provided(...)` for module-level from-imports

    def rows_for(self) -> dict:
        return CONTRIB_ROWS

    # -- names no row maps: raise the runtime's message where reached -------------------------------
    def unmapped_import(self, imp: ImportStmt, alias, qname: str) -> None:
        self.run.remove_if_unused(self, alias)
        self.unmapped_aliases.append((imp, alias, qname))

    def unmapped_use(self, ref: Reference, full: str) -> bool:
        symbol, message = not_provided("tf." + full[len("tensorflow."):])
        if symbol is None:
            return False
        root_q = ref.qname
        links = max(len(symbol.split(".")) - len(root_q.split(".")), 0)  # parts of ref up to `symbol`
        if links > len(ref.parts) or self.file.lookup(STUB, ref.scope) and not self._ours():
            return False  # the module itself escapes (`f(rnn)`), or the file binds the name itself
        if not links:  # a from-imported name: bound to the stand-in where the module binds it
            alias = next((b.alias for b in ref.bindings if b.alias is not None), None)
            if alias is None or self.file.in_suite(alias.stmt.stmt) or alias.stmt.node not in self.file.tree.body:
                return False
            if id(alias) not in {id(a) for a, _ in self.bound}:
                self.bound.append((alias, message))
                self.run.rebind(self, alias)
        else:
            self.run.replace(self, ref, links, f"{STUB}({message!r})")
        self.stubbed += 1
        self.first_stub = self.first_stub or ref.line
        self.note_human(ref.line, f"{ref.prefix_text(links)} ({symbol}) is provided by neither TF 2.21 nor tf1clip: "
                                  f"it now raises the runtime's message where it is reached ({STUB}), the rest of the "
                                  "module runs; rewrite it by hand")
        return True

    def _ours(self) -> bool:
        return any(isinstance(s, ast.FunctionDef) and s.name == STUB for s in self.file.tree.body)

    def leave_references(self) -> None:
        for imp, alias, qname in self.unmapped_aliases:
            if self.run.will_remove(alias) and alias.binding is not None and not alias.binding.uses:
                self.note_change(imp.line, f"import of {qname} dropped: nothing uses it, and neither TF 2.21 nor "
                                           "tf1clip has it")
        for imp in self.file.imports:  # what stays of tf.contrib fails at import on TF 2.21: say so
            for alias in imp.aliases:
                qname = alias.full
                if self.owns(qname) and lookup(self.rows, qname) is None and id(alias) not in self.run.alias_plans \
                        and not self.run.will_remove(alias):
                    self.note_human(imp.line, f"import of {qname} kept: no known TF 2.21 replacement for a use of "
                                              "it (the module used whole, ...); this module fails at import on TF "
                                              "2.21 until that is rewritten by hand")

    def leave_module(self, layout) -> None:
        if not self.stubbed or self._ours():
            return
        self.note_change(self.first_stub, f"added {STUB} after the imports: {self.stubbed} use(s) of tf.contrib names "
                                          "that neither TF 2.21 nor tf1clip has raise the runtime's message where "
                                          "reached, not the whole module at import")
        nl = self.file.newline
        body = layout.body
        lead = 0
        while lead < len(body) and (body[lead].text is not None or body[lead].parts() or _docstring(body[lead])):
            lead += 1
        bound = [f"{a.asname or a.name} = {STUB}({m!r})" for a, m in self.bound]
        code = nl.join(("", "", *_STUB_LINES, *(("", "", *bound) if bound else ())))
        if lead:
            last = max((e.stmt.last for e in body[:lead] if e.stmt is not None), default=0)
            gone = {node.lineno: node.end_lineno for node in self.file.body if id(node) in layout.removed_stmts}
            while last + 1 in gone:  # the contrib import this rule removes: its line is not what follows
                last = gone[last + 1]
            if last < len(self.file.lines) and self.file.lines[last].strip():
                code += nl * 2
            layout.insert_after(body, body[lead - 1], code, self.RULE)
        else:
            layout.insert_before(body[0], [code.lstrip(nl) + nl], self.RULE)

    VALID = [
        Valid("import tensorflow as tf\n\nx = tf.constant(1.0)\n"),
        Valid("import tensorflow as tf\n\nhelp_text = 'use tf.contrib.rnn.BasicLSTMCell'\n"),
        # Not TensorFlow: a local object that happens to be called `tf`.
        Valid("class tf:\n    contrib = None\n\ncell = tf.contrib.rnn.BasicLSTMCell(3)\n"),
        # A contrib module used whole keeps its import (and is reported for a human).
        Valid("import tensorflow as tf\n\nseq2seq = tf.contrib.seq2seq\n"),
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n\ncell = tf.contrib.rnn.BasicLSTMCell(8)\n",
            "import tensorflow as tf\n\ncell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(8)\n",
        ),
        Invalid(
            "import tensorflow as tf1\n\nopt = tf1.contrib.estimator.clip_gradients_by_norm(tf1.train.AdamOptimizer(0.1), clip_norm=5.0)\n",
            "import tensorflow as tf1\nimport tf1clip\n\nopt = tf1clip.clip_gradients_by_norm(tf1.train.AdamOptimizer(0.1), clip_norm=5.0)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.contrib.estimator import clip_gradients_by_norm as clip_opt\n\n"
            "opt = clip_opt(tf.train.AdamOptimizer(0.1), 5.0)\n",
            "import tensorflow as tf\nfrom tf1clip import clip_gradients_by_norm as clip_opt\n\n"
            "opt = clip_opt(tf.train.AdamOptimizer(0.1), 5.0)\n",
        ),
        Invalid(
            "from tensorflow.contrib import rnn\n\ncell = rnn.LSTMCell(4)\n",
            "import tensorflow.compat.v1\n\ncell = tensorflow.compat.v1.nn.rnn_cell.LSTMCell(4)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.contrib import rnn\n\ncells = [rnn.GRUCell(4), rnn.GRUCell(2)]\n",
            "import tensorflow as tf\n\ncells = [tf.compat.v1.nn.rnn_cell.GRUCell(4), tf.compat.v1.nn.rnn_cell.GRUCell(2)]\n",
        ),
        Invalid(
            "import tensorflow as tf\n\ntrain_op = tf.contrib.layers.optimize_loss(loss, tf.contrib.framework.get_global_step(), "
            "0.1, 'SGD', clip_gradients=2.5)\n",
            "import tensorflow as tf\nimport tf1clip.contrib.layers\n\ntrain_op = tf1clip.contrib.layers.optimize_loss(loss, "
            "tf.compat.v1.train.get_global_step(), 0.1, 'SGD', clip_gradients=2.5)\n",
        ),
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.contrib.layers import optimize_loss, xavier_initializer\n"
            "from tensorflow.contrib.rnn import LSTMStateTuple, NASCell\n\nx = tf.placeholder(tf.float32)\n",
            "import tensorflow as tf\nfrom tf1clip.contrib.layers import optimize_loss, xavier_initializer\n"
            "from tensorflow.compat.v1.nn.rnn_cell import LSTMStateTuple\n\n"
            "x = tf.placeholder(tf.float32)\n",
        ),
        # Names neither TF 2.21 nor tf1clip has: the stand-in raises the runtime's message where reached.
        Invalid(
            "import tensorflow as tf\n\nhelper = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper(inputs, lengths, emb, 0.5)\n",
            "import tensorflow as tf\n\n\n" + "\n".join(_STUB_LINES) + "\n\nhelper = " + STUB + "(%r)(inputs, lengths, emb, 0.5)\n"
            % not_provided("tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper")[1],
        ),
        Invalid(
            "from tensorflow.contrib.rnn import NASCell, GRUCell\n\ncells = [NASCell(4), GRUCell(4)]\n",
            "from tensorflow.compat.v1.nn.rnn_cell import GRUCell\n\n\n" + "\n".join(_STUB_LINES) + "\n\n\nNASCell = "
            + STUB + "(%r)\n\ncells = [NASCell(4), GRUCell(4)]\n" % not_provided("tf.contrib.rnn.NASCell")[1],
        ),
    ]


def _docstring(entry) -> bool:
    node = entry.stmt.node if entry.stmt is not None else None
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


__getattr__ = command_attribute(ContribSymbols)  # ContribSymbolsCommand, for python -m libcst.tool codemod

"""TF 1.x *eager* scripts → TF 2: the program is already TF 2-shaped, so only its API is mapped.

A script that calls `tf.enable_eager_execution()` (or `tfe.enable_eager_execution()`) at its top
runs op by op, as TF 2 does: there is no graph to model, no session to turn into step
functions. `EagerTranslator` (the same interface as `interpret.Translator`: `run()`, `notes`)
rewrites its calls in place and changes nothing else:

* the switch itself is removed (TF 2 is eager); called anywhere but at module level (or
  under `if __name__ == "__main__":`), or with arguments, it is a refusal;
* `tfe.Variable` → `tf.Variable`; `tfe.Iterator(ds)` → iterating `ds`; `tfe.num_gpus()`,
  `tfe.executing_eagerly()` → their TF 2 calls;
* `tfe.implicit_value_and_gradients(f)` / `tfe.implicit_gradients(f)` → a small helper written
  once into the script, with `tf.GradientTape`: TF 1.x's `implicit_val_and_grad` (the trainable
  variables `f` read, in creation order; the same errors when `f` returns None or reads none);
* `tf.train.XOptimizer(...)` → its row of `optimizer_table` (arguments by
  `optimizers.optimizer_args`, Adam's exact twin written into the script), its arguments plain
  numbers; `opt.apply_gradients(pairs, global_step=gs)` → `opt.apply_gradients(pairs)` then
  `gs.assign_add(1)`; `minimize` / `compute_gradients` refuse;
* every other TensorFlow call or symbol → `api_changes.to_tf2` / `reference_to_tf2`
  (TensorFlow's upgrade spec, and tf1clip's decisions): what has no exact TF 2 form refuses.
Every refusal is `Refuse(line, reason)`. Never imports TensorFlow.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst
from libcst.helpers import parse_template_module

from codemods.tf2 import emit, optimizer_twins
from codemods.tf2._base import Note, Refuse, arg, walk
from codemods.tf2.api_changes import NoTF2Mapping, reference_to_tf2, to_tf2
from codemods.tf2.api_spec import KEYWORD_RENAMES, TRANSFORMERS, WARNINGS
from codemods.tf2.model import HOST
from codemods.tf2.names import ImportTable, short, tf_expr
from codemods.tf2.ops import SAMPLED_LOSSES, SPARSE_READS
from codemods.tf2.optimizer_table import OPTIMIZERS, OptimizerRow
from codemods.tf2.syntax import assignments, is_main_guard, names_of, taken_names, walk_statements
from codemods.tf2.optimizers import optimizer_args

RULE = "tf2"
TFE = "tensorflow.contrib.eager."
SWITCHES = frozenset({"tensorflow.enable_eager_execution", TFE + "enable_eager_execution"})
# tfe.Variable is a ResourceVariable: (initial_value, trainable, collections, validate_shape, caching_device,
# name, dtype, ...); the keywords below mean the same in TF 2's tf.Variable.
VARIABLE_KEYWORDS = frozenset({"initial_value", "trainable", "validate_shape", "caching_device", "name", "dtype",
                               "constraint"})
# Method names TensorFlow's upgrade spec knows for any object (`*.minimize`): checked by to_tf2.
SPEC_METHODS = frozenset(k[2:] for table in (KEYWORD_RENAMES, TRANSFORMERS, WARNINGS) for k in table
                         if k.startswith("*."))
OPTIMIZER_ONLY = frozenset({"minimize", "compute_gradients"})

IMPLICIT_VALUE_AND_GRADIENTS = '''

def {vg}(f):
    # TF 1.x's tfe.implicit_value_and_gradients (tensorflow/python/eager/backprop.py): f's value and the
    # (gradient, variable) pairs of the trainable variables f read, in their creation order.

    def value_and_gradients(*args, **kwargs):
        with {tf}.GradientTape() as tape:
            value = f(*args, **kwargs)
        if value is None:
            raise ValueError("Cannot differentiate a function that returns None; did you forget to return a "
                             "value from " + f.__name__ + "?")
        variables = tape.watched_variables()
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was being computed.")
        return value, list(zip(tape.gradient(value, variables), variables))

    return value_and_gradients
'''
IMPLICIT_GRADIENTS = '''

def {g}(f):
    # TF 1.x's tfe.implicit_gradients: the (gradient, variable) pairs only.
    value_and_gradients = {vg}(f)

    def gradients(*args, **kwargs):
        return value_and_gradients(*args, **kwargs)[1]

    return gradients
'''


class EagerTranslator(cst.CSTTransformer):
    """One TF 1.x eager file's translation: `run()` gives the TF 2 module, `notes` what changed."""

    def __init__(self, module: cst.Module, names: ImportTable):
        super().__init__()
        self.module = module
        self.names = names
        self.notes: list = []
        if names.tf_alias is None:
            raise Refuse(1, "the script does not import `tensorflow` itself (only through tf.contrib.eager): "
                            "add `import tensorflow as tf`")
        self.alias = names.tf_alias
        self.namer = emit.Namer(names_of(module) | taken_names(module))
        self.emitted: dict = {}          # preamble key -> generated name
        self.preamble: list = []
        self._funcs: set = set()         # ids of nodes that are the func of a call
        self._roots: set = set()         # ids of Name/Attribute chains naming a TF symbol
        self._members: set = set()       # ids of attribute members and keywords (not names of the scope)
        self._iterators: set = set()     # ids of generated `iter(ds)` calls
        self._after: dict = {}           # id(statement) -> statements to add after it
        self._statement = None           # the simple statement line being read
        self._sparse = self._sparse_line()
        self._optimizers = {emit.code(t) for st in walk_statements(module) for t, v in assignments(st)
                            if isinstance(v, cst.Call) and names.qualified(v.func) in OPTIMIZERS}
        self._variables = self._variable_targets(module)

    def _variable_targets(self, module: cst.Module) -> set:
        """Names, and attribute names (`self.w`: "w"), that every assignment in the file binds to a new
        `tfe.Variable` / `tf.Variable`: one variable each, never a list of shards."""
        kinds: dict = {}
        for st in walk_statements(module):
            for target, value in assignments(st):
                key = (("name", target.value) if isinstance(target, cst.Name)
                       else ("attr", target.attr.value) if isinstance(target, cst.Attribute) else None)
                if key is None:
                    continue
                one = isinstance(value, cst.Call) and self.names.qualified(value.func) in (
                    TFE + "Variable", "tensorflow.Variable")
                kinds[key] = kinds.get(key, True) and one
        return {key for key, one in kinds.items() if one}

    def _one_variable(self, value: cst.BaseExpression) -> bool:
        """`value` is one of the file's variables (for TF 1's partition_strategy, read only for shards)."""
        if isinstance(value, cst.Name):
            return ("name", value.value) in self._variables
        return isinstance(value, cst.Attribute) and ("attr", value.attr.value) in self._variables

    def run(self) -> cst.Module:
        out = self.module.visit(self)
        body = emit.add_preamble(list(out.body), self.preamble, set(), self.names)
        return out.with_changes(body=body)

    # -- errors and notes ---------------------------------------------------------------------
    def refuse(self, node: Optional[cst.CSTNode], reason: str):
        raise Refuse(self._line(node), reason)

    def _line(self, node) -> int:
        line = self.names.line(node) if node is not None else 0
        return line or self.names.line(self._statement)

    def note(self, node, message: str) -> None:
        n = Note(self._line(node), RULE, "change", message)
        if n not in self.notes:
            self.notes.append(n)

    def tf(self, qname: str) -> cst.BaseExpression:
        return tf_expr(self.alias, qname)

    # -- statements ---------------------------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node

    def leave_SimpleStatementLine(self, original, updated):
        after = self._after.pop(id(original), [])
        if after:
            return cst.FlattenSentinel([updated, *after])
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return updated.with_changes(body=self._without_switch(list(updated.body), original.body, top=True))

    def _without_switch(self, body: list, originals, top: bool) -> list:
        """`body` without its `enable_eager_execution()` statements (blank lines above them kept)."""
        out, carry = [], []
        for st, orig in zip(body, originals):
            if isinstance(orig, cst.If) and top and is_main_guard(orig):
                inner = self._without_switch(list(st.body.body), orig.body.body, top=False)
                st = st.with_changes(body=st.body.with_changes(body=inner or [cst.SimpleStatementLine([cst.Pass()])]))
            if self._is_switch(orig):
                carry = [line for line in orig.leading_lines if line.comment is None]
                self.note(orig, "enable_eager_execution() removed: TF 2 executes eagerly")
                continue
            if carry and not (st.leading_lines and st.leading_lines[0].comment is None):
                st = st.with_changes(leading_lines=[*carry, *st.leading_lines])
            carry = []
            out.append(st)
        return out

    def _is_switch(self, st) -> bool:
        if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr)):
            return False
        call = st.body[0].value
        return isinstance(call, cst.Call) and self.names.qualified(call.func) in SWITCHES

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        if id(updated.iter) in self._iterators:  # `for x in tfe.Iterator(ds)` → `for x in ds`
            return updated.with_changes(iter=updated.iter.args[0].value)
        return updated

    # -- names --------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self._funcs.add(id(node.func))

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._members.add(id(node.keyword))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._members.add(id(node.attr))
        return self._visit_chain(node)

    def visit_Name(self, node: cst.Name) -> bool:
        return id(node) in self._members or self._visit_chain(node)

    def _visit_chain(self, node) -> bool:
        if self.names.is_tf(node) and self.names.qualified(node) != "tensorflow":
            self._roots.add(id(node))
            return False  # its inner parts (`tf.train` of `tf.train.X`) are not references
        return True

    def leave_Attribute(self, original, updated):
        return self._reference(original, updated)

    def leave_Name(self, original, updated):
        return self._reference(original, updated)

    def _reference(self, original, updated):
        if id(original) not in self._roots or id(original) in self._funcs:
            return updated
        q = self.names.qualified(original)
        if q.startswith(TFE) or q.startswith("tensorflow.keras."):
            self.refuse(original, f"`{short(q)}` used without a call has no TF 2 mapping in tf1clip's eager tables")
        try:
            return self.tf(reference_to_tf2(short(q)))
        except NoTF2Mapping as exc:
            self.refuse(original, exc.reason)

    # -- calls --------------------------------------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if id(original.func) in self._roots:
            return self._tf_call(self.names.qualified(original.func), original, updated)
        if isinstance(original.func, cst.Attribute):
            return self._method(original.func.attr.value, original, updated)
        return updated

    def _tf_call(self, q: str, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        if q in SWITCHES:
            if call.args:
                self.refuse(original, "enable_eager_execution() with arguments (a config or device policy): "
                                      "not converted")
            if not self._statement_is(original) or self.names.line(self._statement) not in self._switch_lines():
                self.refuse(original, "enable_eager_execution() called inside a function or a condition: which "
                                      "code ran eagerly in TF 1.x depends on the path")
            return call
        if q.startswith(TFE):
            return self._tfe(q[len(TFE):], original, call)
        if q in OPTIMIZERS:
            return self._optimizer(OPTIMIZERS[q], original, call)
        if q.startswith(("tensorflow.contrib.", "tensorflow.keras.")):
            why = ("tf.keras in TF 1.x is Keras 2 and TF 2.21's is Keras 3" if q.startswith("tensorflow.keras.")
                   else "tf.contrib is gone in TF 2")
            self.refuse(original, f"`{short(q)}` has no TF 2 mapping in tf1clip's eager tables ({why})")
        try:
            name, call = to_tf2(short(q), call, alias=self.alias, one_tensor=self._one_variable)
        except NoTF2Mapping as exc:
            self.refuse(original, exc.reason)
        return call.with_changes(func=self.tf(name))

    def _tfe(self, member: str, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        if member == "Variable":
            positional = [a for a in call.args if a.keyword is None]
            extra = {a.keyword.value for a in call.args if a.keyword is not None} - VARIABLE_KEYWORDS
            if len(positional) > 2 or extra or any(a.star for a in call.args):
                self.refuse(original, "tfe.Variable with arguments beyond (initial_value, trainable) and the keywords "
                                      f"{', '.join(sorted(VARIABLE_KEYWORDS))}: not converted")
            return call.with_changes(func=self.tf("Variable"))
        if member == "Iterator":
            if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                self.refuse(original, "tfe.Iterator(dataset) with other arguments: not converted")
            new = emit.call(cst.Name("iter"), call.args[0].value)
            self._iterators.add(id(new))
            return new
        if member in ("num_gpus", "executing_eagerly") and not call.args:
            return emit.expr("len({tf}.config.list_physical_devices('GPU'))", tf=self.alias) \
                if member == "num_gpus" else emit.call(self.tf("executing_eagerly"))
        if member in ("implicit_value_and_gradients", "implicit_gradients"):
            if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                self.refuse(original, f"tfe.{member} takes one function: other arguments are not converted")
            name = self._gradient_helper(member)
            self.note(original, f"tfe.{member} → `{name}`, a tf.GradientTape helper with TF 1.x's semantics "
                                "written into the script")
            return call.with_changes(func=cst.Name(name))
        self.refuse(original, f"`tfe.{member}` has no TF 2 mapping in tf1clip's eager tables")

    def _gradient_helper(self, member: str) -> str:
        """The name of the helper for `tfe.<member>`, written once into the script (with what it uses)."""
        if member not in self.emitted:
            holes = {"tf": cst.Name(self.alias)} if member == "implicit_value_and_gradients" else {
                "vg": cst.Name(self._gradient_helper("implicit_value_and_gradients"))}
            self.emitted[member] = name = self.namer.fresh(member)
            holes["g" if member == "implicit_gradients" else "vg"] = cst.Name(name)
            template = IMPLICIT_GRADIENTS if member == "implicit_gradients" else IMPLICIT_VALUE_AND_GRADIENTS
            self.preamble.extend(parse_template_module(template, **holes).body)
        return self.emitted[member]

    def _method(self, member: str, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        if member == "apply_gradients":
            return self._apply_gradients(original, call)
        if member in OPTIMIZER_ONLY:
            self.refuse(original, f"`.{member}(...)` of a TF 1.x optimizer: only `apply_gradients` is converted in "
                                  "eager scripts (compute the gradients with tfe.implicit_gradients)")
        if member in SPEC_METHODS:
            try:
                _, call = to_tf2("*." + member, call, alias=self.alias)
            except NoTF2Mapping as exc:
                self.refuse(original, exc.reason)
        return call

    def _apply_gradients(self, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        """`opt.apply_gradients(pairs, global_step=gs, name=n)` → `opt.apply_gradients(pairs)`, then
        `gs.assign_add(1)` (TF 1.x incremented the step after the update)."""
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or len(positional) > 3 or keywords - {"grads_and_vars", "global_step",
                                                                               "name"}:
            self.refuse(original, "apply_gradients with arguments beyond (grads_and_vars, global_step, name): "
                                  "not converted")
        if len(positional) == 1 and not keywords - {"grads_and_vars"}:
            return call  # Keras 3's apply_gradients(grads_and_vars): the same call
        pairs = arg(call, 0, "grads_and_vars")
        step = arg(call, 1, "global_step")
        if pairs is None:
            self.refuse(original, "apply_gradients without grads_and_vars")
        if emit.code(original.func.value) not in self._optimizers:
            self.refuse(original, f"`{emit.code(original.func)}(...)` with global_step or name: `"
                                  f"{emit.code(original.func.value)}` is not assigned a tf.train optimizer in this file")
        if step is not None and not (isinstance(step, cst.Name) and step.value == "None"):
            if not self._statement_is(original) or len(self._statement.body) != 1:
                self.refuse(original, "apply_gradients(..., global_step=...) whose result is used: TF 2's "
                                      "increment is a statement of its own")
            self._after.setdefault(id(self._statement), []).append(emit.stmt("{gs}.assign_add(1)", gs=step))
            self.note(original, "apply_gradients(global_step=gs) → apply_gradients, then gs.assign_add(1)")
        return call.with_changes(args=[cst.Arg(pairs)])

    def _statement_is(self, call: cst.Call) -> bool:
        st = self._statement
        return st is not None and any(isinstance(s, cst.Expr) and s.value is call for s in st.body)

    def _switch_lines(self) -> set:
        lines = set()
        for st in self.module.body:
            blocks = [st.body.body] if isinstance(st, cst.If) and is_main_guard(st) else [[st]]
            lines |= {self.names.line(s) for block in blocks for s in block if self._is_switch(s)}
        return lines

    # -- optimizers ---------------------------------------------------------------------------
    def _optimizer(self, row: OptimizerRow, original: cst.Call, call: cst.Call) -> cst.BaseExpression:
        opt = row.tf1.rsplit(".", 1)[1]
        if row.velocity_ones:
            self.refuse(original, f"{opt} starts its mean-square slot at ones (Keras at zeros): the eager path "
                                  "does not write that initialization")
        if self._sparse and not (row.twin or row.tf1.endswith("GradientDescentOptimizer")):
            self.refuse(original, f"a gradient is an IndexedSlices (a variable read by index at line {self._sparse}) "
                                  f"and Keras 3's {row.keras.rsplit('.', 1)[-1]} updates repeated rows differently "
                                  f"from TF 1.x's {opt}")
        for a in call.args:
            if not a.star and not self._number(a.value, set()) and not (a.keyword and a.keyword.value == "name"):
                self.refuse(original, f"{opt}'s argument `{emit.code(a.value)}` is not a number literal (or a name "
                                      "bound only to one): a Keras optimizer reads a tensor or variable once")
        args, fixed, _ = optimizer_args(_Site(self, original), row, call)
        cls = self.tf(row.keras)
        if row.twin:
            if row.keras not in self.emitted:
                self.emitted[row.keras] = self.namer.fresh(row.keras)
                self.preamble.extend(optimizer_twins.definitions(row.keras, self.emitted[row.keras], self.alias))
            cls = cst.Name(self.emitted[row.keras])
        self.note(original, f"tf.train.{opt} → {row.render()}: {row.why}"
                  + (" (TF 1.x's defaults written out)" if fixed else ""))
        return emit.with_args(emit.call(cls), args)

    def _number(self, node, seen: set) -> bool:
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.UnaryOperation):
            return self._number(node.expression, seen)
        if isinstance(node, cst.BinaryOperation):
            return self._number(node.left, seen) and self._number(node.right, seen)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return True
            if node.value in seen:
                return False
            values = [v for st in walk_statements(self.module) for t, v in assignments(st)
                      if isinstance(t, cst.Name) and t.value == node.value]
            return bool(values) and all(v is not None and self._number(v, seen | {node.value}) for v in values)
        return False

    def _sparse_line(self) -> int:
        """The first line reading a variable by index (its gradient is an IndexedSlices), else 0."""
        for node in walk(self.module):
            if isinstance(node, cst.Call) and self.names.qualified(node.func) in (*SPARSE_READS, *SAMPLED_LOSSES):
                return self.names.line(node)
        return 0


class _Site:
    """What `optimizers.optimizer_args` asks of a call site: its values are plain Python here."""

    def __init__(self, tr: EagerTranslator, node: cst.Call):
        self.tr, self.node, self.ev = tr, node, self

    def value_of(self, node):
        return HOST

    def refuse(self, reason: str):
        self.tr.refuse(self.node, reason)

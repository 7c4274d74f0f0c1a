"""TF 1.x *eager* scripts → TF 2: the program is already TF 2-shaped, so only its API is mapped.

A script that calls `tf.enable_eager_execution()` (or `tfe.enable_eager_execution()`) at its top
runs op by op, as TF 2 does: there is no graph to model, no session to turn into step
functions. `EagerTranslator` (the same interface as `interpret.Translator`: `run()`, `notes`)
rewrites its calls in place and changes nothing else:

* the switch itself is removed (TF 2 is eager); called anywhere but at module level (or
  under `if __name__ == "__main__":`), or with arguments, it is a refusal;
* `tfe.Variable` → `tf.Variable`; `tfe.Iterator(ds)` → iterating `ds`; `tfe.num_gpus()`,
  `tfe.executing_eagerly()` → their TF 2 calls;
* `tfe.implicit_value_and_gradients(f)` / `tfe.implicit_gradients(f)`, `tf.train.XOptimizer(...)`
  and `opt.apply_gradients(...)` → their TF 2 forms (`eager_training`); `minimize` /
  `compute_gradients` refuse;
* every other TensorFlow call or symbol → `api_changes.to_tf2` / `reference_to_tf2`
  (TensorFlow's upgrade spec, and tf1clip's decisions): what has no exact TF 2 form refuses.
Every refusal is `Refuse(line, reason)`. Never imports TensorFlow.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2._base import Note, Refuse
from codemods.tf2.api_changes import NoTF2Mapping, reference_to_tf2, to_tf2
from codemods.tf2.api_spec import KEYWORD_RENAMES, TRANSFORMERS, WARNINGS
from codemods.tf2.eager_training import EagerTraining
from codemods.tf2.names import ImportTable, short, tf_expr
from codemods.tf2.optimizer_table import OPTIMIZERS
from codemods.tf2.syntax import assignments, is_main_guard, names_of, taken_names, walk_statements

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


class EagerTranslator(EagerTraining, cst.CSTTransformer):
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

    def _statement_is(self, call: cst.Call) -> bool:
        st = self._statement
        return st is not None and any(isinstance(s, cst.Expr) and s.value is call for s in st.body)

    def _switch_lines(self) -> set:
        lines = set()
        for st in self.module.body:
            blocks = [st.body.body] if isinstance(st, cst.If) and is_main_guard(st) else [[st]]
            lines |= {self.names.line(s) for block in blocks for s in block if self._is_switch(s)}
        return lines

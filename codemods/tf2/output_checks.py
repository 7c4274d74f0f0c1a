"""What every correct TF 2 program has, checked on the TF2 tier's output before it is kept.

Whatever translated the program, its output is wrong if:

* a name it reads is no longer bound (a placeholder removed while something outside the step
  functions still reads it, e.g. a fed learning rate given to the optimizer): `NameError`;
* a step function (`@tf.function`) creates state (`tf.Variable`, a Keras layer or optimizer, a
  dataset): it would be created again at each call, and never trained;
* a step function reads a value computed once at module level from variables
  (`hypothesis = x_train * W + b` left outside the tape): the step sees the initial weights
  forever, and no gradient flows to them through it.

Each raises `Refuse` at the line of the construct. Runs after `symbols`, never imports TensorFlow,
changes nothing.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst


from codemods.children import children
from codemods.tf2 import symbols
from codemods.tf2._base import Names, Refuse, code, walk
from codemods.tf2.lines import start_lines
from codemods.tf2.names import unbound_names
from codemods.tf2.syntax import walk_statements

RULE = "output_checks"
DESCRIPTION = "Refuse a TF2 program with an unbound name, state created per step, or a stale module-level value."

EXAMPLES = [
    ("import tensorflow as tf\nw = tf.Variable(1.0)\nvariables = [w]\n\n\n@tf.function\ndef step(x):\n"
     "    return x * w\n",
     "import tensorflow as tf\nw = tf.Variable(1.0)\nvariables = [w]\n\n\n@tf.function\ndef step(x):\n"
     "    return x * w\n"),
]

# Calls that create state: wrong inside a step function.
STATE_MAKERS = ("tensorflow.Variable", "tensorflow.keras.layers.", "tensorflow.keras.optimizers.",
                "tensorflow.data.", "tensorflow.train.Checkpoint", "tensorflow.summary.create_file_writer",
                "tensorflow.keras.Model", "tensorflow.keras.Sequential", "tensorflow.Module")
# A layer's lists of variables: `a.trainable_variables + b.trainable_variables` is structure, not a value.
STRUCTURAL_ATTRS = frozenset({"trainable_variables", "variables", "weights", "trainable_weights",
                              "non_trainable_variables", "non_trainable_weights"})


def _is_maker(q: Optional[str]) -> bool:
    if q is None or q.startswith("tensorflow.keras.optimizers.schedules."):
        return False
    return any(q == m or (m.endswith(".") and q.startswith(m)) for m in STATE_MAKERS)


def _steps(names: Names) -> list:
    """The module's `@tf.function` functions (at module level or in a class)."""
    out = []
    for node in walk_statements(names.module):  # a def is a statement: expressions are not entered
        if isinstance(node, cst.FunctionDef):
            for d in node.decorators:
                target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                if names.is_(target, "tensorflow.function"):
                    out.append(node)
    return out


def _has_star_import(module: cst.Module, text: str) -> bool:
    """`text`: the module's code. Where no `import` is followed by `*` (line continuations
    allowed) the tree is not searched."""
    if not _STAR_IMPORT_TEXT.search(text):
        return False
    return any(isinstance(n, cst.ImportFrom) and isinstance(n.names, cst.ImportStar) for n in walk(module))


_STAR_IMPORT_TEXT = re.compile(r"\bimport[\s\\]*\*")


def check_unbound(names: Names, source: Optional[cst.Module], unbound_before: frozenset = frozenset(),
                  dropped: Optional[dict] = None) -> str:
    """A name read but bound nowhere, which the input did bind (`source`: the input, when known;
    `unbound_before`: the names the input itself reads unbound, which are not blamed; `dropped`: names
    whose binding the translator removed on purpose → why a read of them is not converted). Returns the
    program's text, printed for the check."""
    module = names.module
    text = module.code
    if _has_star_import(module, text):
        return text
    try:
        unbound = {name: None for name in sorted(symbols.unbound(text))}
    except SyntaxError:  # libcst parses what CPython rejects: libcst's scope analysis answers
        unbound = unbound_names(names.scopes)
    for name, node in unbound.items():
        if name in unbound_before or name in ("__file__", "__builtins__"):
            continue
        bound_at = _binding_line(source, name) if source is not None else 0
        why = (dropped or {}).get(name) or (
            f"`{name}` is still read but the TF2 program no longer binds it (the rewrite removed what defined it "
            "here: a placeholder read outside the step functions, such as a fed learning rate, is not converted)")
        refusal = Refuse(bound_at or (names.line(node) if node is not None else symbols.first_read(text, name)), why)
        refusal.of_input = bool(bound_at)  # already a line of the input: the driver keeps it
        raise refusal
    return text


def _binding_line(source: cst.Module, name: str) -> int:
    """The first line of `source` that assigns `name` (0 if none)."""
    where = start_lines(source)
    lines = [where[n] for n in walk(source)
             if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name) and n.target.value == name
             and n in where]
    return min(lines) if lines else 0


def check_state_in_steps(names: Names) -> None:
    for fn in _steps(names):
        for node in walk(fn.body):
            if isinstance(node, cst.Call):
                q = None if isinstance(node.func, cst.Call) else names.of(node.func)
                if _is_maker(q):
                    raise Refuse(names.line(node), f"`{code(node.func)}(...)` creates state inside the step "
                                                   f"function `{fn.name.value}`: it would be created again at "
                                                   "every call (and never trained)")


def _state_names(names: Names) -> set:
    out = set()
    for st in names.module.body:
        for small in getattr(st, "body", ()) if isinstance(st, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
                q = None if isinstance(small.value.func, cst.Call) else names.of(small.value.func)
                if _is_maker(q):
                    for t in small.targets:
                        if isinstance(t.target, cst.Name):
                            out.add(t.target.value)
    return out


def _reads(node: cst.CSTNode, wanted: set) -> bool:
    return any(isinstance(n, cst.Name) and n.value in wanted for n in _walk_eager(node))


def _walk_eager(node: cst.CSTNode):
    """The nodes evaluated when `node` is: a lambda's body is not (it runs later, on current values)."""
    yield node
    if isinstance(node, cst.Lambda):
        return
    for child in children(node):
        yield from _walk_eager(child)


def _list_concat(node: cst.BaseExpression) -> bool:
    """`a.trainable_variables + b.trainable_variables`, `[w] + [b]`: lists of variables, not values."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _list_concat(node.left) and _list_concat(node.right)
    return isinstance(node, (cst.List, cst.Tuple)) or (isinstance(node, cst.Attribute)
                                                       and node.attr.value in STRUCTURAL_ATTRS)


def _computes(names: Names, node: cst.BaseExpression, state: set) -> bool:
    """Does evaluating `node` compute a tensor from the current value of some state (eagerly)?"""
    for n in _walk_eager(node):
        if isinstance(n, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)) and not _list_concat(n) \
                and any(_reads(c, state) for c in children(n)):
            return True
        if isinstance(n, cst.Subscript) and _reads(n.value, state) and not _list_concat(n.value):
            return True  # a slice of a variable (not an item of a list of them: the variable itself)
        if isinstance(n, cst.Call):
            func = n.func
            if isinstance(func, cst.Name) and func.value in state:
                return True  # a layer called on an input
            if isinstance(func, cst.Attribute) and func.attr.value in ("numpy", "read_value", "value") \
                    and _reads(func.value, state):
                return True
            q = None if isinstance(func, cst.Call) else names.of(func)
            if q is not None and q.startswith("tensorflow.") and not _is_maker(q) \
                    and not q.startswith("tensorflow.keras.optimizers.schedules.") \
                    and any(_reads(a.value, state) for a in n.args):
                return True
    return False


def check_stale_values(names: Names) -> None:
    """Module-level values computed from variables (or layers), read inside a step function."""
    state = _state_names(names)
    if not state:
        return
    derived: dict = {}
    for st in names.module.body:
        if not isinstance(st, cst.SimpleStatementLine) or len(st.body) != 1 or not isinstance(st.body[0], cst.Assign):
            continue
        small = st.body[0]
        targets = [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
        if isinstance(small.value, cst.Call) and _is_maker(names.of(small.value.func)):
            continue  # state itself
        if _computes(names, small.value, state | set(derived)) or _reads(small.value, set(derived)):
            for t in targets:
                derived.setdefault(t, st)
    if not derived:
        return
    for fn in _steps(names):
        local = _bound_in(fn)
        for node in walk(fn.body):
            if isinstance(node, cst.Name) and node.value in derived and node.value not in local:
                st = derived[node.value]
                raise Refuse(names.line(st), f"`{node.value}` is computed once, at module level, from variables; "
                                             f"the step function `{fn.name.value}` reads that value: it would never "
                                             "see the updated weights, and no gradient reaches them through it")


def _bound_in(fn: cst.FunctionDef) -> set:
    """Names a function binds itself (parameters, assignment and loop targets, `with ... as`)."""
    out = {p.name.value for p in fn.params.params}
    for node in walk(fn.body):
        target = None
        if isinstance(node, (cst.AssignTarget, cst.For, cst.AugAssign, cst.AnnAssign)):
            target = node.target
        elif isinstance(node, cst.AsName):
            target = node.name
        if target is not None:
            out |= {n.value for n in walk(target) if isinstance(n, cst.Name)}
    return out


def transform(module: cst.Module, source: Optional[cst.Module] = None, table=None,
              dropped: Optional[dict] = None) -> tuple[cst.Module, str]:
    """Check the TF2 program `module`: the program and its text. The driver hands it the input too
    (`source`, for the line of a binding the rewrite removed) and the translator's import table
    (`table`: what each name denotes, aliases included, and the names the input itself reads unbound,
    not blamed here), and the names whose binding it removed on purpose (`dropped`: name → why a read of
    one is not converted)."""
    names = Names(module, table)
    unbound_before = table.unbound if table is not None else frozenset()
    check_state_in_steps(names)
    check_stale_values(names)
    return names.module, check_unbound(names, source, unbound_before, dropped)

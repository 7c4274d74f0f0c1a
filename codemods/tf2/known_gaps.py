"""Constructs today's TF2 translator gets wrong: refused before it runs, with the line and why.

Each entry is a construct the translator would convert into a program that runs but computes
something else; each has a probe in `fixtures/tf2_safety/` whose test demands "refused with
this line, or converted and passing parity". When the translator learns the construct, its
entry here goes, and the probe's test then demands parity.

* A second `sess.run(init)` of the same initializer in one function (or at module level), or one
  in a loop: TF 1 re-initialized every variable there (a reset between trials); the translator
  drops initializer runs, so the reset would silently not happen.
* A variable created inside an expression (`tf.matmul(x, tf.Variable(...))`, a dict or list of
  `tf.Variable`s): the translator keeps state only when a statement binds it to a name (or a
  helper returns it), and would otherwise move the creation into the step function (re-created,
  never trained).
"""
from __future__ import annotations

import libcst as cst

from codemods.tf2._base import Names, Refuse, arg, walk

RULE = "known_gaps"
DESCRIPTION = ("Refuse constructs the TF2 translator does not convert exactly yet (a variable reset by "
               "sess.run(init), a variable created inside an expression).")

EXAMPLES = [
    ("import tensorflow as tf\ninit = tf.global_variables_initializer()\nwith tf.Session() as sess:\n"
     "    sess.run(init)\n    for i in range(3):\n        sess.run(train)\n",
     "import tensorflow as tf\ninit = tf.global_variables_initializer()\nwith tf.Session() as sess:\n"
     "    sess.run(init)\n    for i in range(3):\n        sess.run(train)\n"),
]

VARIABLE_MAKERS = ("tensorflow.Variable", "tensorflow.get_variable")
INITIALIZERS = ("tensorflow.global_variables_initializer", "tensorflow.initialize_all_variables",
                "tensorflow.variables_initializer", "tensorflow.initialize_variables",
                "tensorflow.local_variables_initializer", "tensorflow.initialize_local_variables")


class _Runs(cst.CSTVisitor):
    """Every `X.run(fetches, ...)` of a session, in source order, with whether it is in a loop and
    the function it is in (module level: None); functions run in call order, not source order."""

    def __init__(self, names: Names):
        self.names = names
        self.loops = 0
        self.functions: list = []
        self.runs: list = []  # (call, fetches, in_loop, function)

    def visit_FunctionDef(self, node):
        self.functions.append((node, self.loops))
        self.loops = 0

    def leave_FunctionDef(self, node):
        self.loops = self.functions.pop()[1]

    def visit_For(self, node):
        self.loops += 1

    def leave_For(self, node):
        self.loops -= 1

    def visit_While(self, node):
        self.loops += 1

    def leave_While(self, node):
        self.loops -= 1

    def visit_Call(self, node):
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "run" and self.names.of(func) is None
                and node.args):
            function = self.functions[-1][0] if self.functions else None
            self.runs.append((node, arg(node, 0, "fetches"), self.loops > 0, function))


def _initializers(names: Names) -> dict:
    """Names bound to an initializer op → which initializer (its qualified name)."""
    out = {}
    for node in walk(names.module):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and names.is_(node.value.func, *INITIALIZERS):
            out.update({t.target.value: names.of(node.value.func) for t in node.targets if isinstance(t.target, cst.Name)})
    return out


def _kinds(names: Names, fetch, bound: dict) -> set:
    """The initializers a fetch runs (global, local, ...), by qualified name."""
    if isinstance(fetch, (cst.List, cst.Tuple)):
        return set().union(*(_kinds(names, e.value, bound) for e in fetch.elements)) if fetch.elements else set()
    if isinstance(fetch, cst.Name):
        return {bound[fetch.value]} if fetch.value in bound else set()
    if isinstance(fetch, cst.Call) and names.is_(fetch.func, *INITIALIZERS):
        return {names.of(fetch.func)}
    return set()


def _check_variables_bound(names: Names) -> None:
    """Every tf.Variable / get_variable call is the whole value of an assignment."""
    # a statement binds it (`w = tf.Variable(...)`), or a helper returns it (`return tf.Variable(...)`)
    bound = {id(n.value) for n in walk(names.module) if isinstance(n, (cst.Assign, cst.Return))}
    for node in walk(names.module):
        if isinstance(node, cst.Call) and id(node) not in bound and names.is_(node.func, *VARIABLE_MAKERS):
            raise Refuse(names.line(node), f"`{names.of(node.func).replace('tensorflow.', 'tf.')}(...)` creates a "
                                           "variable inside an expression: the TF2 tier converts a variable only "
                                           "when a statement binds it to a name (it would be re-created at every "
                                           "step otherwise)")


def transform(module: cst.Module) -> tuple[cst.Module, list]:
    names = Names.of_module(module)
    _check_variables_bound(names)
    visitor = _Runs(names)
    names.module.visit(visitor)
    bound = _initializers(names)
    done: dict = {}  # function (None: module level) → initializers it ran
    for call, fetch, in_loop, function in visitor.runs:
        kinds = _kinds(names, fetch, bound)
        if not kinds:
            continue
        ran = done.setdefault(function, set())
        why = "in a loop" if in_loop else "a second time" if kinds & ran else None
        ran |= kinds
        if why is not None:
            raise Refuse(names.line(call), f"the variables are initialized {why}: TF 1 reset every variable there, "
                                           "and the TF2 tier does not convert a reset (it drops initializer runs)")
    return names.module, []

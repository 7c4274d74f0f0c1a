"""A lambda bound to a name, over TensorFlow: read as the `def` it is.

    lrelu = lambda t, leak=0.2: tf.maximum(t, leak * t)

Python makes the same function object from this statement and from

    def lrelu(t, leak=0.2):
        return tf.maximum(t, leak * t)

(the defaults are evaluated at the same point, the body reads the same scope when called; only the
function's `__name__` differs: `'<lambda>'` against `'lrelu'`). So the program is read with the `def`,
and the script's helpers are one construct, whatever the spelling: a helper the steps call is kept and
called inside them, a helper that makes state is read at each call (`helpers`). PEP 8 asks for the
`def` spelling too.

Only a lambda bound by a statement of its own (`name = lambda ...:`, one target, a plain name, in any
block: module, function, class) whose body reads TensorFlow is rewritten; other lambdas are host code
and stay as written. A lambda whose parameter has the name of a TensorFlow import is not (its body
reads the parameter, not the module).
"""
from __future__ import annotations

from typing import Callable

import libcst as cst

from codemods.tf2.syntax import parameter_names, replace_statements, walk_nodes, walk_statements

TENSORFLOW = ("tensorflow", "tf_slim")


def as_defs(tree: cst.Module, qualified: Callable) -> tuple:
    """(`tree` with each such lambda statement a `def`, [(statement, name)] of the statements
    rewritten, in `tree`'s nodes; every other node is the same object). `qualified`: a node → its
    qualified name through the file's imports (`ImportTable.qualified`), or None."""
    defs, rewritten = {}, []
    for st in walk_statements(tree):
        if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1):
            continue
        small = st.body[0]
        if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Lambda) and _reads_tensorflow(small.value, qualified)):
            lam, name = small.value, small.targets[0].target
            defs[st] = cst.FunctionDef(
                name=name, params=lam.params,
                body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Return(value=lam.body)])]),
                leading_lines=st.leading_lines)
            rewritten.append((st, name.value))
    return (replace_statements(tree, defs), rewritten) if defs else (tree, [])


def _reads_tensorflow(lam: cst.Lambda, qualified: Callable) -> bool:
    """Whether `lam` reads a TensorFlow import (not when a parameter has the import's name)."""
    reads = {n.value for n in walk_nodes(lam) if type(n) is cst.Name
             and (q := qualified(n)) is not None and q.split(".")[0] in TENSORFLOW}
    return bool(reads) and not reads & parameter_names(lam.params)

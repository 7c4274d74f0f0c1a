"""A value that may be a ragged nested sequence, given to numpy: NumPy 1.x's object array kept.

NumPy < 1.24 made an object array of a ragged nested sequence wherever a function made an array
of its argument (`np.array(list(zip(x, y)))` of rows of unequal lengths, `np.asarray([[1, 2],
[3]])`, `np.nan_to_num((matrix, col_min, col_max))`, `np.stack` of ragged items; 1.20-1.23 with
a warning). NumPy 2 raises `ValueError: ... inhomogeneous shape ...` unless `dtype=object` is
passed. Whether a value is ragged is known only when the program runs, and `dtype=object` on
regular data would change its dtype, so no call gets `dtype=object`. Instead a call of one of
those functions (`RAGGED_MAKERS` in tf1clip/numpy_removed.py) whose first argument is not
visibly regular becomes `_object_if_ragged(np.nan_to_num, x)`: a function added once at the top
of the module, after its imports, that returns NumPy's own result and, only where NumPy 2
raises for raggedness, the result on NumPy 1.x's object array (of each ragged item, for the
functions that join arrays). `tf1clip run` runs the same function for the user's files
(`tf1clip.legacy_numpy`), so a script and its migration make the same arrays.

Visibly regular, left as written: a constant, a display (list or tuple) of constants or of
displays of constants of one length, and a call of the numpy module itself (`np.zeros(3)`);
for the functions beyond `np.array` / `np.asarray`, also the result of arithmetic
(`np.mean(err ** 2)`), and for the joiners a display of items that are not displays
(`np.concatenate((rest, images[:end]))`: an item that is a ragged list named by a variable is
then missed, and raises under NumPy 2 in the migration where `tf1clip run` makes NumPy 1.x's
array).
`np.array` / `np.asarray` given a dtype or a second positional argument are left too (NumPy 1.x
raised there as well), and so is any call with `*` / `**` arguments. A file whose helper is the
first version of it (np.array and np.asarray only) gets no new kinds of call wrapped: those are
left for a human. Never imports NumPy.
"""
from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from codemods.command import command_attribute
from codemods.nodes import Reference
from codemods.rule import Invalid, Rule, Valid
from tf1clip.numpy_removed import RAGGED_HELPER as HELPER
from tf1clip.numpy_removed import RAGGED_HELPER_LINES as _HELPER_LINES
from tf1clip.numpy_removed import ALIASES, RAGGED_JOINERS
from tf1clip.numpy_removed import RAGGED_MAKERS as _MAKERS

NUMPY = "numpy"
# np.array / np.asarray take these keywords besides dtype; a call of them with any other, a dtype
# or a second positional argument is left as written (NumPy 1.x raised there too).
_CONVERTERS = ("array", "asarray")
_KEYWORDS = {"copy", "order", "subok", "ndmin", "like", "device"}


def _constant_display(node: ast.expr) -> Optional[int]:
    """The length of a list or tuple display of constants, else None."""
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in node.elts):
        return len(node.elts)
    return None


def _visibly_regular(node: ast.expr, numpy_root: str) -> bool:
    """True when `node` cannot be a ragged nested sequence, as written."""
    if isinstance(node, ast.Constant) or _constant_display(node) is not None:
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        lengths = {_constant_display(e) for e in node.elts}
        return len(lengths) == 1 and None not in lengths
    if isinstance(node, ast.Call):
        root = node.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id == numpy_root and isinstance(node.func, ast.Attribute)
    return False


def _not_a_sequence(node: ast.expr, name: str) -> bool:
    """True where the argument written cannot be (for the joiners: hold) a ragged Python sequence:
    the result of arithmetic or a comparison (`np.mean(err ** 2)`: NumPy's array, or a TypeError
    for lists), and for the joiners a display whose items are not displays or comprehensions
    (`np.concatenate((rest, images[:end]))`: its items are the arrays as named)."""
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if name in RAGGED_JOINERS and isinstance(node, (ast.List, ast.Tuple)):
        return not any(isinstance(e, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp, ast.Starred))
                       for e in node.elts)
    return False


class HelperRule(Rule):
    """A NumPy rule that wraps calls of some numpy `FUNCTIONS` in a function it writes once into
    the module (`HELPER`, the text `HELPER_LINES`), after the imports."""

    FUNCTIONS: tuple = ()
    HELPER = ""
    HELPER_LINES: tuple = ()
    ANY_FILE = True

    def __init__(self, run):
        super().__init__(run)
        self.rewritten = 0

    @classmethod
    def applies_to(cls, code: str) -> bool:
        return NUMPY in code and any(name in code for name in cls.FUNCTIONS)

    def numpy_function(self, ref: Reference) -> Optional[str]:
        """The name when `ref` is one of numpy's FUNCTIONS (`np.stack`, `from numpy import stack`),
        also under a removed name numpy2 rewrites to it (`np.row_stack`: np.vstack), so that one
        pass does what two would."""
        name = None
        if ref.qname == NUMPY and len(ref.parts) == 1:
            name = ref.parts[0]
        elif not ref.parts and ref.qname.startswith(NUMPY + ".") and ref.qname.count(".") == 1:
            name = ref.qname.rpartition(".")[2]
        if name in ALIASES and ALIASES[name].spelling.startswith("np.") and "." not in ALIASES[name].spelling[3:]:
            name = ALIASES[name].spelling[3:]
        return name if name in self.FUNCTIONS else None

    def leave_module(self, layout) -> None:
        if self.rewritten:
            insert_function(self, layout, self.HELPER, self.HELPER_LINES)


class NumpyRagged(HelperRule):
    DESCRIPTION = ("Keep NumPy 1.x's object array for np.array, np.nan_to_num, np.stack, ... of a value that may "
                   "be a ragged nested sequence (NumPy 2 raises there).")
    RULE = "numpy_ragged"
    TRIGGERS = FUNCTIONS = _MAKERS
    HELPER, HELPER_LINES = HELPER, _HELPER_LINES

    def visit_reference(self, ref: Reference) -> None:
        name = self.numpy_function(ref)
        if name is None:
            return
        call = self.file.parent(ref.node, ref.stmt)
        if not (isinstance(call, ast.Call) and call.func is ref.node) or not call.args \
                or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return
        if name in _CONVERTERS and (len(call.args) != 1 or not {k.arg for k in call.keywords} <= _KEYWORDS):
            return  # a dtype given: NumPy 1.x raised too
        if _visibly_regular(call.args[0], ref.root) or (name not in _CONVERTERS and _not_a_sequence(call.args[0], name)):
            return
        helper = self.file.lookup(HELPER, ref.scope)
        mine = self._ours(helper) if helper else True
        if not mine or (mine == "old" and (name not in _CONVERTERS)):
            why = (f"this file binds {HELPER} itself" if not mine else
                   f"this file's {HELPER} is an older one, for np.array and np.asarray only")
            self.note_human(ref.line, f"{self.file.source(ref.node)}(...): NumPy 2 raises on a ragged nested "
                                      f"sequence where NumPy 1.x made an object array; {why}, so the call is "
                                      "left: check the value by hand")
            return
        self.run.transform(self, call, ref.stmt, _wrapped)
        self.rewritten += 1
        self.note_change(ref.line, f"{self.file.source(ref.node)}(x) → {HELPER}({self.file.source(ref.node)}, x): "
                                   "NumPy 2 raises on a ragged nested sequence, NumPy 1.x made an object array; "
                                   "the same array either way where x is regular")

    def _ours(self, bindings: list):
        """True when every binding of HELPER is a module-level def of this rule's function (a second
        pass); "old" when one of them is the first version, which took no positional arguments."""
        verdict = True
        for binding in bindings:
            node = getattr(binding, "stmt", None)
            if not (isinstance(node, ast.FunctionDef) and node.name == HELPER and node in self.file.tree.body):
                return False
            if node.args.vararg is None:
                verdict = "old"
        return verdict

    VALID = [
        Valid("import numpy as np\n\nx = np.array([1.0, 2.0])\ny = np.asarray([[1, 2], [3, 4]], dtype=np.float32)\n"
              "z = np.array(np.zeros(3))\nw = np.array(v, np.float32)\n"),
        Valid("import tensorflow as tf\n\nx = tf.constant(v)\n"),
    ]
    INVALID = [
        Invalid(
            "import numpy as np\n\n\ndef batches(data):\n    data = np.array(data)\n    return data\n",
            "import numpy as np\n\n\n" + "\n".join(_HELPER_LINES)
            + "\n\n\ndef batches(data):\n    data = " + HELPER + "(np.array, data)\n    return data\n",
        ),
        Invalid(
            # every function that makes an array of its argument, with its other arguments kept
            "import numpy as np\n\nx = np.nan_to_num(scale(m), copy=False)\ny = np.stack(rows, axis=1)\n",
            "import numpy as np\n\n\n" + "\n".join(_HELPER_LINES) + "\n\n\nx = " + HELPER
            + "(np.nan_to_num, scale(m), copy=False)\ny = " + HELPER + "(np.stack, rows, axis=1)\n",
        ),
        Invalid(
            # from numpy import: the name as the file binds it; regular displays left as written
            "from numpy import asarray\nrows = asarray([[1, 2], [3]])\nok = asarray([[1, 2], [3, 4]])\n",
            "from numpy import asarray\n\n\n" + "\n".join(_HELPER_LINES)
            + "\n\n\nrows = " + HELPER + "(asarray, [[1, 2], [3]])\nok = asarray([[1, 2], [3, 4]])\n",
        ),
    ]


def insert_function(rule: Rule, layout, name: str, lines) -> None:
    """Write the function `lines` (named `name`) once into the module, after its imports (and
    docstring), with two blank lines around it; nothing when the module defines it already."""
    if any(isinstance(s, ast.FunctionDef) and s.name == name for s in rule.file.tree.body):
        return
    nl = rule.file.newline
    code = nl.join(("", "", *lines))
    body = layout.body
    lead = 0
    while lead < len(body) and (body[lead].text is not None or body[lead].parts() or _docstring(body[lead])):
        lead += 1
    if lead:
        last = max((e.stmt.last for e in body[:lead] if e.stmt is not None), default=0)
        blanks = 0
        while last + blanks < len(rule.file.lines) and blanks < 2 and not rule.file.lines[last + blanks].strip():
            blanks += 1
        if last + blanks < len(rule.file.lines):
            code += nl * (2 - blanks)  # two blank lines between the function and the next statement
        layout.insert_after(body, body[lead - 1], code, rule.RULE)
    else:
        layout.insert_before(body[0], [code.lstrip(nl) + nl], rule.RULE)


def _docstring(entry) -> bool:
    stmt = entry.stmt
    node = stmt.node if stmt is not None else None
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _wrapped(node: cst.Call) -> cst.Call:
    """np.array(x, ...) as _object_if_ragged(np.array, x, ...)."""
    first = cst.Arg(node.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return node.with_changes(func=cst.Name(HELPER), args=[first, *node.args])


__getattr__ = command_attribute(NumpyRagged)  # NumpyRaggedCommand, for python -m libcst.tool codemod

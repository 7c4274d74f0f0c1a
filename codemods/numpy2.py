"""NumPy names that NumPy 2 removed → their NumPy 2 spelling, with the NumPy 1.x meaning kept.

TF 2.21 runs on NumPy 2; TF 1.x scripts used the NumPy of their time: `np.float`,
`np.asscalar(a)`, `np.reshape(a, newshape=s)`, `np.NaN`, ... The rows are data in
`tf1clip/numpy_removed.py` (shared with the runtime, which gives the same meanings to the
user's files under `tf1clip run`). Names resolve through qualified names, so `import numpy as
onp` and `import numpy` are found; a builtin replacement (`np.float` → `float`) is written only
where the builtin is not rebound; a removed name with no mechanical spelling, or a call of a
shape the row does not describe, is left and reported for a human. Never imports NumPy.
The one compat rule that also runs on files that are not TF 1.x code (`ANY_FILE`).
"""
from __future__ import annotations

import ast
import re
from typing import Optional

import libcst as cst

from codemods.command import command_attribute
from codemods.nodes import ImportStmt, Reference
from codemods.rule import Invalid, Rule, Valid
from tf1clip.numpy_removed import ALIASES, BY_HAND, CALLS, RESHAPE_KEYWORD

NUMPY = "numpy"
# Keywords a CALLS row's call may carry (anything else: left for a human).
_CALL_KEYWORDS = {"in1d": {"assume_unique", "invert", "kind"}, "fromstring": {"dtype", "count"}}
_CALL_POSITIONALS = {"asscalar": (1, 1), "msort": (1, 1), "asfarray": (1, 1), "in1d": (2, 4), "fromstring": (1, 3)}
# Text with none of these is certainly left alone: `newshape`, `from numpy import`, and a
# removed name after a name the file binds to numpy (`np.float`, `numpy.asscalar`).
_ALIAS = re.compile(r"\bnumpy\s+as\s+(\w+)")
_ANYWAY = re.compile(r"newshape|from\s+numpy\s+import")
_NAMES = "|".join(sorted(set(ALIASES) | set(CALLS) | set(BY_HAND)))
# Where an expression that is not an atom needs parentheses to keep its meaning (libcst's
# BinaryOperation, UnaryOperation, Attribute, Subscript, Call, Await: as the value, operand or callee).
_TIGHT_PARENTS = (ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript, ast.Call, ast.Await)
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.SimpleString,
          cst.Integer, cst.Float, cst.Imaginary, cst.ConcatenatedString, cst.FormattedString)


def _atom(node: cst.BaseExpression) -> bool:
    return isinstance(node, _ATOMS) or bool(node.lpar)


def _parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    return node if _atom(node) else node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _tight(parent: Optional[ast.AST], node: ast.AST) -> bool:
    """True when `node` sits in `parent` where libcst would print a non-atom without parentheses
    that change its meaning (an operand, a callee, the value of an attribute or subscript)."""
    if not isinstance(parent, _TIGHT_PARENTS):
        return False
    if isinstance(parent, ast.Call):
        return parent.func is node
    if isinstance(parent, ast.Subscript):
        return parent.value is node
    return True


class Numpy2(Rule):
    DESCRIPTION = "Rewrite NumPy names removed in NumPy 2 (np.float, np.asscalar, newshape=, ...) to their NumPy 2 spelling."
    RULE = "numpy2"
    TRIGGERS = (NUMPY,)
    ANY_FILE = True

    @classmethod
    def applies_to(cls, code: str) -> bool:
        if NUMPY not in code:
            return False
        if _ANYWAY.search(code):
            return True
        aliases = {NUMPY, *(m.group(1) for m in _ALIAS.finditer(code))}
        gap = r"(?:\s|\\\n)*"  # spaces, newlines, backslash continuations
        return re.search(r"\b(?:%s)%s\.%s(?:%s)\b" % ("|".join(aliases), gap, gap, _NAMES), code) is not None

    # -- np.float, np.NaN, np.asscalar(a), np.reshape(a, newshape=s) ---------------------------
    def visit_reference(self, ref: Reference) -> None:
        if not ref.parts or ref.qname != NUMPY:  # `np.X` where np is numpy itself
            return
        name = ref.parts[0]
        node = ref.links[0]
        parent = self.file.parent(node, ref.stmt)
        call = parent if isinstance(parent, ast.Call) and parent.func is node else None
        if call is not None and name == RESHAPE_KEYWORD[0] and any(k.arg == RESHAPE_KEYWORD[1] for k in call.keywords):
            self._reshape(ref, call)
        elif call is not None and name in CALLS:
            self._call(ref, call, name)
        elif name in ALIASES:
            self._alias(ref, name, parent)
        elif name in CALLS:
            self.note_human(ref.line, f"{self.file.source(node)} is used as a value: NumPy 2 removed it; its NumPy "
                                      f"1.x meaning is {CALLS[name].spelling.replace('{0}', 'a').replace('{rest}', ', ...')}")
        elif name in BY_HAND:
            self.note_human(ref.line, f"{self.file.source(node)}: NumPy 2 removed it; {BY_HAND[name]}")

    def _alias(self, ref: Reference, name: str, parent) -> None:
        row = ALIASES[name]
        dotted = self.file.source(ref.links[0])
        if "np." not in row.spelling and row.spelling.isidentifier() and self.file.lookup(row.spelling, ref.scope):
            self.note_human(ref.line, f"{dotted}: NumPy 2 removed it; it meant the builtin {row.spelling}, "
                                      f"which this scope rebinds: write it by hand")
            return
        new = cst.parse_expression(row.spelling.replace("np.", f"{ref.root}.") if "np." in row.spelling else row.spelling)
        if _tight(parent, ref.links[0]):
            new = _parenthesized(new)
        code = _code(new)
        self.run.replace(self, ref, 1, code)
        self.note_change(ref.line, f"{dotted} → {code}: removed in NumPy {row.removed}; NumPy 1.x: {row.numpy1}")

    def _call(self, ref: Reference, call: ast.Call, name: str) -> None:
        row = CALLS[name]
        func = self.file.source(call.func)
        low, high = _CALL_POSITIONALS[name]
        keywords = {k.arg for k in call.keywords}
        if any(isinstance(a, ast.Starred) for a in call.args) or None in keywords \
                or not low <= len(call.args) <= high or not keywords <= _CALL_KEYWORDS.get(name, set()):
            self.note_human(ref.line, f"{func}(...): NumPy 2 removed it and this call's arguments are not of the "
                                      f"form rewritten here; NumPy 1.x meaning: {row.numpy1}")
            return
        alias = ref.root

        def make(node: cst.Call) -> cst.BaseExpression:
            args = list(node.args)
            positional = [a for a in args if a.keyword is None]
            value = positional[0].value
            first = _code(_parenthesized(value) if name == "asscalar" else value)
            rest = "".join(", " + _code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for a in args[1:])
            return cst.parse_expression(row.spelling.replace("np.", f"{alias}.").replace("{0}", first)
                                        .replace("{rest}", rest))

        self.run.transform(self, call, ref.stmt, make)
        self.note_change(ref.line, f"{func}(...) → {row.spelling.replace('{0}', 'a').replace('{rest}', ', ...')}: "
                                   f"removed in NumPy {row.removed}; NumPy 1.x: {row.numpy1}")

    def _reshape(self, ref: Reference, call: ast.Call) -> None:
        keyword = RESHAPE_KEYWORD[1]
        a_kw = [k for k in call.keywords if k.arg == "a"]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
                or len(call.args) + len(a_kw) != 1:
            self.note_human(ref.line, f"np.reshape(..., {keyword}=...): NumPy 2 removed the keyword; "
                                      "pass the shape as the second argument")
            return
        self.run.transform(self, call, ref.stmt, _reshaped)
        self.note_change(ref.line, f"np.reshape(..., {keyword}=s) → np.reshape(a, s): NumPy 2.1 renamed "
                                   f"`{keyword}` to `shape` and dropped the old name by 2.4; the shape is "
                                   "passed by position, as every NumPy takes it")

    # -- from numpy import float_ ------------------------------------------------------------
    def visit_import(self, imp: ImportStmt) -> None:
        if imp.is_import or imp.module != NUMPY or imp.star:
            return
        for alias in imp.aliases:
            name = alias.name
            row = ALIASES.get(name)
            spelling = row.spelling if row is not None else ""
            if spelling.startswith("np.") and spelling[3:].isidentifier():
                bound = alias.asname or name
                self.run.retarget_alias(self, alias, spelling[3:])
                self.note_change(imp.line, f"from numpy import {name} → {spelling[3:]} as {bound}: removed in "
                                           f"NumPy {row.removed}; NumPy 1.x: {row.numpy1}")
            elif name in ALIASES or name in CALLS or name in BY_HAND:
                self.note_human(imp.line, f"from numpy import {name}: NumPy 2 removed it; "
                                          f"{BY_HAND.get(name) or 'use its NumPy 2 spelling at each use'}")

    VALID = [
        Valid("import numpy as np\n\nx = np.zeros(3, dtype=np.float32)\ny = np.reshape(x, (3, 1))\n"),
        # Not NumPy: another module's `float`, and a local object called np.
        Valid("import tensorflow as tf\n\nx = tf.float32\n"),
        Valid("class np:\n    float = float\n\nx = np.float(1)\n"),
        Valid("import numpy as np\n\ny = np.ndarray.reshape(x, newshape=(2, 3))\n"),
    ]
    INVALID = [
        Invalid(
            "import numpy as np\n\nx = np.zeros(3, dtype=np.float)\nn = np.int(x.sum())\nok = x.astype(np.bool)\n",
            "import numpy as np\n\nx = np.zeros(3, dtype=float)\nn = int(x.sum())\nok = x.astype(bool)\n",
        ),
        Invalid(
            "import numpy as onp\n\nw = onp.reshape(onp.arange(6), newshape=(2, 3))\nv = onp.reshape(a=w, newshape=[-1], order='F')\n",
            "import numpy as onp\n\nw = onp.reshape(onp.arange(6), (2, 3))\nv = onp.reshape(w, [-1], order='F')\n",
        ),
        Invalid(
            "import numpy\n\nloss = numpy.asscalar(a + b)\nk = numpy.asscalar(v)\nr = numpy.rank(m)\n",
            "import numpy\n\nloss = (a + b).item()\nk = v.item()\nr = numpy.ndim(m)\n",
        ),
        Invalid(
            "import numpy as np\n\nlo = -np.Inf\nbad = np.NaN\nfloor = 2 * np.NINF\nt = np.float_(x)\n",
            "import numpy as np\n\nlo = -np.inf\nbad = np.nan\nfloor = 2 * (-np.inf)\nt = np.float64(x)\n",
        ),
        Invalid(
            "import numpy as np\n\nm = np.in1d(labels, keep, invert=True)\nimg = np.fromstring(raw, dtype=np.uint8)\n",
            "import numpy as np\n\nm = np.isin(labels, keep, invert=True).ravel()\nimg = np.frombuffer(raw, dtype=np.uint8).copy()\n",
        ),
        Invalid(
            "from numpy import float_, string_ as S\nimport numpy as np\n\nx = float_(1)\n",
            "from numpy import float64 as float_, bytes_ as S\nimport numpy as np\n\nx = float_(1)\n",
        ),
        Invalid(
            # `float` is rebound in f: that use is left for a human, the other rewritten.
            "import numpy as np\n\ndef f(float):\n    return np.float(float)\n\ny = np.float(2)\n",
            "import numpy as np\n\ndef f(float):\n    return np.float(float)\n\ny = float(2)\n",
        ),
    ]


def _reshaped(node: cst.Call) -> cst.Call:
    """np.reshape(a, newshape=s, ...) as np.reshape(a, s, ...)."""
    args = list(node.args)
    keyword = RESHAPE_KEYWORD[1]
    a_kw = [a for a in args if a.keyword is not None and a.keyword.value == "a"]
    positional = [a for a in args if a.keyword is None]
    first = (a_kw or positional)[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
    shape = next(a for a in args if a.keyword is not None and a.keyword.value == keyword)
    shape = shape.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
    others = [a for a in args if a.keyword is not None and a.keyword.value not in ("a", keyword)]
    new_args = [first, shape, *others]
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    fixed = [a.with_changes(comma=comma) if i < len(new_args) - 1 and not isinstance(a.comma, cst.Comma) else a
             for i, a in enumerate(new_args)]
    fixed[-1] = fixed[-1].with_changes(comma=args[-1].comma)
    return node.with_changes(args=fixed)


__getattr__ = command_attribute(Numpy2)  # Numpy2Command, for python -m libcst.tool codemod

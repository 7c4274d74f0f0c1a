"""NumPy names that NumPy 2 removed → their NumPy 2 spelling, with the NumPy 1.x meaning kept.

TF 2.21 runs on NumPy 2; TF 1.x scripts used the NumPy of their time: `np.float`,
`np.asscalar(a)`, `np.reshape(a, newshape=s)`, `np.NaN`, ... The rows are data in
`tf1clip/numpy_removed.py` (shared with the runtime, which gives the same meanings to the
user's files under `tf1clip run`). Names resolve through qualified names, so `import numpy as
onp` and `import numpy` are found; a builtin replacement (`np.float` → `float`) is written only
where the builtin is not rebound; a removed name with no mechanical spelling, or a call of a
shape the row does not describe, is left and reported for a human. Never imports NumPy.
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst
from libcst.metadata import BuiltinAssignment, ParentNodeProvider, PositionProvider, ScopeProvider

from codemods._base import Invalid, TFCommand, Valid
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
# Where an expression that is not an atom needs parentheses to keep its meaning.
_TIGHT_PARENTS = (cst.BinaryOperation, cst.UnaryOperation, cst.Attribute, cst.Subscript, cst.Call, cst.Await)


def _atom(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Tuple, cst.Dict,
                             cst.Set, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary,
                             cst.ConcatenatedString, cst.FormattedString)) or bool(node.lpar)


def _parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    return node if _atom(node) else node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class Numpy2Command(TFCommand):
    DESCRIPTION = "Rewrite NumPy names removed in NumPy 2 (np.float, np.asscalar, newshape=, ...) to their NumPy 2 spelling."
    RULE = "numpy2"
    METADATA_DEPENDENCIES = (ScopeProvider, PositionProvider, ParentNodeProvider)
    TRIGGERS = (NUMPY,)

    @classmethod
    def applies_to(cls, code: str) -> bool:
        if NUMPY not in code:
            return False
        if _ANYWAY.search(code):
            return True
        aliases = {NUMPY, *(m.group(1) for m in _ALIAS.finditer(code))}
        gap = r"(?:\s|\\\n)*"  # spaces, newlines, backslash continuations
        return re.search(r"\b(?:%s)%s\.%s(?:%s)\b" % ("|".join(aliases), gap, gap, _NAMES), code) is not None

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self._replacements: dict[cst.CSTNode, cst.CSTNode] = {}
        self._calls: dict[cst.CSTNode, str] = {}  # call -> its row's name, rewritten on leave
        self._done: set[int] = set()
        return tree.visit(self)

    # -- what a node is ----------------------------------------------------------------------
    def _removed_name(self, node: cst.BaseExpression) -> Optional[str]:
        """'float' for a reference to numpy.float through a module alias (`np.float`)."""
        if not isinstance(node, cst.Attribute):
            return None
        qname = self.imported_name(node)
        if qname is None or not qname.startswith(NUMPY + ".") or qname.count(".") != 1:
            return None
        if self.imported_name(node.value) != NUMPY:  # `np.float` where np is numpy itself
            return None
        return qname.split(".", 1)[1]

    def _numpy_expr(self, alias: cst.BaseExpression, spelling: str) -> cst.BaseExpression:
        """`spelling` with its `np` written as the file's own numpy expression."""
        code = self.module.code_for_node(alias)
        return cst.parse_expression(spelling.replace("np.", f"{code}.") if "np." in spelling else spelling)

    def _builtin_free(self, node: cst.CSTNode, name: str) -> bool:
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None:
            return False
        return all(isinstance(a, BuiltinAssignment) for a in scope[name])

    # -- attributes: np.float, np.NaN, ... --------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) in self._done:
            return
        name = self._removed_name(node)
        if name is None:
            return
        dotted = self.module.code_for_node(node)
        row = ALIASES.get(name)
        if row is not None:
            if "np." not in row.spelling and row.spelling.isidentifier() and not self._builtin_free(node, row.spelling):
                self.note_human(node, f"{dotted}: NumPy 2 removed it; it meant the builtin {row.spelling}, "
                                      f"which this scope rebinds: write it by hand")
                return
            new = self._numpy_expr(node.value, row.spelling)
            parent = self.get_metadata(ParentNodeProvider, node, None)
            if isinstance(parent, _TIGHT_PARENTS):
                new = _parenthesized(new)
            self._replacements[node] = new
            self.note_change(node, f"{dotted} → {self.module.code_for_node(new)}: removed in NumPy {row.removed}; "
                                   f"NumPy 1.x: {row.numpy1}")
        elif name in CALLS:
            self.note_human(node, f"{dotted} is used as a value: NumPy 2 removed it; "
                                  f"its NumPy 1.x meaning is {CALLS[name].spelling.replace('{0}', 'a').replace('{rest}', ', ...')}")
        elif name in BY_HAND:
            self.note_human(node, f"{dotted}: NumPy 2 removed it; {BY_HAND[name]}")

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._replacements.get(original_node, updated_node)  # type: ignore[return-value]

    # -- calls: np.asscalar(a), np.reshape(a, newshape=s), ... ----------------------------
    def visit_Call(self, node: cst.Call) -> None:
        name = self._removed_name(node.func)
        if name == RESHAPE_KEYWORD[0] and any(a.keyword is not None and a.keyword.value == RESHAPE_KEYWORD[1]
                                              for a in node.args):
            if self._reshape(node) is None:
                self.note_human(node, f"np.reshape(..., {RESHAPE_KEYWORD[1]}=...): NumPy 2 removed the keyword; "
                                      "pass the shape as the second argument")
                return
            self._calls[node] = name
            self.note_change(node, f"np.reshape(..., {RESHAPE_KEYWORD[1]}=s) → np.reshape(a, s): NumPy 2.1 renamed "
                                   f"`{RESHAPE_KEYWORD[1]}` to `shape` and dropped the old name by 2.4; the shape is "
                                   "passed by position, as every NumPy takes it")
        elif name in CALLS:
            self._done.add(id(node.func))
            row = CALLS[name]
            if self._call(node, name) is None:
                self.note_human(node, f"{self.module.code_for_node(node.func)}(...): NumPy 2 removed it and this "
                                      f"call's arguments are not of the form rewritten here; NumPy 1.x meaning: "
                                      f"{row.numpy1}")
                return
            self._calls[node] = name
            self.note_change(node, f"{self.module.code_for_node(node.func)}(...) → "
                                   f"{row.spelling.replace('{0}', 'a').replace('{rest}', ', ...')}: removed in NumPy "
                                   f"{row.removed}; NumPy 1.x: {row.numpy1}")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        name = self._calls.get(original_node)
        if name is None:
            return updated_node
        new = self._reshape(updated_node) if name == RESHAPE_KEYWORD[0] else self._call(updated_node, name)
        return new if new is not None else updated_node

    def _call(self, node: cst.Call, name: str) -> Optional[cst.BaseExpression]:
        """The NumPy 2 spelling of this call of a CALLS row, or None when its arguments do not fit."""
        args = list(node.args)
        if any(a.star for a in args):
            return None
        positional = [a for a in args if a.keyword is None]
        keywords = [a.keyword.value for a in args if a.keyword is not None]
        low, high = _CALL_POSITIONALS[name]
        if not low <= len(positional) <= high or not set(keywords) <= _CALL_KEYWORDS.get(name, set()):
            return None
        if args[:len(positional)] != positional:
            return None
        value = positional[0].value
        first = self.module.code_for_node(_parenthesized(value) if name == "asscalar" else value)
        rest = "".join(", " + self.module.code_for_node(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                       for a in args[1:])
        alias = self.module.code_for_node(node.func.value)  # type: ignore[attr-defined]
        code = CALLS[name].spelling.replace("np.", f"{alias}.").replace("{0}", first).replace("{rest}", rest)
        return cst.parse_expression(code)

    @staticmethod
    def _reshape(node: cst.Call) -> Optional[cst.Call]:
        """np.reshape(a, newshape=s, ...) as np.reshape(a, s, ...), or None when not of that form."""
        args = list(node.args)
        keyword = RESHAPE_KEYWORD[1]
        a_kw = [a for a in args if a.keyword is not None and a.keyword.value == "a"]
        positional = [a for a in args if a.keyword is None]
        if any(a.star for a in args) or len(positional) + len(a_kw) != 1 or args[:len(positional)] != positional:
            return None
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

    # -- from numpy import float_ ------------------------------------------------------------
    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        if original_node.relative or self.module.code_for_node(original_node.module) != NUMPY \
                or isinstance(original_node.names, cst.ImportStar):
            return updated_node
        names = []
        changed = False
        for alias in updated_node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else ""
            row = ALIASES.get(name)
            spelling = row.spelling if row is not None else ""
            if spelling.startswith("np.") and spelling[3:].isidentifier():
                bound = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                names.append(alias.with_changes(name=cst.Name(spelling[3:]), asname=cst.AsName(name=cst.Name(bound))))
                self.note_change(original_node, f"from numpy import {name} → {spelling[3:]} as {bound}: removed in "
                                                f"NumPy {row.removed}; NumPy 1.x: {row.numpy1}")  # type: ignore[union-attr]
                changed = True
            else:
                if name in ALIASES or name in CALLS or name in BY_HAND:
                    self.note_human(original_node, f"from numpy import {name}: NumPy 2 removed it; "
                                                   f"{BY_HAND.get(name) or 'use its NumPy 2 spelling at each use'}")
                names.append(alias)
        return updated_node.with_changes(names=names) if changed else updated_node

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

"""A module-level helper that builds graph state is inlined at its one module-level call.

BERT-style code puts the optimizer, the global step, `tf.gradients`, the clip and the update
op in a helper (`train_op = create_optimizer(loss, lr, ...)`). In TF1 the helper's body runs
once, at the call, on the graph: putting that body at the call site (arguments substituted
for the parameters, locals that would clash renamed, `return value` bound to the call's
target) builds exactly the same graph, which `train_step` then converts like any module-level
script. The helper's name, docstring and comments stay as comments above what it built.

Only what is provably the same is inlined: one call, at module level, after the def, of a
plain function (positional-or-keyword parameters with literal defaults, arguments that are
names or literals, one `return` at the end, no nested scopes that could capture). Any other
helper that builds graph state raises `Refuse` (train_step would not convert it either).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.tf2._base import NameTransformer, Names, Note, Refuse, code, fresh, names_in, target_names, walk
from codemods.tf2.train_step import comment_lines, graph_state_built_in

RULE = "inline_helpers"
DESCRIPTION = "Inline a helper that builds graph state (optimizer, gradients, train op) at its one module-level call."

EXAMPLES = [
    ("import tensorflow as tf\n\n\n"
     "def create_optimizer(loss, init_lr, clip_norm=1.0):\n"
     '    """Creates an optimizer training op."""\n'
     "    optimizer = tf.train.GradientDescentOptimizer(init_lr)\n"
     "    tvars = tf.trainable_variables()\n"
     "    grads = tf.gradients(loss, tvars)\n"
     "    grads, _ = tf.clip_by_global_norm(grads, clip_norm)  # global norm\n"
     "    train_op = optimizer.apply_gradients(zip(grads, tvars))\n"
     "    return train_op\n\n\n"
     "grads = None\n"
     "train_op = create_optimizer(cost, 0.1)\n"
     "print(grads)\n",
     "import tensorflow as tf\n\n\n"
     "grads = None\n\n"
     "# create_optimizer(cost, 0.1), inlined: Creates an optimizer training op.\n"
     "optimizer = tf.train.GradientDescentOptimizer(0.1)\n"
     "tvars = tf.trainable_variables()\n"
     "grads_2 = tf.gradients(cost, tvars)\n"
     "grads_2, _ = tf.clip_by_global_norm(grads_2, 1.0)  # global norm\n"
     "train_op = optimizer.apply_gradients(zip(grads_2, tvars))\n"
     "print(grads)\n"),
    ("import tensorflow as tf\n\n\n"
     "def make_train_op(loss, lr):\n"
     "    return tf.train.AdamOptimizer(lr).minimize(loss)\n\n\n"
     "op = make_train_op(loss=cost, lr=1e-3)\n",
     "import tensorflow as tf\n\n\n"
     "# make_train_op(loss=cost, lr=1e-3), inlined\n"
     "op = tf.train.AdamOptimizer(1e-3).minimize(cost)\n"),
    # not graph state: left alone
    ("import tensorflow as tf\n\n\ndef model(x):\n    return tf.matmul(x, x)\n\n\ny = model(x)\n",
     "import tensorflow as tf\n\n\ndef model(x):\n    return tf.matmul(x, x)\n\n\ny = model(x)\n"),
]


def _simple(node: cst.BaseExpression) -> bool:
    """A value that reads the same wherever it is evaluated inside the helper's body."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Name)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    if isinstance(node, cst.Attribute):
        return _simple(node.value) and isinstance(node.value, (cst.Name, cst.Attribute))
    return False


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    return _simple(node) and not isinstance(node, (cst.Name, cst.Attribute))


def _loaded(node: cst.CSTNode) -> set:
    """Names under `node` other than those only bound there (assignment, for and as targets)."""
    stored: set = set()
    for n in walk(node):
        if isinstance(n, cst.AssignTarget) or isinstance(n, (cst.For, cst.CompFor)):
            stored |= {id(t) for t in _target_nodes(n.target)}
        elif isinstance(n, cst.AsName):
            stored |= {id(t) for t in _target_nodes(n.name)}
    return {n.value for n in walk(node) if isinstance(n, cst.Name) and id(n) not in stored} & names_in(node)


def _target_nodes(target) -> list:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for el in target.elements for t in _target_nodes(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_nodes(target.value)
    return []


class _Substitute(NameTransformer):
    """Renames locals and puts the arguments where the parameters were read."""

    def __init__(self, values: dict):
        self.values = values
        super().__init__()

    def leave_Name(self, original, updated):
        if self.skipped(original) or original.value not in self.values:
            return updated
        return self.values[original.value]


class _Inliner:
    def __init__(self, module: cst.Module):
        self.names = Names.of_module(module)
        self.module = self.names.module
        self.notes: list = []

    def refuse(self, node, reason: str):
        raise Refuse(self.names.line(node), reason)

    def run(self) -> tuple:
        body = list(self.module.body)
        helpers = {}
        for i, st in enumerate(body):
            if isinstance(st, cst.FunctionDef) and graph_state_built_in(self.names, st):
                helpers[st.name.value] = i
        if not helpers:
            return self.module, [(st, None) for st in body]
        plan: dict = {}  # index of the call statement -> its replacement statements
        for name, i in helpers.items():
            plan[self.call_index(name, i, body)] = self.inline(body[i], body[self.call_index(name, i, body)], body)
        out = []
        for i, st in enumerate(body):
            if body[i].__class__ is cst.FunctionDef and i in helpers.values():
                continue
            out.extend(plan.get(i, [(st, st)]))
        return self.module.with_changes(body=[s for s, _ in out]), out

    def call_index(self, name: str, at: int, body: list) -> int:
        """The index of the one module-level statement `target = name(...)` / `name(...)`."""
        uses = [n for n in walk(self.module) if isinstance(n, cst.Name) and n.value == name]
        found = None
        for j, st in enumerate(body):
            small = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
            call = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == name
                    and (not isinstance(small, cst.Assign) or len(small.targets) == 1)):
                found = j if found is None else -1
        if found is None or found < 0 or found < at or len(uses) != 2:
            self.refuse(body[at], f"helper `{name}` builds graph state ({', '.join(graph_state_built_in(self.names, body[at]))})"
                                  " but is not called exactly once, at module level, as `x = "
                                  f"{name}(...)`: it is inlined only then (TF1 built its graph at that one call)")
        return found

    def inline(self, fd: cst.FunctionDef, call_st: cst.SimpleStatementLine, body: list) -> list:
        name = fd.name.value
        small = call_st.body[0]
        call = small.value
        target = small.targets[0].target if isinstance(small, cst.Assign) else None
        params = fd.params
        if (fd.decorators or fd.asynchronous or params.star_arg is not cst.MaybeSentinel.DEFAULT
                or params.kwonly_params or params.star_kwarg or params.posonly_params):
            self.refuse(fd, f"helper `{name}` has decorators, *args/**kwargs or keyword-only parameters: not inlined")
        if not isinstance(fd.body, cst.IndentedBlock):
            self.refuse(fd, f"helper `{name}` is written on one line: not inlined")
        stmts = list(fd.body.body)
        doc = None
        if (stmts and isinstance(stmts[0], cst.SimpleStatementLine) and isinstance(stmts[0].body[0], cst.Expr)
                and isinstance(stmts[0].body[0].value, cst.SimpleString)):
            doc = stmts.pop(0).body[0].value.evaluated_value
        returned: Optional[cst.BaseExpression] = None
        last = stmts[-1] if stmts else None
        ret_st = None
        if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return):
            ret_st = stmts.pop()
            returned = last.body[0].value
        for n in walk(cst.Module(body=stmts)):
            if isinstance(n, (cst.Return, cst.Global, cst.Nonlocal, cst.Yield, cst.Await, cst.FunctionDef,
                              cst.ClassDef, cst.Lambda, cst.Import, cst.ImportFrom, cst.Del)):
                self.refuse(n, f"helper `{name}`: `{code(n).strip().splitlines()[0]}` inside it (an early return, "
                               "a nested scope, global/del) is not inlined")
        if returned is not None and target is None:
            self.refuse(call_st, f"the value returned by `{name}(...)` is dropped: not inlined")

        # parameters -> the call's arguments (literal defaults where not given)
        values: dict = {}
        positional = [p for p in params.params]
        for k, a in enumerate(call.args):
            if a.star:
                self.refuse(call_st, f"`{name}(*args/**kwargs)` is not inlined")
            if a.keyword is None:
                if k >= len(positional):
                    self.refuse(call_st, f"too many arguments to `{name}`")
                p = positional[k].name.value
            else:
                p = a.keyword.value
                if p not in {q.name.value for q in positional}:
                    self.refuse(call_st, f"`{name}` has no parameter `{p}`")
            if p in values:
                self.refuse(call_st, f"`{name}` gets `{p}` twice")
            if not _simple(a.value):
                self.refuse(call_st, f"argument `{code(a.value)}` of `{name}` is an expression (a name or a literal "
                                     "is inlined exactly; an expression would be evaluated at each use)")
            values[p] = a.value
        for p in positional:
            if p.name.value not in values:
                if p.default is None or not _literal(p.default):
                    self.refuse(fd, f"parameter `{p.name.value}` of `{name}` has no literal default and is not given")
                values[p.name.value] = p.default

        # locals: renamed where the name means something else outside the helper
        locals_: set = set()
        for n in walk(cst.Module(body=stmts)):
            if isinstance(n, cst.AssignTarget):
                locals_ |= set(target_names(n.target))
            elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For)):
                locals_ |= set(target_names(n.target))
            elif isinstance(n, cst.AsName):
                locals_ |= set(target_names(n.name))
            elif isinstance(n, cst.NamedExpr):
                locals_ |= set(target_names(n.target))
            elif isinstance(n, cst.CompFor) and set(target_names(n.target)) & (set(values) | locals_):
                self.refuse(n, f"helper `{name}`: a comprehension variable shadows a parameter or local")
        if locals_ & set(values):
            self.refuse(fd, f"helper `{name}` rebinds its parameter(s) {sorted(locals_ & set(values))}: not inlined")
        outside: set = set()  # names read anywhere else: a local of the same name would clobber them
        for st in body:
            if st is not fd:
                outside |= _loaded(st)
        taken = names_in(self.module)
        renames: dict = {}
        if (returned is not None and isinstance(returned, cst.Name) and returned.value in locals_
                and isinstance(target, cst.Name) and target.value not in names_in(fd) - {returned.value}):
            renames[returned.value] = target.value  # `x = f()` with `return x_local`: the local is `x`
            returned = None
            ret_st = None
        for local in sorted(locals_ - set(renames)):
            if local in outside:
                renames[local] = fresh(local, taken | set(renames.values()))
                taken.add(renames[local])
        sub = _Substitute({**{k: cst.Name(v) for k, v in renames.items()}, **values})

        out = []
        for st in stmts:
            out.append((st.visit(sub), st))
        if returned is not None:
            assign = cst.Assign(targets=[cst.AssignTarget(target)], value=returned.visit(sub))
            out.append((ret_st.with_changes(body=[assign]), ret_st))
        if not out:
            self.refuse(fd, f"helper `{name}` is empty")
        header = f"{code(call)}, inlined" + (f": {' '.join(doc.split(chr(10) * 2)[0].split())}" if doc else "")
        comments = [l for l in fd.leading_lines if l.comment is not None]
        first, orig = out[0]
        blank = list(call_st.leading_lines) or [cst.EmptyLine()]
        out[0] = (first.with_changes(leading_lines=[*blank, *comments, *comment_lines(header),
                                                    *first.leading_lines]), orig)
        self.notes.append(Note(self.names.line(call_st), RULE, "change",
                               f"`{name}(...)` inlined at its one call: its body runs there in TF1 (builds "
                               + ", ".join(graph_state_built_in(self.names, fd)) + ")"))
        return out

    def line_map(self, pairs: list, new: cst.Module) -> list:
        return statement_line_map(self.names, pairs, new)


def statement_line_map(names: Names, pairs: list, new: cst.Module) -> list:
    """Lines of `new` → lines of the input, from (new statement, input statement it came from)
    pairs in `new`'s body order: a statement's lines keep their offsets, its leading lines
    take its first line."""
    lines = [0]
    lines += list(range(1, len(new.header) + 1))
    empty = cst.Module(body=[])
    for st, orig in pairs:
        text = empty.code_for_node(st)
        n_stmt = len(empty.code_for_node(st.with_changes(leading_lines=[])).splitlines())
        n_all = len(text.splitlines())
        start = names.line(orig if orig is not None else st)
        lines += [start] * (n_all - n_stmt) + [start + k for k in range(n_stmt)]
    total = len(new.code.splitlines())
    lines += [lines[-1]] * (total + 2 - len(lines))
    return lines[:total + 2]


def transform_with_lines(module: cst.Module) -> tuple:
    """(module, notes, line map: new line → input line). Raises Refuse."""
    inliner = _Inliner(module)
    new, pairs = inliner.run()
    if new is inliner.module:
        return module, [], list(range(len(module.code.splitlines()) + 2))
    return new, inliner.notes, inliner.line_map(pairs, new)


def transform(module: cst.Module) -> tuple:
    new, notes, _ = transform_with_lines(module)
    return new, notes

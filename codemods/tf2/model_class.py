"""A model class that builds its graph in `__init__` → a class holding the TF2 state, with the
step functions as `@tf.function` methods (part of `train_step`).

The PTB / char-rnn tutorial shape: `class Model` makes placeholders, layers, the loss and
`self.train_op` in `__init__`; the module makes one instance and runs `model.train_op` in a
Session loop. In TF1 the `__init__` body runs once, at `model = Model(...)`, on the one graph,
so the script is first *flattened*: the parameters are bound to the call's arguments there,
`self.x` / `model.x` become the name `x`, and the body takes the place of the call. `train_step`
converts that like any module-level script; then it is *refolded*: the state that the body
created (layers, variables, optimizers, variable lists) is made in `__init__` as `self.<name>`,
each step function reading that state becomes a method (`@tf.function` on a method traces per
instance; `self` is not part of the input signature), and the loop calls `model.<step>(...)`.

Only what is provably the same is refolded: one class with only `__init__` (plus a docstring),
instantiated once at module level with names or literals as arguments; `self` used only as
`self.<attribute>`, the instance only as `model.<attribute>` at module level; parameter,
attribute and module names distinct. Anything else raises `Refuse` with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from codemods.tf2._base import NameTransformer, Names, Refuse, code, fresh, names_in, target_names, walk
from codemods.tf2.inline_helpers import _literal, _loaded, _simple, statement_line_map

EXAMPLES = [
    ("import tensorflow as tf\n\n\n"
     "class Model(object):\n"
     "    def __init__(self, lr):\n"
     "        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     '        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())\n'
     "        self.loss = tf.reduce_mean(tf.square(tf.matmul(self.x, w) - 1.0))\n"
     "        self.train_op = tf.train.GradientDescentOptimizer(lr).minimize(self.loss)\n\n\n"
     "model = Model(0.1)\n"
     "with tf.Session() as sess:\n"
     "    sess.run(tf.global_variables_initializer())\n"
     "    for _ in range(3):\n"
     "        _, l = sess.run([model.train_op, model.loss], feed_dict={model.x: [[1.0, 2.0]]})\n",
     "import tensorflow as tf\n\n\n"
     "class Model(object):\n"
     "    def __init__(self, lr):\n"
     '        self.w = tf.Variable(tf.zeros_initializer()([2, 1], dtype=tf.float32), name="w")\n'
     "        self.train_op_optimizer = tf.keras.optimizers.SGD(lr)\n"
     "        self.variables = [self.w]\n\n"
     "    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])\n"
     "    def train_step(self, x):\n"
     "        with tf.GradientTape() as tape:\n"
     "            loss = tf.reduce_mean(tf.square(tf.matmul(x, self.w) - 1.0))\n"
     "        gradients = tape.gradient(loss, self.variables)\n"
     "        self.train_op_optimizer.apply_gradients(zip(gradients, self.variables))\n"
     "        return loss\n\n\n"
     "model = Model(0.1)\n\n"
     "# The steps are called through their concrete functions, traced here once (an input_signature\n"
     "# allows one graph): calling the decorated function matches its arguments to a trace every time,\n"
     "# about 0.1 ms a call.\n"
     "model.train_step = model.train_step.get_concrete_function()\n"
     "for _ in range(3):\n"
     "    l = model.train_step([[1.0, 2.0]])\n"),
]


@dataclass
class Flat:
    """The flattened script and what refolding it needs."""

    module: cst.Module
    cls: cst.ClassDef
    init: cst.FunctionDef
    instance: str
    self_name: str
    inst_stmt: cst.SimpleStatementLine
    params: list                  # __init__'s parameter names (without self)
    marker: int                   # body index of the class's place holder (`pass`)
    region: tuple                 # body indices [start, end) of the bindings + __init__ body
    line_map: list                # flat line -> input line
    line: int                     # the class's line in the input
    attrs: set = field(default_factory=set)


def _self_attr(node, self_name: str) -> Optional[str]:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == self_name:
        return node.attr.value
    return None


class _Flatten(NameTransformer):
    """`self.x` (or `model.x`) → `x`; locals renamed."""

    def __init__(self, owner: str, renames: dict):
        self.owner, self.renames = owner, renames
        super().__init__()

    def leave_Attribute(self, original, updated):
        attr = _self_attr(original, self.owner)
        return cst.Name(attr) if attr is not None else updated

    def leave_Name(self, original, updated):
        if self.skipped(original) or original.value not in self.renames:
            return updated
        return cst.Name(self.renames[original.value])


def flatten(module: cst.Module, state_of) -> Optional[Flat]:
    """The flat script, or None when no class builds graph state. Raises Refuse."""
    names = Names.of_module(module)
    module = names.module
    body = list(module.body)
    classes = [i for i, st in enumerate(body) if isinstance(st, cst.ClassDef) and state_of(names, st)]
    if not classes:
        return None

    def refuse(node, reason):
        raise Refuse(node if isinstance(node, int) else names.line(node), reason)

    if len(classes) > 1:
        refuse(body[classes[1]], "several classes build graph state: only one model class is converted")
    c = classes[0]
    cls = body[c]
    cname = cls.name.value
    what = ", ".join(state_of(names, cls))
    lead = f"class `{cname}` builds graph state ({what}): "
    bases_ok = all(isinstance(b.value, cst.Name) and b.value.value == "object" and b.keyword is None for b in cls.bases)
    if cls.decorators or not bases_ok or cls.keywords:
        refuse(cls, lead + "a base class other than `object`, a decorator or a metaclass is not converted")
    members = list(cls.body.body)
    if (members and isinstance(members[0], cst.SimpleStatementLine) and isinstance(members[0].body[0], cst.Expr)
            and isinstance(members[0].body[0].value, cst.SimpleString)):
        members = members[1:]
    if len(members) != 1 or not isinstance(members[0], cst.FunctionDef) or members[0].name.value != "__init__":
        refuse(cls, lead + "only a class whose one method is `__init__` is converted (other methods and class "
                           "attributes would have to be proven against the graph)")
    init = members[0]
    ps = init.params
    if (init.decorators or init.asynchronous or ps.star_arg is not cst.MaybeSentinel.DEFAULT or ps.kwonly_params
            or ps.star_kwarg or ps.posonly_params or not ps.params or not isinstance(init.body, cst.IndentedBlock)):
        refuse(init, lead + "`__init__` with *args/**kwargs, keyword-only parameters or decorators is not converted")
    self_name = ps.params[0].name.value
    params = [p.name.value for p in ps.params[1:]]
    for p in ps.params[1:]:
        if p.default is not None and not _literal(p.default):
            refuse(init, lead + f"the default of `{p.name.value}` is not a literal")
    stmts = list(init.body.body)
    for n in walk(init.body):
        if isinstance(n, (cst.Return, cst.Global, cst.Nonlocal, cst.Yield, cst.Await, cst.FunctionDef,
                          cst.ClassDef, cst.Lambda, cst.Import, cst.ImportFrom, cst.Del)):
            refuse(n, lead + f"`{code(n).strip().splitlines()[0]}` in `__init__` is not converted")
    attrs = set()
    for n in walk(init.body):
        attr = _self_attr(n, self_name)
        if attr is not None:
            attrs.add(attr)
    self_uses = sum(1 for n in walk(init.body) if isinstance(n, cst.Name) and n.value == self_name)
    self_attrs = sum(1 for n in walk(init.body) if _self_attr(n, self_name) is not None)
    if self_uses != self_attrs:
        refuse(init, lead + f"`{self_name}` is used other than as `{self_name}.<attribute>` in `__init__`")

    # the one instantiation: `model = Model(args)` at module level, after the class
    inst_i = None
    for j, st in enumerate(body):
        if j != c and cname in names_in(st):
            small = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
            if (inst_i is None and j > c and isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Name) and small.value.func.value == cname):
                inst_i = j
            else:
                refuse(st, lead + f"`{cname}` is used other than once, at module level, as `model = {cname}(...)`")
    if inst_i is None:
        refuse(cls, lead + f"`{cname}` is never instantiated at module level")
    inst_stmt = body[inst_i]
    call = inst_stmt.body[0].value
    instance = inst_stmt.body[0].targets[0].target.value

    # arguments → parameter bindings
    values: dict = {}
    for k, a in enumerate(call.args):
        if a.star or not _simple(a.value):
            refuse(inst_stmt, lead + f"argument `{code(a.value)}` is not a name or a literal")
        p = params[k] if a.keyword is None and k < len(params) else (a.keyword.value if a.keyword else None)
        if p not in params or p in values:
            refuse(inst_stmt, lead + f"the arguments of `{cname}(...)` do not match `__init__`")
        values[p] = a.value
    for p in ps.params[1:]:
        if p.name.value not in values:
            if p.default is None:
                refuse(inst_stmt, lead + f"`{p.name.value}` is not given")
            values[p.name.value] = p.default

    # the instance: only `model.<attribute>` at module level, after the instantiation
    after = body[inst_i + 1:]
    for st in after:
        if instance not in names_in(st):
            continue
        if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            refuse(st, lead + f"`{instance}` is used inside `{st.name.value}`: not converted")
        for n in walk(st):
            if isinstance(n, (cst.AssignTarget, cst.For, cst.AsName)) and instance in target_names(
                    n.name if isinstance(n, cst.AsName) else n.target):
                refuse(st, lead + f"`{instance}` is rebound")
        ok = set()  # the `model` of each `model.<attribute of __init__>`
        for n in walk(st):
            attr = _self_attr(n, instance)
            if attr is not None and attr not in attrs:
                refuse(n, lead + f"`{code(n)}` is not an attribute of `{cname}.__init__`")
            if attr is not None:
                ok.add(id(n.value))
        for n in walk(st):
            if isinstance(n, cst.Name) and n.value == instance and id(n) not in ok:
                refuse(n, lead + f"`{instance}` is used other than as `{instance}.<attribute of __init__>`")
    for st in body[:inst_i]:
        if instance in names_in(st) and st is not cls:
            refuse(st, lead + f"`{instance}` is used before `{instance} = {cname}(...)`")

    # names: parameters, attributes and the rest of the module must not clash; locals are renamed
    outside = set()
    for j, st in enumerate(body):
        if j not in (c, inst_i):
            outside |= names_in(st)
    outside |= names_in(call)
    clash = (set(params) & attrs) | ((set(params) | attrs) & (outside - {instance}))
    if clash:
        refuse(cls, lead + f"{', '.join(sorted(clash))}: a parameter or attribute named like another name of the "
                           "module is not converted")
    local_names = set()
    for n in walk(init.body):
        if isinstance(n, cst.AssignTarget) or isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For)):
            local_names |= set(target_names(n.target))
        elif isinstance(n, cst.AsName):
            local_names |= set(target_names(n.name))
    if local_names & set(params):
        refuse(init, lead + f"`__init__` rebinds its parameter(s) {sorted(local_names & set(params))}")
    taken = names_in(module) | attrs
    renames = {}
    for local in sorted(local_names):
        if local in (attrs | _loaded(cst.Module(body=[st for j, st in enumerate(body) if j != c]))):
            renames[local] = fresh(local, taken)
            taken.add(renames[local])

    flat_init = [(st.visit(_Flatten(self_name, renames)), st) for st in stmts]
    bindings = [(cst.parse_statement(f"{p} = {code(values[p])}\n"), inst_stmt) for p in params]
    new_body, pairs = [], []
    marker = region = None
    for j, st in enumerate(body):
        if j == c:
            marker = len(new_body)
            pairs.append((cst.SimpleStatementLine([cst.Pass()], leading_lines=cls.leading_lines), cls))
            new_body.append(pairs[-1][0])
        elif j == inst_i:
            start = len(new_body)
            for new, orig in bindings + flat_init:
                pairs.append((new, orig))
                new_body.append(new)
            region = (start, len(new_body))
        else:
            new = st.visit(_Flatten(instance, {})) if j > inst_i else st
            pairs.append((new, st))
            new_body.append(new)
    if bindings:  # the call's blank lines go to the first binding
        first = new_body[region[0]].with_changes(leading_lines=inst_stmt.leading_lines)
        new_body[region[0]] = first
        pairs[region[0]] = (first, inst_stmt)
    flat = module.with_changes(body=new_body)
    return Flat(flat, cls, init, instance, self_name, inst_stmt, params, marker, region,
                statement_line_map(names, pairs, flat), names.line(cls), attrs)


class _SelfNames(NameTransformer):
    """Names of the class's state → `<owner>.<name>` (attribute members and keywords kept)."""

    def __init__(self, owner: str, state: set, calls: set = frozenset()):
        self.owner, self.state, self.calls = owner, state, calls
        super().__init__()

    def visit_Param(self, node):
        self._skip.add(id(node.name))

    def leave_Name(self, original, updated):
        if self.skipped(original) or original.value not in self.state | self.calls:
            return updated
        return cst.Attribute(value=cst.Name(self.owner), attr=cst.Name(original.value))


def refold(flat: Flat, ranges: list, out: list, step_functions: set) -> list:
    """The converted flat body (`out`, with `ranges[i]` = the out slice of flat statement i) →
    the class form: state made in `__init__`, steps reading it as methods, calls on the instance."""
    r0, r1 = flat.region
    lo, hi = ranges[r0][0], ranges[r1 - 1][1]
    made = out[lo:hi]
    n_bind = len(flat.params)
    if n_bind:
        made = made[n_bind:]  # the parameter bindings are the parameters again
    state = set()
    for st in made:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        if isinstance(t.target, cst.Name):
                            state.add(t.target.value)
    rest = out[hi:]
    methods, kept = [], []
    for st in rest:
        if isinstance(st, cst.FunctionDef) and st.name.value in step_functions and names_in(st) & (state | set(flat.params)):
            methods.append(st)
        else:
            kept.append(st)
    method_names = {m.name.value for m in methods}
    stored = sorted(p for p in flat.params if any(p in names_in(m) for m in methods))
    me = flat.self_name
    init_body = [cst.parse_statement(f"{me}.{p} = {p}\n") for p in stored]
    init_body += [st.visit(_SelfNames(me, state)) for st in made]
    if not init_body:
        init_body = [cst.SimpleStatementLine([cst.Pass()])]
    init = flat.init.with_changes(body=flat.init.body.with_changes(body=init_body))
    new_methods = []
    for m in methods:
        params = m.params.with_changes(params=[cst.Param(cst.Name("self")), *m.params.params])
        new = m.with_changes(params=params, leading_lines=[cst.EmptyLine(indent=False)])
        new_methods.append(new.visit(_SelfNames("self", state | (set(stored) - names_in(m.params)))))
    members = list(flat.cls.body.body)
    at = members.index(next(s for s in members if isinstance(s, cst.FunctionDef)))
    members[at:at + 1] = [init, *new_methods]
    cls = flat.cls.with_changes(body=flat.cls.body.with_changes(body=members))
    marker = ranges[flat.marker][0]
    inst = flat.inst_stmt
    tail = [st.visit(_SelfNames(flat.instance, state, method_names)) for st in kept]
    if tail and methods and not any(isinstance(s, cst.FunctionDef) for s in kept):
        comments = [line for line in tail[0].leading_lines if line.comment is not None]
        tail[0] = tail[0].with_changes(leading_lines=[cst.EmptyLine(), *comments])
    head = out[:marker] + [cls.with_changes(leading_lines=out[marker].leading_lines)] + out[marker + 1:lo]
    return head + [inst] + tail

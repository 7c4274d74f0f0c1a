"""Lists the file fills statement by statement, followed item by item: which of them can be.

    params = []
    params += [W_1, b_1]          # an unrolled loop's passes, or written so
    params.append(W)
    ... sess.run(params[0])

The translator reads `params[0]` as the variable it is only if the list it reads is the list those
statements made: no other name, object or function can hold the same list and change it, or
read it while it is still growing. `followed(module)` answers that for every name of the file at
once: a name bound once, at the top level of the module, to a list display, whose every other
use is at the top level too and is one of

- `name += <list or tuple display>`, or a statement `name.append(x)` / `name.extend(<display>)`, or
  `name.reverse()`;
- a read that cannot keep or change the object: `name[<index>]`, `len(name)`, iterating it
  (`for v in name`, a comprehension), or an argument of TensorFlow's calls, of a Session's or
  optimizer's methods (`sess.run`, `minimize`, ...) or of Python builtins that only read it.

Anything else (bound to or stored in another name, passed to a function of the script, read in a
function, returned, `del`, another mutator) leaves the name unfollowed: the translator keeps
today's reading (a host list). A helper read in place at its calls is the same question about its
body (`followed` of the body's statements): its local lists, under the fresh names they get there.
"""
from __future__ import annotations

import libcst as cst

from codemods.children import children
from codemods.tf2.syntax import walk_nodes

GROWERS = frozenset({"append", "extend"})
REORDERS = frozenset({"reverse"})  # a statement `name.reverse()`: the same items, the other way round
# Python builtins that read a list given to them and neither keep nor change it.
READING_BUILTINS = frozenset({"len", "print", "list", "tuple", "sum", "enumerate", "zip", "sorted", "reversed", "str",
                              "repr", "any", "all", "min", "max", "set", "isinstance"})
# Methods of TensorFlow objects (a Session, an optimizer) that read a list of graph values.
TF_METHODS = frozenset({"run", "eval", "minimize", "compute_gradients", "apply_gradients", "get_updates"})


def followed(module: cst.Module, is_tf) -> frozenset:
    """The names of the lists `module` fills statement by statement that are followed (module doc)."""
    candidates = {}
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign):
            small = st.body[0]
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and isinstance(small.value, cst.List):
                name = small.targets[0].target.value
                candidates[name] = None if name in candidates else small.targets[0].target
    candidates = {n: t for n, t in candidates.items() if t is not None}
    if not candidates:
        return frozenset()
    parents, top = _parents(module)
    out = set(candidates)
    for node in walk_nodes(module):
        if isinstance(node, cst.Name) and node.value in out and node is not candidates[node.value] \
                and not _allowed(node, parents, top, is_tf):
            out.discard(node.value)
    return frozenset(out)


# calls that make a new list (or dict, or set) each time: TF 1.x's collections are lists too
CONTAINER_CALLS = frozenset({"list", "dict", "set"})
COLLECTIONS = frozenset({"trainable_variables", "global_variables", "local_variables", "model_variables",
                         "all_variables", "get_collection"})
CONTAINERS = (cst.List, cst.ListComp, cst.Dict, cst.DictComp, cst.Set, cst.SetComp)


def shared(module: cst.Module, is_tf, mutators: frozenset) -> frozenset:
    """Names the module binds at its top level to a list, dict or set that code other than the module's
    own statements on that name may change: the name is used where another name, object or function can
    take the object (bound to another name, stored, passed to a function of the script), or a function,
    lambda or class changes it. Its own top-level statements (`d.pop()`, `d[k] = v`, `del d[k]`, growth)
    are not such uses: `reaching` sees them; nor are reads anywhere (`weights['h1']` in a function).
    `mutators`: the methods that change a container."""
    names = set()
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Assign) and _container(small.value):
                    names |= {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
    if not names:
        return frozenset()
    parents, inner = _parents(module)
    out = set()
    for node in parents:  # every node but the module
        if isinstance(node, cst.Global):  # bound again inside a function (`global d; d = ...`): not followed here
            out |= {n.name.value for n in node.names} & names
        elif isinstance(node, cst.Name) and node.value in names and node.value not in out \
                and not _own_use(node, parents, inner, is_tf, mutators):
            out.add(node.value)
    return frozenset(out)


def _container(value) -> bool:
    if isinstance(value, CONTAINERS):
        return True
    func = value.func if isinstance(value, cst.Call) else None
    return isinstance(func, cst.Name) and func.value in CONTAINER_CALLS or \
        isinstance(func, cst.Attribute) and func.attr.value in COLLECTIONS


def _own_use(name: cst.Name, parents, inner: set, is_tf, mutators: frozenset) -> bool:
    """A use of `name` no other name, object or function can take the object through: a read (anywhere),
    or a change by a statement of the module's top level (`reaching` sees those)."""
    parent = parents.get(name)
    top = name not in inner
    if isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.AugAssign) and parent.target is name:
        return top  # bound again (a new object), or `d += [...]` (reaching: a definition)
    if isinstance(parent, cst.Attribute) and parent.value is name and parent.attr.value in mutators:
        call = parents.get(parent)
        return top and isinstance(call, cst.Call) and call.func is parent and isinstance(parents.get(call), cst.Expr) \
            and not any(isinstance(n, cst.Name) and n.value == name.value for a in call.args for n in walk_nodes(a))
    if isinstance(parent, cst.Subscript) and parent.value is name and _stored(parent, parents):
        return top  # changed by index at the top level (reaching: a definition)
    if isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.UnaryOperation,
                           cst.FormattedStringExpression)):
        return True  # an operand: the operation makes a new object (`x_train * W`)
    return _allowed(name, parents, frozenset(), is_tf)


def _parents(module: cst.Module) -> tuple:
    """(node → the node holding it, the nodes of a function, class or lambda of the module: their uses are
    not the module's statements), in one walk (libcst's ParentNodeProvider runs a visitor over the tree)."""
    parents, inner, stack = {}, set(), [(module, False)]
    while stack:
        node, inside = stack.pop()
        inside = inside or isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
        if inside:
            inner.add(node)
        for child in children(node):
            parents[child] = node
            stack.append((child, inside))
    return parents, inner


def _display(node) -> bool:
    return isinstance(node, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement)
                                                               for e in node.elements)


def _allowed(name: cst.Name, parents, inner: set, is_tf) -> bool:
    if name in inner:
        return False
    parent = parents.get(name)
    if isinstance(parent, cst.AugAssign) and parent.target is name:
        return isinstance(parent.operator, cst.AddAssign) and _display(parent.value) \
            and isinstance(parents.get(parent), cst.SimpleStatementLine)
    if isinstance(parent, cst.Attribute) and parent.value is name:
        call = parents.get(parent)
        if parent.attr.value in REORDERS and isinstance(call, cst.Call) and call.func is parent:
            return not call.args and isinstance(parents.get(call), cst.Expr)
        if parent.attr.value not in GROWERS or not (isinstance(call, cst.Call) and call.func is parent):
            return False
        statement = parents.get(call)
        if not isinstance(statement, cst.Expr) or len(call.args) != 1 or call.args[0].keyword is not None:
            return False
        return parent.attr.value == "append" or _display(call.args[0].value)
    if isinstance(parent, cst.Subscript) and parent.value is name:
        return not _stored(parent, parents)
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is name:
        return True
    if isinstance(parent, cst.Arg) and parent.value is name and not parent.star:
        call = parents.get(parent)
        if not isinstance(call, cst.Call):
            return False
        if isinstance(call.func, cst.Name):
            return call.func.value in READING_BUILTINS
        if is_tf(call.func):
            return True
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in TF_METHODS
    return False


def _stored(subscript, parents) -> bool:
    """`name[i] = ...`, `name[i] += ...`, `del name[i]`: the list changed by index."""
    parent = parents.get(subscript)
    return isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)) or \
        isinstance(parent, cst.Element) and isinstance(parents.get(parent), (cst.Tuple, cst.List)) and \
        isinstance(parents.get(parents.get(parent)), cst.AssignTarget)



"""Where an item of a loop over variables or tensors may go, and where it may not.

`elements` refuses the reads TF 2 answers differently (`v.name`, `v in head_vars`). The ways to
reach a variable's name or identity are many (`getattr(v, "name")`, `str(v)`,
`"{0.name}".format(v)`, `sorted(..., key=by_name)`, `{v: g}`, `set(tvars)`, a helper of the
script given `v`), so this module checks the other way round: each use of an item must be one of
the few whose meaning TF 2 keeps, and anything else is refused.

An item (`v` of `for g, v in grads_and_vars`, of a comprehension, of `tvars[i]`) may be
- given to a TensorFlow function or to a method of a TensorFlow object (`tf.clip_by_norm(g, 5.0)`,
  `opt.apply_gradients(...)`), or appended to a list;
- put in a tuple or list, or taken apart (`pair[1]`), or bound to another name (then that name
  is an item too);
- given to `zip`, `enumerate`, `list`, `tuple`, `reversed`, `len`, `isinstance`, `id`;
- used in arithmetic with tensors (`g * 2.0`), compared with `is` / `is not`, tested with
  `isinstance` against anything but a variable or tensor class (TF 2's Keras variables are not
  `tf.Variable`);
- read for an IndexedSlices' `.values` / `.indices` / `.dense_shape`, `len(v.shape)`, or assigned
  (`v.assign(...)`); not `.dtype` (`float32_ref` in TF 1.x, the string 'float32' in TF 2).
Everything else (other attributes, other functions, keys of dicts and members of sets, formats,
comparisons by value, truth tests) is refused with the line of the use. Never imports TensorFlow.
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from codemods.children import children
from codemods.tf2.elements import SHAPE_READ, attribute_reason, comparison_reason
from codemods.tf2.emit import code
from codemods.tf2.syntax import MUTATORS, target_names
from codemods.tf2.reaching import target_nodes

STRUCTURAL = frozenset({"zip", "enumerate", "list", "tuple", "reversed", "len", "isinstance", "id"})
# builtins that call the tensor's own operator (`abs(t)` is `t.__abs__()`, `pow(a, b)` is `a ** b`)
ARITHMETIC = frozenset({"abs", "pow"})
# host functions that may be given variables: structure, counting, and arithmetic (`sum`, `abs`, `pow`)
KEPT_CALLS = STRUCTURAL | ARITHMETIC | {"iter", "next", "range", "sum"}
# those whose result holds what they were given
PASS_THROUGH = frozenset({"zip", "enumerate", "list", "tuple", "reversed", "iter", "next", "sum"})
# host functions that order, hash, name or pick TensorFlow objects (by a key that may read their names)
ORDERING = frozenset({"sorted", "max", "min", "map", "filter", "set", "frozenset", "str", "repr", "getattr",
                      "hasattr", "hash", "format"})
# (not `dtype`: TF 1.x's variables have `float32_ref`, TF 2's Keras variables the string 'float32')
KEPT_ATTRIBUTES = frozenset({"values", "indices", "dense_shape", "assign", "assign_add", "assign_sub"})
STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def item_names(target, iterable, value_of: Callable, holds_tf: Callable, rebound: set) -> set:
    """The names of a loop's `target` bound to TensorFlow objects of `iterable`: all of them over a
    list of variables or tensors; the item of `enumerate(tvars)`, not its index; per argument of
    `zip(...)`."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value not in rebound \
            and isinstance(target, (cst.Tuple, cst.List)) and not any(a.star or a.keyword for a in iterable.args):
        parts = [e.value for e in target.elements]
        if iterable.func.value == "enumerate" and len(parts) == 2 and len(iterable.args) == 1:
            return item_names(parts[1], iterable.args[0].value, value_of, holds_tf, rebound)
        if iterable.func.value == "zip" and len(parts) == len(iterable.args):
            return {n for part, arg in zip(parts, iterable.args)
                    for n in item_names(part, arg.value, value_of, holds_tf, rebound)}
    return set(target_names(target)) if holds_tf(value_of(iterable)) else set()


def loop_iter(loops: list, name: str, bound) -> Optional[cst.BaseExpression]:
    """What `name` ranges over in the comprehensions `loops` (their `CompFor` chains, innermost last): its
    iterable, or the argument of Python's `zip(a, b)` it takes its items from (`for t, m in ...`)."""
    for for_in in reversed(loops):
        while for_in is not None:
            if isinstance(for_in.target, cst.Name) and for_in.target.value == name:
                return for_in.iter
            zipped = zip_targets(for_in, bound)
            if zipped is not None and name in zipped:
                return zipped[name]
            for_in = for_in.inner_for_in
    return None


def zip_targets(for_in: cst.CompFor, bound) -> Optional[dict]:
    """name → the argument of `zip(...)` it ranges over, for `for a, b in zip(xs, ys)` (Python's `zip`: not
    in `bound`, the names the script binds; the target all names, one per argument), else None."""
    target, it = for_in.target, for_in.iter
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(it, cst.Call) and isinstance(it.func, cst.Name)
            and it.func.value == "zip" and "zip" not in bound and len(it.args) == len(target.elements)
            and all(a.keyword is None and a.star == "" for a in it.args)
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)):
        return None
    return {e.value.value: a.value for e, a in zip(target.elements, it.args)}


def misuse(scope: cst.CSTNode, names: set, tf_callable: Callable[[cst.BaseExpression], bool],
           rebound: set, follow: Optional[Callable] = None, local: Optional[set] = None,
           exact_names: bool = False) -> Optional[tuple]:
    """(node, reason) of the first use under `scope` of a name in `names` (items of a loop over
    TensorFlow objects) that is not one TF 2 keeps the meaning of; None if every use is.
    `tf_callable(func)` says whether a call's function is TensorFlow's (or a TensorFlow object's
    method); `rebound` holds the builtin names the script binds to something else; `follow(call,
    arg)` checks an item given to a function of the script in its body: None if every use there is
    kept, else the reason (False: not a function it can follow). In a function's body, `local` holds its
    local names: a list it fills must be one of them (a global one would fill at each trace).
    `exact_names`: the items are variables written under TF 1.x's names, whose `.name` TF 2 keeps."""
    parents, skip = _parents(scope)
    ctx = (parents, tf_callable, rebound, follow, local, exact_names)
    names = set(names)
    while True:  # names bound to an item are items too (`g, v = pair`)
        aliases = set()
        for node in _uses(scope, names, skip):
            found = _context(node, ctx)
            if isinstance(found, str):
                return node, found
            if isinstance(found, set):
                aliases |= found
        if aliases <= names:
            return None
        names |= aliases


def _parents(scope) -> tuple:
    parents, skip, stack = {}, set(), [scope]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            stack.append(child)
        if isinstance(node, cst.Attribute):
            skip.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skip.add(id(node.keyword))
        elif isinstance(node, cst.Param):
            skip.add(id(node.name))
        elif isinstance(node, (cst.CompFor, cst.For)):
            skip |= {id(n) for n in target_nodes(node.target)}
        elif isinstance(node, cst.AssignTarget):
            skip |= {id(n) for n in target_nodes(node.target)}
    return parents, skip


def _uses(scope, names: set, skip: set) -> list:
    out, stack = [], [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value in names and id(node) not in skip:
            out.append(node)
        stack.extend(children(node))
    return out


def _context(node, ctx: tuple):
    """None: a kept use; a set: the use binds these names to the item; a string: why it is refused."""
    parents = ctx[0]
    parent = parents.get(id(node))
    what = code(node).strip()
    if parent is None or isinstance(parent, (cst.Expr, cst.AugAssign, cst.CompFor, cst.For)):
        return None  # the statement itself, arithmetic into a sum, or a loop over its parts
    if isinstance(parent, cst.Arg):
        return _argument(parents[id(parent)], parent, what, ctx)
    if isinstance(parent, (cst.Element, cst.StarredElement)):
        container = parents[id(parent)]
        if isinstance(container, cst.Set):
            return f"`{what}` in a set: TF 1.x hashed variables and tensors by identity, TF 2's cannot be hashed"
        return _context(container, ctx)
    if isinstance(parent, cst.Subscript):
        return _context(parent, ctx)  # `pair[1]`: a part of the item
    if isinstance(parent, cst.Index):
        return f"`{what}` used as a key: TF 1.x hashed variables and tensors by identity, TF 2's cannot be hashed"
    if isinstance(parent, cst.Attribute):
        return _attribute(parent, ctx)
    if isinstance(parent, cst.ComparisonTarget):
        parent = parents[id(parent)]
    if isinstance(parent, cst.Comparison):
        if all(isinstance(t.operator, (cst.Is, cst.IsNot)) for t in parent.comparisons):
            return None
        return comparison_reason(code(parent).strip())
    if isinstance(parent, cst.BinaryOperation):
        other = parent.right if node is parent.left else parent.left
        if isinstance(other, STRINGS):
            return f"`{code(parent).strip()}` formats a variable or tensor: TF 2's prints another name"
        return None
    if isinstance(parent, cst.UnaryOperation) and not isinstance(parent.operator, cst.Not):
        return None
    if isinstance(parent, (cst.ListComp, cst.GeneratorExp)) and node is parent.elt:
        return _context(parent, ctx)
    if isinstance(parent, cst.DictComp) and node is parent.value or isinstance(parent, cst.DictElement) \
            and node is parent.value:
        return _context(parent if isinstance(parent, cst.DictComp) else parents[id(parent)], ctx)
    if isinstance(parent, (cst.DictComp, cst.DictElement, cst.SetComp)):
        return f"`{what}` used as a key: TF 1.x hashed variables and tensors by identity, TF 2's cannot be hashed"
    if isinstance(parent, cst.IfExp) and node is not parent.test:
        return _context(parent, ctx)
    if isinstance(parent, cst.Assign) and node is parent.value:
        return {n for t in parent.targets for n in target_names(t.target)}
    return (f"`{code(parent).strip()[:60]}` uses a variable or tensor of a loop in a way TF 2 may answer "
            "otherwise (its truth, a return, a format): not converted")


def _argument(call: cst.Call, arg: cst.Arg, what: str, ctx: tuple):
    _, tf_callable, rebound, follow, local, _ = ctx
    func = call.func
    if tf_callable(func):
        return None
    if isinstance(func, cst.Name) and func.value in STRUCTURAL and func.value not in rebound:
        if func.value == "isinstance" and len(call.args) > 1 and any(
                kind in code(call.args[1].value) for kind in ("Variable", "Tensor")):
            return f"`{code(call).strip()}`: TF 2's Keras variables are not `tf.Variable` (nor tensors)"
        if func.value in ("len", "isinstance", "id"):
            return None
        return _context(call, ctx)  # its items are the item's: where do they go
    if isinstance(func, cst.Name) and func.value in ARITHMETIC and func.value not in rebound:
        return None  # the item's value through its own operator: a new tensor, as `-v` is
    if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS:
        receiver = func.value.value if isinstance(func.value, cst.Name) else None
        if local is not None and receiver not in local:
            return (f"`{code(call).strip()[:60]}` fills a list of the script from a function: in TF 2 it would "
                    "fill when a step is traced, not when the graph is built")
        return None  # put into a list the loop fills
    verdict = follow(call, arg) if follow is not None else False
    if verdict is not False:
        return verdict  # a function of the script, read through
    return (f"`{code(call).strip()[:60]}` is given a variable or tensor of a loop: tf1clip cannot follow what it "
            f"reads of it (TF 2's variables have other names, and no identity hash)")


def _attribute(attribute: cst.Attribute, ctx: tuple):
    parents = ctx[0]
    attr = attribute.attr.value
    if attr in KEPT_ATTRIBUTES or attr == "name" and ctx[5]:
        return None
    if attr in ("shape", SHAPE_READ):
        value = attribute  # the TensorShape: `v.shape`, or `v.get_shape()` (read as `.shape` in TF 2)
        if attr == SHAPE_READ:
            value = parents.get(id(attribute))
            if not (isinstance(value, cst.Call) and value.func is attribute and not value.args):
                return attribute_reason(code(attribute).strip())
        if _plain_shape_use(value, parents):
            return None
        return (f"`{code(value).strip()}` of an item of a list of variables or tensors, used other than by len, "
                "ndims, as_list() or num_elements() (where TF 1.x's TensorShape, which held Dimension objects, and "
                "TF 2's answer alike)")
    return attribute_reason(code(attribute).strip())


def _plain_shape_use(shape: cst.CSTNode, parents: dict) -> bool:
    """A TensorShape used as TF 1.x and TF 2 answer alike: `len(s)`, `s.ndims`, `s.as_list()`,
    `s.num_elements()` (plain ints and lists; an index would be TF 1.x's Dimension)."""
    up = parents.get(id(shape))
    if isinstance(up, cst.Arg):
        call = parents.get(id(up))
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "len"
    if isinstance(up, cst.Attribute) and up.value is shape:
        if up.attr.value == "ndims":
            return True
        call = parents.get(id(up))
        return up.attr.value in ("as_list", "num_elements") and isinstance(call, cst.Call) and call.func is up
    return False

"""What the Evaluator refuses of the items of loops over variables and tensors.

A mixin of `expressions.Evaluator`: as the Evaluator reads a loop or comprehension (or a lambda,
or a call), these methods refuse the reads TF 2 answers otherwise (`elements`: `v.name`,
`v in head_vars`) and the uses of an item TF 2 may not keep (`item_uses`: `str(v)`, `{v: g}`,
`sorted(tvars, key=...)`, a helper of the script that reads `v.name`), at the line of the use.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.children import children
from codemods.tf2 import elements, item_uses, list_growth
from codemods.tf2.syntax import changed_names, function_locals, name_counts, target_names
from codemods.tf2.model import (AV, Class, Element, Func, Input, Mapping, Other, OtherKind, Seq, SeqKind, StateKind,
                                StateRef, TFSymbol, Tensor, exact_names, holds_tf)


class ItemChecks:
    """Refusals of loop items over TensorFlow objects, for `expressions.Evaluator` (which holds `items`,
    `env`, `tr` and the abstract values of the nodes it has read)."""

    def visit_For(self, node: cst.For) -> Optional[bool]:  # a loop read as one value statement
        self.items.push({n: node.iter for n in target_names(node.target)})
        return True

    def leave_For(self, original, updated):
        self.close_loop(original, [(original.target, original.iter)])
        return updated

    def close_loop(self, original, loops: list) -> set:
        """Leaving a loop (its `(target, iterable)` pairs): refuse a read of an item over TensorFlow objects
        that TF 2 answers otherwise (`elements`), or any use of one TF 2 may not keep (`item_uses`).
        Returns the names of its items."""
        found = self.items.pop(self.value_of_original)
        if found is not None:
            self.tr.refuse(*found)
        rebound = set(self.env)
        names = set()
        for target, iterable in loops:
            names |= item_uses.item_names(target, iterable, self.value_of_original, holds_tf, rebound)
        exact = all(exact_names(self.value_of_original(iterable)) for _, iterable in loops)
        misused = item_uses.misuse(original, names, self.tf_callable, rebound, self.follow,
                                   exact_names=exact) if names else None
        if misused is not None:
            self.tr.refuse(misused[1], self.tr.line_of(misused[0]))
        return names

    def _given(self, node: cst.CSTNode):
        """The nodes whose values `node` hands on as they are: itself, and the parts of the tuples, lists, dicts,
        operations and pass-through calls (`list(...)`, `zip(...)`) it is made of; not what a call of anything
        else, a comprehension, a lambda or an attribute makes of its own parts (their values say what they
        give)."""
        yield node
        passing = isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and \
            node.func.value in item_uses.PASS_THROUGH and node.func.value not in self.env
        if isinstance(node, cst.Call) and not passing or isinstance(
                node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp, cst.Lambda, cst.Attribute)):
            return  # (an attribute hands on its member, whose value says what it is: `v.name` a string)
        for child in children(node):
            yield from self._given(child)

    def tf_callable(self, func: cst.BaseExpression) -> bool:
        """`func` is TensorFlow's, or a method of a TensorFlow object or state (the assignment of a
        comprehension's item over variables, `t.assign(m)`, is its variable's: `assign_ops` checks it)."""
        if id(func) in self._item_assign_funcs:
            return True
        av = self._original.get(id(func))
        if isinstance(av, (TFSymbol, StateRef)) or isinstance(av, Other) and av.kind == OtherKind.MEMBER and \
                isinstance(av.info.get("of"), (StateRef, Tensor, Input, Other)):
            return True
        return self.tr.tf_callable(func)

    def follow(self, call: cst.Call, arg: cst.Arg, seen: frozenset = frozenset()):
        """An item given to a function of the script that uses TensorFlow: its uses in the function's body
        (None: all kept; a reason; False: not such a function)."""
        av = self._original.get(id(call.func))
        if av is None and isinstance(call.func, cst.Name):
            av = self.env.get(call.func.value)
        if not isinstance(av, Func) or av.node in seen or not self.tr.mentions_tf(av.node):
            return False
        params = [p.name.value for p in av.node.params.params]
        k = next(i for i, a in enumerate(call.args) if a is arg)
        param = arg.keyword.value if arg.keyword is not None else params[k] if k < len(params) and not arg.star else None
        if param is None:
            return False
        found = item_uses.misuse(av.node.body, {param}, self.tf_callable, set(self.env),
                                 lambda c, a: self.follow(c, a, seen | {av.node}), function_locals(av.node))
        return None if found is None else found[1]

    def item_shape(self, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
        """`v.get_shape()` of a loop's item → `v.shape` (a Keras 3 variable has no get_shape; `.shape` is the same
        TensorShape for it and a `tf.Variable`): the item of a `for` loop over TensorFlow objects (an `Element`),
        or of a comprehension, refused when it closes unless it ranges over TensorFlow objects. None: not such a
        call."""
        f = original.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == elements.SHAPE_READ and not original.args
                and isinstance(f.value, cst.Name)):
            return None
        name = f.value.value
        loop_item = isinstance(self.env.get(name), Element) and not any(name in b for b in self._bound)
        reason = elements.shape_reason(self.tr.code(original))
        if not loop_item and not self.items.read(name, reason, self.tr.line_of(original), elements.SHAPE_READ):
            return None
        return cst.Attribute(value=updated.func.value, attr=cst.Name("shape"))

    def item_read(self, node: cst.CSTNode, reason: str, attr: str = "") -> None:
        """`node` read (for `attr`) in a way TF 2 answers differently for a loop's item over TensorFlow objects."""
        line = self.tr.line_of(node)
        av = self.value_of_original(node)
        exact = attr == "name" and exact_names(av)
        if isinstance(av, Element) and not exact or isinstance(av, StateRef) and av.state.kind == StateKind.LAYER:
            self.tr.refuse(reason, line)  # `tvars[0]` of layers: one of a layer's variables
        if isinstance(node, cst.Name):
            self.items.read(node.value, reason, line, attr)

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison):
        left = original.left
        for target in original.comparisons:
            right = target.comparator
            if isinstance(target.operator, elements.IDENTITY_TESTS) and not is_none(left) and not is_none(right):
                reason = elements.comparison_reason(self.tr.code(original))
                for operand in (left, right):
                    self.item_read(operand, reason)
                    if holds_tf(self.value_of_original(operand)):
                        self.tr.refuse(reason, self.tr.line_of(original))
            left = right
        return updated

    def check_item_calls(self, original: cst.Call, updated: cst.Call, func: AV) -> None:
        """Variables given to a function that reads them as TF 1.x gave them (`is_head(v)`, `sorted(tvars,
        key=lambda v: v.name)`), or found by identity (`tvars.index(v)`): refused (`elements`)."""
        line = self.tr.line_of(original)
        if isinstance(original.func, cst.Attribute) and original.func.attr.value in elements.IDENTITY_METHODS:
            receiver = self.value_of_original(original.func.value)
            if holds_tf(receiver) and not isinstance(receiver, TFSymbol):
                self.tr.refuse(elements.comparison_reason(self.tr.code(original)), line)
        if isinstance(func, Func):
            changed = sorted(changed_names(func.node.body) - function_locals(func.node)
                             - self.tr.definitions().module_names())
            looped = any(name_counts(a.value).keys() & set().union(*self._bound) for a in original.args) \
                if self._bound else False
            if changed and (looped or any(holds_tf(self.value_of_original(a.value)) for a in original.args)):
                self.tr.refuse(f"`{self.tr.code(original)[:60]}` changes `{changed[0]}`, a global of the script, while "
                               "the graph is built: in TF 2 it would change it when a step is traced", line)
            reads = elements.param_reads(func.node)
            names = [p.name.value for p in func.node.params.params]
            for k, arg in enumerate(original.args):
                param = arg.keyword.value if arg.keyword is not None else names[k] if k < len(names) else None
                if param in reads:  # a variable of the program is read by `constructs` in the body
                    self.item_read(arg.value, reads[param])
        host = not isinstance(func, (Func, Class)) or not self.tr.mentions_tf(func.node)  # read as plain Python
        grows = isinstance(original.func, cst.Attribute) and isinstance(original.func.value, cst.Name) and \
            original.func.attr.value in list_growth.GROWERS and original.func.value.value in self.tr.followed_lists()
        if host and not grows and not isinstance(func, (TFSymbol, StateRef)) and not self.tf_callable(original.func) \
                and not (isinstance(original.func, cst.Name) and original.func.value in item_uses.KEPT_CALLS):
            ordering = isinstance(original.func, cst.Name) and original.func.value in item_uses.ORDERING \
                and original.func.value not in self.env
            for arg in original.args:
                if ordering and holds_tf(self.value_of_original(arg.value)) or \
                        any(_objects(self.value_of_original(n)) for n in self._given(arg.value)):
                    self.tr.refuse(f"`{self.tr.code(original)[:60]}` is given variables: tf1clip cannot follow what it "
                                   "reads of them (TF 2's variables have other names, and no identity hash)", line)
        given = [self.value_of(a.value) for a in updated.args]
        for arg, av in zip(updated.args, given):
            found = self._fn_reads.get(id(arg.value))
            if found is None and isinstance(av, Func):
                reads = elements.param_reads(av.node)
                found = (next(iter(reads.values())), line) if reads else None
            if found is not None and any(holds_tf(other) for other in given if other is not av):
                self.tr.refuse(*found)


def _objects(av: AV) -> bool:
    """`av` is or holds variables (a layer stands for its own in a list of variables) or loop items over
    them: TensorFlow objects whose names and identity TF 2 gives otherwise."""
    if isinstance(av, (Seq, Mapping)):
        return any(_objects(i) for i in av.items) or getattr(av, "kind", None) == SeqKind.VARIABLES
    return isinstance(av, Element) or isinstance(av, StateRef) and av.state.kind in (StateKind.VARIABLE,
                                                                                    StateKind.LAYER)


def is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"

"""One expression of the script: what it denotes (an abstract value) and its TF 2 form.

`Evaluator` walks an expression bottom-up like Python would evaluate it while TF 1.x built
its graph. Every name gets the abstract value it is bound to (a placeholder, a value, a piece
of state, plain Python); every TensorFlow call is handed to the construct that knows it
(`constructs.CALLS`: variables, layers, optimizers, data, summaries, ...) or, for a plain op,
to `api_changes.to_tf2` (TF 2's name and arguments for the same meaning). The rewritten node comes
back with its abstract value; calls that create state put that state in the program (through
the `Translator`) and leave a reference in the expression.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.children import children
from codemods.tf2 import shapes as shp
from codemods.tf2 import assign_ops, constructs, elements, flags, item_uses, rnn_cells, session, static_shapes
from codemods.tf2.call_site import CallSite
from codemods.tf2.model import (AV, HOST, Class, Element, Func, Input, Instance, Mapping, Other, OtherKind, Seq,
                                SeqKind, StateKind, StateRef, TFSymbol, Tensor, holds_tf)
from codemods.tf2.item_checks import ItemChecks
from codemods.tf2.names import canonical, short
from codemods.tf2.syntax import name_counts, name_nodes, target_names
from codemods.tf2.api_changes import NoTF2Mapping, reference_to_tf2, to_tf2

if TYPE_CHECKING:
    from codemods.tf2.program import Program

# Builtins that keep graph values in a Python structure (their result is a graph value too).
STRUCTURAL = frozenset({"zip", "list", "tuple", "enumerate", "reversed", "sorted", "sum", "map", "filter", "dict",
                        "max", "min", "iter", "next", "range"})
STATIC = frozenset({"len", "isinstance", "print_shape", "type", "id", "hasattr", "getattr", "callable"})


class Evaluator(ItemChecks, cst.CSTTransformer):
    """Evaluates and rewrites one expression (or the expressions of one statement)."""

    def __init__(self, tr: "Program", env: dict, target: Optional[str] = None):
        super().__init__()
        self.tr = tr
        self.env = env
        self.target = target            # the name the whole expression is bound to (`w = tf.Variable(...)`)
        self.target_node = None         # the whole assignment target, when the expression is assigned
        self.gradient_list = False      # the expression is a tf.gradients(...) list
        self.zip_idiom = None           # (gradients name, loss, variables) of `g, v = zip(*opt.compute_gradients(...))`
        self.top: Optional[cst.CSTNode] = None
        self._av: dict = {}
        self._alive: list = []
        self._skip: set = set()         # attribute members, keywords, params: not names of the scope
        self._inner: set = set()        # inner parts of attribute chains
        self._funcs: set = set()        # nodes that are the func of a call
        self._bound: list = []          # names bound by enclosing comprehensions/lambdas
        self._loops: list = []          # the CompFor chains of the enclosing comprehensions
        self.items = elements.Items()   # what the items of the enclosing loops have read of them
        self._fn_reads: dict = {}       # id(lambda) -> (reason, line): it reads its parameter as TF 1.x gave it
        self._runs: set = set()         # session runs inside this expression
        self._item_assigns: set = set()  # ids of assignments of a comprehension's item (assign_ops)
        self._item_assign_funcs: set = set()  # ids of their `p.assign`: TF 2's method of the item's variable
        self._original: dict = {}       # id(original node) -> abstract value
        self.uses: set = set()          # graph names read
        self._static: dict = {}         # name -> its reads for a static dimension only
        self._top_counts = None         # name -> its reads in the whole expression (when a static read needs it)
        self._static_ids: set = set()   # ids of the names read for a static dimension only
        self._dimensions: set = set()   # ids of the numbers written for TF 1.x's static dimensions
        self.grads: list = []           # losses this expression differentiates
        self.gradient_calls = 0
        self.watch_inputs = False       # a gradient with respect to a value (a placeholder, a tensor), not a variable
        self.train = None               # a train op built by this expression (training.TrainInfo)
        self.sparse = False
        self._deferred: set = set()     # ids of arguments a call's converter reads itself (constructs.DEFERRED)

    # -- results ------------------------------------------------------------------------------
    def evaluate(self, node: cst.BaseExpression) -> tuple:
        """(abstract value, TF 2 node) of `node`."""
        self.top, self._top_counts = node, None
        new = node.visit(self)
        if self.tr.dropped:  # a name standing for a static shape, read here other than as a dimension known
            refused = static_shapes.dropped_reads(self.tr, node, self._static_ids)
            if refused is not None:
                self.tr.refuse(refused)
        return self.value_of(new), new

    def adopt(self, node: cst.BaseExpression, av: AV) -> cst.BaseExpression:
        """`node`, read by another reader as `av`, known here as that value (a converter's own reading of an
        argument it defers); `node` itself."""
        return self._set(node, av)

    def value_of(self, node: Optional[cst.CSTNode]) -> AV:
        if node is None:
            return HOST
        return self._av.get(id(node), HOST)

    def _set(self, node: cst.CSTNode, av: AV) -> cst.CSTNode:
        self._av[id(node)] = av
        self._alive.append(node)
        return node

    # -- contexts that are not loads ------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
        self._skip.add(id(node.attr))
        self._inner.add(id(node.value))
        return True

    def visit_Arg(self, node: cst.Arg) -> Optional[bool]:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))
        return True

    def visit_Call(self, node: cst.Call) -> Optional[bool]:
        if session.is_run(self.tr, node):  # its fetches and feeds are read by `session`, at this call
            self._runs.add(id(node))
            return False
        self._funcs.add(id(node.func))
        deferred = constructs.DEFERRED.get(self.tr.names.qualified(node.func) or "")
        if deferred:  # arguments its converter reads itself (optimize_loss's learning_rate_decay_fn)
            self._deferred.update(id(a.value) for a in node.args
                                  if a.keyword is not None and a.keyword.value in deferred)
        return True

    def _comp_targets(self, for_in) -> set:
        out = set()
        while for_in is not None:
            out |= set(target_names(for_in.target))
            for_in = for_in.inner_for_in
        return out

    def visit_ListComp(self, node) -> Optional[bool]:
        self._bound.append(self._comp_targets(node.for_in))
        self._loops.append(node.for_in)
        self.items.push(elements.comprehension_bindings(node.for_in))
        return True

    visit_GeneratorExp = visit_SetComp = visit_DictComp = visit_ListComp

    def loop_iter(self, name: str):
        """What `name` ranges over in an enclosing comprehension (innermost first), else None."""
        return item_uses.loop_iter(self._loops, name, self.env)


    def visit_Lambda(self, node: cst.Lambda) -> Optional[bool]:
        params = {p.name.value for p in node.params.params}
        for p in node.params.params:
            self._skip.add(id(p.name))
        self._bound.append(params)
        self.items.push(dict.fromkeys(params))
        return id(node) not in self._deferred  # a deferred one is read by its call's converter

    def visit_Param(self, node: cst.Param) -> Optional[bool]:
        self._skip.add(id(node.name))
        return True

    def _comprehension(self, original, updated):
        self._bound.pop()
        self._loops.pop()
        loops, for_in = [], original.for_in
        while for_in is not None:
            loops.append((for_in.target, for_in.iter))
            for_in = for_in.inner_for_in
        items = self.close_loop(original, loops)
        op = assign_ops.comprehension_op(self, original, updated, self._item_assigns)
        if op is not None:
            return self._set(updated, op)
        made = rnn_cells.comprehension(self, updated, original) if isinstance(updated, cst.ListComp) else None
        if made is not None:
            return self._set(updated, made)
        if self._any_graph(updated):
            pairs = any(getattr(self.value_of_original(it), "pairs", False) for _, it in loops)
            return self._set(updated, Tensor(single=False, pairs=pairs))
        elt = original.value if isinstance(original, cst.DictComp) else original.elt
        if _holds_items(elt, items):  # `[v for v in tvars if ...]`: the items themselves, still variables
            return self._set(updated, Element(self.value_of_original(loops[0][1])))
        return self._set(updated, HOST)

    leave_ListComp = leave_GeneratorExp = leave_SetComp = leave_DictComp = _comprehension

    def leave_Lambda(self, original, updated):
        self._bound.pop()
        reads = self.items.pop_all()
        if reads:
            self._fn_reads[id(updated)] = reads[0][1:]
        return self._set(updated, HOST)

    # -- names and attributes --------------------------------------------------------------------
    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self._skip:
            return updated
        name = original.value
        if any(name in b for b in self._bound):
            return self._set(updated, HOST)
        av = self.env.get(name)
        if av is None:
            q = self.tr.names.qualified(original)
            av = TFSymbol(q) if q is not None and self.tr.names.is_tf(original) else HOST
        if av.graph or isinstance(av, StateRef):
            self.uses.add(name)
        if static_shapes.is_dropped(av, name) and av.kind == OtherKind.DIMENSION:
            self.tr.refuse(self.tr.dropped[name])  # a dimension tf1clip does not know, read
        if isinstance(av, StateRef) and av.state.kind == StateKind.SCHEDULE:
            return self._set(cst.Call(func=av.state.expr(), args=[cst.Arg(av.state.info["step"])]), av)
        if isinstance(av, StateRef) and av.state.ref is not None and av.state.name == name:
            return self._set(av.state.ref, av)
        if isinstance(av, TFSymbol):
            return self._set(self._reference(original, updated, av), av)
        return self._set(updated, av)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        base = self.value_of(updated.value)
        attr = original.attr.value
        if attr == "value" and id(updated.value) in self._dimensions:  # TF 1.x's `Dimension.value`: the number
            return self._set(updated.value, HOST)
        if attr in elements.TF1_ONLY:
            self.item_read(original.value, elements.attribute_reason(self.tr.code(original)), attr)
        if isinstance(base, TFSymbol):
            av = TFSymbol(canonical(f"{base.qname}.{attr}"))
            return self._set(self._reference(original, updated, av), av)
        if isinstance(base, Instance):
            av, new = self.tr.classes.attribute(self, base, attr, updated)
            return self._set(new, av)
        av, new = constructs.attribute(self, base, attr, updated)
        return self._set(new, av)

    def _reference(self, original, updated, av: TFSymbol):
        """An uncalled TensorFlow symbol (`tf.nn.relu`, `tf.float32`) → its TF 2 spelling."""
        if id(original) in self._inner or id(original) in self._funcs:
            return updated
        if av.qname in constructs.REFERENCES:
            return constructs.REFERENCES[av.qname](self, av, updated)
        if flags.is_flags(av.qname):
            return flags.reference(self, av.qname)
        try:
            new = reference_to_tf2(short(av.qname))
        except NoTF2Mapping as exc:
            self.tr.refuse(exc.reason)
        return self.tr.tf(new)

    # -- calls -------------------------------------------------------------------------------------
    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if id(original) in self._runs:
            av, new = session.run_call(CallSite(self, "*.run", updated, original))
            return self._set(new, av)
        shape = self.item_shape(original, updated)
        if shape is not None:
            return self._set(shape, HOST)
        func = self.value_of(updated.func)
        assign = assign_ops.as_method(self, original, updated, func.qname if isinstance(func, TFSymbol) else None)
        if assign is not None:  # an assignment of a comprehension's item over variables: its op is the comprehension's
            self._item_assigns.add(id(original))
            self._item_assign_funcs.add(id(original.func))
            return self._set(assign, Tensor(single=False))
        self.check_item_calls(original, updated, func)
        if isinstance(func, TFSymbol):
            site = CallSite(self, func.qname, updated, original)
            handler = constructs.CALLS.get(func.qname)
            av, new = handler(site) if handler is not None else constructs.tf_call(site)
        elif isinstance(func, Func):
            av, new = self.tr.helper_call(CallSite(self, func.node.name.value, updated, original), func)
        elif isinstance(func, Class):
            av, new = self.tr.classes.instantiate(CallSite(self, func.node.name.value, updated, original), func)
        elif isinstance(func, Other) and func.kind == OtherKind.MEMBER:
            site = CallSite(self, "*." + func.info["attr"], updated, original, receiver=func.info["of"])
            av, new = constructs.method(site)
        elif isinstance(func, StateRef):
            av, new = constructs.call_state(CallSite(self, "*.__call__", updated, original, receiver=func))
        else:
            av, new = self._host_call(original, updated)
        return self._set(new, av)

    def _host_call(self, original: cst.Call, updated: cst.Call) -> tuple:
        args = [self.value_of(a.value) for a in updated.args]
        name = original.func.value if isinstance(original.func, cst.Name) else None
        if name == "sum" and "sum" not in self.env and any(holds_tf(a) and not a.graph for a in args):
            return Element(args[0]), updated  # `sum([body_vars, head_vars], [])`: still variables
        if not any(a.graph for a in args):
            return HOST, updated
        name = original.func.value if isinstance(original.func, cst.Name) else None
        if name in STATIC or name == "print" and "print" not in self.env:  # the statement decides on a print
            return HOST, updated
        if name in STRUCTURAL and name not in self.env:
            return Tensor(single=False), updated  # `list(...)`, `zip(...)`: a structure
        if name in item_uses.ARITHMETIC and name not in self.env and self.tr.names.raw(original.func) is None:
            return Tensor(), updated
        what = name or self.tr.code(original.func)
        self.tr.refuse(f"`{what}(...)` is given graph values while the graph is built: TF 2 has no symbolic "
                       "tensors outside a step function")

    def _static_read(self, original: cst.CSTNode) -> None:
        """The names under `original` are read for their static shape only: a name read nowhere else in
        the expression is no graph use of it."""
        if self.top is None:
            return
        if self.tr.dropped:
            self._static_ids.update(id(n) for n in name_nodes(original))
        if self._top_counts is None:
            self._top_counts = name_counts(self.top)
        for name, count in name_counts(original).items():
            self._static[name] = self._static.get(name, 0) + count
            if self._static[name] == self._top_counts.get(name, 0):
                self.uses.discard(name)

    # -- everything else: a graph value if any part is one ------------------------------------------
    def _any_graph(self, node: cst.CSTNode) -> bool:
        return any(self.value_of(c).graph for c in children(node))

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        base = self.value_of(updated.value)
        if isinstance(updated.value, (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp)) and not updated.value.lpar:
            # a call rewritten into an operation (`tf.trainable_variables()[0]` → `([W] + dense.trainable_variables)[0]`)
            updated = updated.with_changes(value=updated.value.with_changes(lpar=[cst.LeftParen()],
                                                                            rpar=[cst.RightParen()]))
        index = updated.slice[0].slice if len(updated.slice) == 1 else None
        key = index.value if isinstance(index, cst.Index) else None
        if isinstance(base, Other) and base.kind == OtherKind.SHAPE and "of" in base.info:
            static = self._static_dims(base, index, key)
            if static is not None:  # `x.shape[1]`: TF 1.x's Dimension, known while the graph is built
                self._static_read(original)
                if isinstance(static, cst.Integer):
                    self._dimensions.add(id(static))
                return self._set(static, HOST)
        if isinstance(base, Seq) and shp.literal(key) is not None and -len(base.items) <= shp.literal(key) < len(base.items):
            return self._set(updated, base.items[shp.literal(key)])
        if isinstance(base, Seq) and not base.fields and isinstance(index, cst.Slice):
            parts = (index.lower, index.upper, index.step)
            bounds = [None if part is None else shp.literal(part) for part in parts]
            if all(b is not None for b, part in zip(bounds, parts) if part is not None) and bounds[2] != 0:
                return self._set(updated, Seq(base.items[slice(*bounds)], base.kind))  # `tvars[:2]`: those items
        if isinstance(base, Mapping) and isinstance(key, cst.SimpleString):
            for k, v in zip(base.keys, base.items):
                if isinstance(k, cst.SimpleString) and k.evaluated_value == key.evaluated_value:
                    return self._set(updated, v)
        if isinstance(base, Tensor) and not base.single and base.element is not None and len(updated.slice) == 1:
            if shp.literal(key) is not None:  # one tensor of a list of tensors (`outputs[-1]`)
                return self._set(updated, Tensor(list(base.element)))
            if isinstance(index, cst.Slice):
                return self._set(updated, Tensor(single=False, element=base.element))
        if isinstance(base, Tensor) and not base.single and (base.pairs or isinstance(index, cst.Slice)):
            return self._set(updated, Tensor(single=False))  # a (gradient, variable) pair; a slice of a list
        if isinstance(base, (Tensor, Input)) or (isinstance(base, StateRef) and base.graph):
            shape = _shape(base)
            return self._set(updated, Tensor(None if shape is None else shp.indexed(shape, updated.slice)))
        graph = any(self.value_of(s.slice.value).graph for s in updated.slice if isinstance(s.slice, cst.Index))
        if not (base.graph or graph) and isinstance(base, (Seq, Mapping, Element)) and holds_tf(base):
            return self._set(updated, Element(base))  # `tvars[i]`: one of them, not known which
        return self._set(updated, Tensor() if base.graph or graph else HOST)

    def _static_dims(self, shape: Other, index, key) -> Optional[cst.BaseExpression]:
        """`shape[key]` as the number TF 1.x knew, or `as_list()[a:b]` as the list of them, when known."""
        if shp.literal(key) is not None:
            return shp.static_dim(shape.info["of"], shp.literal(key), self.tr.folded)
        dims = shp.of(shape.info["of"])
        if not (shape.info.get("as_list") and isinstance(index, cst.Slice) and dims is not None):
            return None
        bounds = [None if part is None else shp.literal(part) for part in (index.lower, index.upper, index.step)]
        if any(b is None and part is not None for b, part in zip(bounds, (index.lower, index.upper, index.step))) \
                or bounds[2] == 0:
            return None
        known = [shp.static_dim(shape.info["of"], k, self.tr.folded) for k in range(len(dims))[slice(*bounds)]]
        return cst.List([cst.Element(d) for d in known]) if all(d is not None for d in known) else None

    def leave_BinaryOperation(self, original, updated):
        left, right = self.value_of(updated.left), self.value_of(updated.right)
        if isinstance(updated.operator, cst.Add) and isinstance(left, Seq) and isinstance(right, Seq) \
                and left.kind == right.kind and left.kind in (SeqKind.LIST, SeqKind.TUPLE) \
                and not (left.fields or right.fields):
            # Python's concatenation (`d_vars + g_vars`): TF 1.x never added lists as tensors
            return self._set(updated, Seq([*left.items, *right.items], left.kind))
        if not (left.graph or right.graph):
            return self._set(updated, HOST)
        if any(isinstance(v, Seq) and v.graph or isinstance(v, Tensor) and not v.single for v in (left, right)):
            return self._set(updated, Tensor(single=False))  # `grads + [g]`: Python's lists, not one tensor
        shape = shp.broadcast(shp.operand(left, updated.left), shp.operand(right, updated.right))
        return self._set(updated, Tensor(shape))

    def leave_UnaryOperation(self, original, updated):
        inner = self.value_of(updated.expression)
        return self._set(updated, Tensor(_shape(inner)) if inner.graph else HOST)

    def leave_List(self, original, updated):
        return self._set(updated, Seq([self.value_of(e.value) for e in updated.elements], SeqKind.LIST))

    def leave_Tuple(self, original, updated):
        return self._set(updated, Seq([self.value_of(e.value) for e in updated.elements], SeqKind.TUPLE))

    def leave_Dict(self, original, updated):
        keys, items = [], []
        for e in updated.elements:
            if not isinstance(e, cst.DictElement):
                return self._set(updated, Tensor() if self._any_graph(updated) else HOST)
            keys.append(e.key)
            items.append(self.value_of(e.value))
        return self._set(updated, Mapping(keys, items))

    def on_leave(self, original_node, updated_node):
        new = super().on_leave(original_node, updated_node)
        if isinstance(new, cst.CSTNode) and id(new) not in self._av and isinstance(new, cst.BaseExpression):
            if self._any_graph(new):
                self._set(new, Tensor())
        if isinstance(new, cst.CSTNode):
            self._original[id(original_node)] = self.value_of(new)
            self._alive.append(original_node)
        return new

    def value_of_original(self, node: cst.CSTNode) -> AV:
        """The abstract value of an input node already evaluated (e.g. a comprehension's iterable)."""
        return self._original.get(id(node), HOST)

    def leave_Element(self, original, updated):
        return updated


_shape = shp.of


def _holds_items(node: cst.CSTNode, items: set) -> bool:
    """`node` is one of `items` (a loop's items), a part of one (`pair[1]`), or a tuple or list holding one."""
    while isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, (cst.Tuple, cst.List)):
        return any(_holds_items(e.value, items) for e in node.elements)
    return isinstance(node, cst.Name) and node.value in items


def without_tf2_spelling(qname: str) -> bool:
    """A TensorFlow symbol referred to, not called, that has no TF 2 spelling (`tf.layers.dense`):
    `dense = tf.layers.dense` binds it as written (`interpret`), what its calls become is decided
    at each call."""
    if qname in constructs.REFERENCES or flags.is_flags(qname):
        return False
    try:
        reference_to_tf2(short(qname))
    except NoTF2Mapping:
        return True
    return False

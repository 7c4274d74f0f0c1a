"""What `distribute` needs to know of a TF2-tier program before it rewrites it, or why it cannot.

`analyse(names)` finds the ONE train step (a module-level `tf.function` calling
`optimizer.apply_gradients`) and checks the shape `codemods.tf2.distribute` rewrites: its
arguments are batches (first dimension None) or scalars, by its input_signature; it starts with
`with tf.GradientTape() as tape:` whose statements are `name = expression`, each known to treat
every example of the batch on its own, the last a `tf.reduce_mean`/`tf.reduce_sum` over the whole
batch (the loss); one `tape.gradient(loss, VARIABLES)` after the tape; one optimizer, a Keras one
that does not clip by itself; the state (variables, layers built up front, the optimizer) made at
module level before the step. Anything else is `Refuse(line, reason)`. Never imports TensorFlow.
"""
from __future__ import annotations

import enum
from typing import Optional

import libcst as cst
import libcst.matchers as m

from codemods.tf2._base import Names, Refuse, code, names_in, walk

# Keras layers whose call maps each example (row) of its input on its own.
ROW_LAYERS = ("tensorflow.keras.layers.Dense", "tensorflow.keras.layers.Embedding")
# Element-wise functions: each output element depends on the same element of the inputs.
ELEMENTWISE = {
    f"tensorflow.{name}" for name in (
        "square", "math.square", "abs", "math.abs", "exp", "math.exp", "log", "math.log", "sqrt", "math.sqrt",
        "tanh", "math.tanh", "nn.tanh", "sigmoid", "math.sigmoid", "nn.sigmoid", "nn.relu", "nn.relu6",
        "nn.elu", "nn.softplus", "math.softplus", "nn.leaky_relu", "cast", "math.squared_difference",
        "squared_difference", "maximum", "math.maximum", "minimum", "math.minimum", "add", "math.add",
        "subtract", "math.subtract", "multiply", "math.multiply", "divide", "math.divide", "negative",
        "math.negative", "nn.sigmoid_cross_entropy_with_logits", "math.log1p", "math.pow", "pow")
}
MATMUL = ("tensorflow.matmul", "tensorflow.linalg.matmul")
MEAN = ("tensorflow.reduce_mean", "tensorflow.math.reduce_mean")
SUM = ("tensorflow.reduce_sum", "tensorflow.math.reduce_sum")
KERAS_CLIP_ARGS = ("clipnorm", "clipvalue", "global_clipnorm")


class Reduction(enum.Enum):
    """How the loss reduces the batch: a mean (each replica scales its loss to the global batch) or a sum."""

    MEAN = "mean"
    SUM = "sum"


class Step:
    """What the analysis of the train step found."""

    def __init__(self):
        self.index = -1
        self.node: Optional[cst.FunctionDef] = None
        self.params: list[str] = []
        self.batch: list[bool] = []
        self.tape = ""
        self.loss = ""
        self.kind: Optional[Reduction] = None
        self.var_list = ""
        self.optimizer = ""
        self.grad_stmt = -1  # index in the body of `NAME = tape.gradient(...)`, if that simple
        self.grad_name = ""
        self.loss_line = 0
        self.layers: dict = {}  # module-level names of row-wise Keras layers → their assignment
        self.start = self.end = -1  # the module-level statements that create state: body[start:end + 1]
        self.built = False  # the optimizer is built there already


def analyse(names: Names) -> Step:
    """The train step of the module `names` reads, checked to be of the shape that is distributed."""
    step = _find_step(names)
    _analyse_signature(names, step)
    step.layers = _layer_names(names, step.index)
    _analyse_tape(names, step, step.layers)
    _analyse_after_tape(names, step)
    step.start, step.end, step.built = _state_region(names, step, step.layers)
    return step


def _is_tf_function(names: Names, fn: cst.FunctionDef) -> Optional[cst.Decorator]:
    for d in fn.decorators:
        target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        if names.is_(target, "tensorflow.function"):
            return d
    return None


def _apply_calls(node: cst.CSTNode) -> list[cst.Call]:
    return [n for n in walk(node) if m.matches(n, m.Call(func=m.Attribute(attr=m.Name("apply_gradients"))))]


def _find_step(names: Names) -> Step:
    steps = []
    for i, st in enumerate(names.module.body):
        if isinstance(st, cst.FunctionDef) and _is_tf_function(names, st) and _apply_calls(st):
            steps.append(i)
    if not steps:
        raise Refuse(0, "no train step (a tf.function that calls optimizer.apply_gradients) at module level")
    if len(steps) > 1:
        second = names.module.body[steps[1]]
        raise Refuse(names.line(second), "more than one train step: only a program with one is distributed")
    step = Step()
    step.index = steps[0]
    step.node = names.module.body[steps[0]]
    for n in walk(names.module):
        if m.matches(n, m.Call(func=m.Attribute(attr=m.Name("apply_gradients")))) and not _inside(n, step.node):
            raise Refuse(names.line(n), "apply_gradients outside the train step")
    return step


def _inside(node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return any(n is node for n in walk(container))


def _analyse_signature(names: Names, step: Step) -> None:
    fn = step.node
    line = names.line(fn)
    params = fn.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg or params.kwonly_params \
            or params.posonly_params or any(p.default is not None for p in params.params):
        raise Refuse(line, f"`{fn.name.value}` has */** or default arguments: its batch arguments are not known")
    step.params = [p.name.value for p in params.params]
    deco = _is_tf_function(names, fn)
    call = deco.decorator if isinstance(deco.decorator, cst.Call) else None
    signature = None
    for a in (call.args if call else ()):
        if a.keyword is not None and a.keyword.value == "input_signature":
            signature = a.value
    if not isinstance(signature, (cst.List, cst.Tuple)) or len(signature.elements) != len(step.params):
        raise Refuse(line, f"`{fn.name.value}` has no input_signature naming its arguments' shapes: which of them "
                           "are batches is not known")
    for p, el in zip(step.params, signature.elements):
        spec = el.value
        shape = spec.args[0].value if isinstance(spec, cst.Call) and spec.args else None
        if not (isinstance(spec, cst.Call) and names.is_(spec.func, "tensorflow.TensorSpec")
                and isinstance(shape, (cst.List, cst.Tuple))):
            raise Refuse(line, f"argument `{p}`: input_signature entry `{code(spec)}` is not a TensorSpec "
                               "with a literal shape")
        if not shape.elements:
            step.batch.append(False)  # a scalar: the same on every replica
        elif m.matches(shape.elements[0].value, m.Name("None")):
            step.batch.append(True)
        else:
            raise Refuse(line, f"argument `{p}` has a fixed first dimension ({code(shape)}): only batches "
                               "(first dimension None) and scalars are distributed")
    if not any(step.batch):
        raise Refuse(line, f"`{fn.name.value}` takes no batch argument (first dimension None): nothing to shard")


def _layer_names(names: Names, before: int) -> dict:
    """Module-level names bound (before the step) to a row-wise Keras layer → the assignment."""
    out = {}
    for st in names.module.body[:before]:
        if m.matches(st, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                               value=m.Call())])):
            assign = st.body[0]
            if names.is_(assign.value.func, *ROW_LAYERS):
                out[assign.targets[0].target.value] = st
    return out


def _analyse_tape(names: Names, step: Step, layers: dict) -> None:
    body = step.node.body.body
    first = body[0] if body else None
    tape_with = m.With(items=[m.WithItem(item=m.Call(args=[]), asname=m.AsName(name=m.Name()))])
    if m.matches(first, m.With(items=[m.WithItem(item=m.Call())])) and first.items[0].item.args \
            and names.is_(first.items[0].item.func, "tensorflow.GradientTape"):
        raise Refuse(names.line(first), f"`{code(first.items[0].item)}`: a tape with arguments (persistent, "
                                        "watching) is not distributed, only one gradient of one loss")
    if not (m.matches(first, tape_with) and names.is_(first.items[0].item.func, "tensorflow.GradientTape")):
        raise Refuse(names.line(first or step.node), "the train step does not start with "
                                                     "`with tf.GradientTape() as tape:`")
    step.tape = first.items[0].asname.name.value
    batch = {p for p, b in zip(step.params, step.batch) if b}
    statements = list(first.body.body)
    single_assign = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])
    for i, st in enumerate(statements):
        if not m.matches(st, single_assign):
            raise Refuse(names.line(st), "the forward pass is not a sequence of `name = expression` "
                                         f"statements: `{code(st).strip()}`")
        target = st.body[0].targets[0].target.value
        value = st.body[0].value
        if i == len(statements) - 1:
            _analyse_loss(names, step, target, value, batch, layers)
        elif _rowwise(names, value, batch, layers):
            batch.add(target)
        else:
            batch.discard(target)


def _analyse_loss(names: Names, step: Step, target: str, value: cst.BaseExpression, batch: set,
                  layers: dict) -> None:
    line = names.line(value)
    reduce = m.Call(args=[m.Arg(keyword=None)]) | m.Call(args=[m.Arg(keyword=None),
                                                               m.Arg(keyword=m.Name("axis"), value=m.Name("None"))])
    kind = Reduction.MEAN if names.is_(getattr(value, "func", None), *MEAN) else \
        Reduction.SUM if names.is_(getattr(value, "func", None), *SUM) else None
    if kind is None or not m.matches(value, reduce):
        raise Refuse(line, f"the loss `{code(value)}` is not a tf.reduce_mean or tf.reduce_sum over the whole "
                           "batch: its per-replica part is not provably a share of the single-device loss")
    if not _rowwise(names, value.args[0].value, batch, layers):
        raise Refuse(line, f"the loss `{code(value)}` does not reduce a per-example tensor of the batch")
    step.loss, step.kind, step.loss_line = target, kind, line


def _rowwise(names: Names, node: cst.BaseExpression, batch: set, layers: dict) -> bool:
    """True if `node` is per example of the batch, False if it does not depend on the batch;
    Refuse if it may mix examples (or is random, or is not known)."""
    def refuse(what: str):
        raise Refuse(names.line(node), f"`{code(node)}` in the forward pass {what}: the replicas' shards "
                                       "would not add up to the single-device loss")

    if isinstance(node, cst.Name):
        return node.value in batch
    if isinstance(node, (cst.Integer, cst.Float)):
        return False
    if isinstance(node, cst.Attribute):
        if names_in(node) & batch:
            refuse("reads an attribute of a batch tensor")
        return False
    if isinstance(node, cst.UnaryOperation):
        return _rowwise(names, node.expression, batch, layers)
    if isinstance(node, cst.BinaryOperation):
        left = _rowwise(names, node.left, batch, layers)
        right = _rowwise(names, node.right, batch, layers)
        if isinstance(node.operator, cst.MatrixMultiply) and right:
            refuse("multiplies by a batch on the right")
        if not isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power,
                                          cst.MatrixMultiply)):
            refuse("uses an operator not known to be element-wise")
        return left or right
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name) and func.value in layers:
            if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
                refuse("calls a layer with more than its input (training=, masks)")
            return _rowwise(names, node.args[0].value, batch, layers)
        if isinstance(func, cst.Name) and func.value in batch:
            refuse("calls a batch tensor")
        if names.is_(func, *MATMUL):
            if len(node.args) != 2 or any(a.keyword is not None or a.star for a in node.args):
                refuse("calls matmul with keywords (a transpose would move the batch axis)")
            if _rowwise(names, node.args[1].value, batch, layers):
                refuse("multiplies by a batch on the right")
            return _rowwise(names, node.args[0].value, batch, layers)
        if names.is_(func, *ELEMENTWISE):
            if any(a.star for a in node.args):
                refuse("passes *args")
            found = [_rowwise(names, a.value, batch, layers) for a in node.args]
            return any(found)
        refuse("calls something not known to treat each example on its own (layers other than "
               "Dense/Embedding, reductions, random ops, batch statistics)")
    refuse("is an expression not known to treat each example on its own")
    return False  # pragma: no cover


def _analyse_after_tape(names: Names, step: Step) -> None:
    body = step.node.body.body
    tape_block = body[0]
    inner = {st.body[0].targets[0].target.value for st in tape_block.body.body} - {step.loss}
    grads = []
    for st in body[1:]:
        for n in walk(st):
            if isinstance(n, (cst.FunctionDef, cst.Lambda)) and step.tape in names_in(n):
                raise Refuse(names.line(st), f"`{step.tape}` is used inside a nested function")
            if m.matches(n, m.Call(func=m.Attribute(value=m.Name(step.tape), attr=m.Name("gradient")))):
                grads.append((st, n))
        used = names_in(st)
        if used & inner:
            name = sorted(used & inner)[0]
            raise Refuse(names.line(st), f"`{name}` is computed per replica inside the tape and used after it: "
                                         "only the loss is all-reduced")
    if len(grads) != 1:
        raise Refuse(names.line(tape_block), f"`{step.tape}.gradient` is called {len(grads)} times after the "
                                             "tape: exactly one gradient computation is distributed")
    st, call = grads[0]
    tape_uses = sum(1 for n in walk(st) if m.matches(n, m.Name(step.tape)))
    other_uses = sum(1 for s in body[1:] if s is not st for n in walk(s) if m.matches(n, m.Name(step.tape)))
    if tape_uses != 1 or other_uses:
        raise Refuse(names.line(st), f"`{step.tape}` is used for more than one tape.gradient call")
    if len(call.args) != 2 or any(a.keyword is not None or a.star for a in call.args) \
            or not m.matches(call.args[0].value, m.Name(step.loss)) or not m.matches(call.args[1].value, m.Name()):
        raise Refuse(names.line(st), f"`{code(call)}` is not `{step.tape}.gradient({step.loss}, VARIABLES)`")
    step.var_list = call.args[1].value.value
    if step.var_list in step.params:
        raise Refuse(names.line(st), f"the variables `{step.var_list}` are an argument of the step")
    if m.matches(st, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                          value=m.Call())])) and st.body[0].value is call:
        step.grad_stmt = list(body).index(st)
        step.grad_name = st.body[0].targets[0].target.value
    optimizers = {code(c.func.value) for c in _apply_calls(step.node)}
    if len(optimizers) != 1 or not all(m.matches(c.func.value, m.Name()) for c in _apply_calls(step.node)):
        raise Refuse(names.line(step.node), "the step's apply_gradients calls are not on one optimizer name")
    step.optimizer = optimizers.pop()
    for c in _apply_calls(step.node):
        for n in walk(step.node.body.body[0]):
            if n is c:
                raise Refuse(names.line(c), "apply_gradients inside the tape")


def _state_region(names: Names, step: Step, layers: dict) -> tuple[int, int, bool]:
    """Indices [start, end] of the module-level statements that create state, and whether the
    optimizer is already built there."""
    body = names.module.body
    state = []
    optimizer_ok = False
    built = False
    for i, st in enumerate(body):
        if i == step.index or isinstance(st, cst.ClassDef):  # a class statement creates nothing
            continue
        creates = False
        for n in walk(st):
            if isinstance(n, cst.Call):
                if names.under(n.func, "tensorflow.keras.layers", "tensorflow.keras.optimizers") \
                        or names.is_(n.func, "tensorflow.Variable"):
                    creates = True
                    if isinstance(st, cst.FunctionDef):
                        raise Refuse(names.line(n), "function creating variables or layers: they could not "
                                                    "be created under the strategy's scope")
                if m.matches(n.func, m.Attribute(attr=m.Name("build") | m.Name("assign"))) and \
                        not isinstance(st, cst.FunctionDef):
                    creates = True
                if m.matches(n.func, m.Attribute(value=m.Name(step.optimizer), attr=m.Name("build"))):
                    built = True
        if m.matches(st, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(
                target=m.Name(step.var_list) | m.Name(step.optimizer))])])):
            creates = True
            target = st.body[0].targets[0].target.value
            value = st.body[0].value
            if target == step.optimizer:
                func = value.func if isinstance(value, cst.Call) else None
                if not names.under(func, "tensorflow.keras.optimizers") and not _keras_optimizer_class(names, func):
                    raise Refuse(names.line(st), f"`{step.optimizer}` is not a Keras optimizer "
                                                 "(tf.keras.optimizers.*)")
                clip = [a.keyword.value for a in value.args if a.keyword is not None
                        and a.keyword.value in KERAS_CLIP_ARGS]
                if clip:
                    raise Refuse(names.line(st), f"the optimizer clips by itself ({clip[0]}=): under a strategy "
                                                 "Keras 3 clips each replica's part before summing; clip the "
                                                 "all-reduced gradients explicitly instead")
                optimizer_ok = True
        if creates:
            if i > step.index:
                raise Refuse(names.line(st), "state created after the train step: it could not be created "
                                             "under the strategy's scope with the rest")
            state.append(i)
    if not optimizer_ok:
        raise Refuse(names.line(step.node), f"`{step.optimizer}` is not assigned once at module level before "
                                            "the train step")
    for layer, st in layers.items():
        if not any(m.matches(n, m.Call(func=m.Attribute(value=m.Name(layer), attr=m.Name("build"))))
                   for i in state for n in walk(body[i])):
            raise Refuse(names.line(st), f"layer `{layer}` is not built up front: it would create its "
                                         "variables inside a replica")
    return state[0], state[-1], built


def _keras_optimizer_class(names: Names, func) -> bool:
    """`func` names a class of the module deriving from tf.keras.optimizers.Optimizer (an exact
    twin of a TF 1.x optimizer, `optimizer_twins`)."""
    if not isinstance(func, cst.Name):
        return False
    for st in names.module.body:
        if isinstance(st, cst.ClassDef) and st.name.value == func.value:
            return any(names.is_(b.value, "tensorflow.keras.optimizers.Optimizer") for b in st.bases)
    return False

"""A TF2-tier program → the same training under `tf.distribute` (`--strategy mirrored|multi_worker`).

Applied to the output of `codemods.tf2.convert`, never to TF 1.x text. The recognized shape is
the one the TF2 tier emits: module-level state (Keras layers built up front, variables, one
Keras optimizer, the list of variables it updates), then ONE `@tf.function(input_signature=...)`
train step whose body starts with `with tf.GradientTape() as tape:` (the forward pass, last
statement `loss = tf.reduce_mean(...)` or `tf.reduce_sum(...)`), takes `tape.gradient(loss, V)`
once, clips, and calls `optimizer.apply_gradients`, called from a Python loop with the global
batch. The rewrite:

* `strategy = tf.distribute.MirroredStrategy()` (or `MultiWorkerMirroredStrategy()`), and the
  state statements moved under `with strategy.scope():`, ending with `optimizer.build(V)` so
  the optimizer's slots are mirrored too (Keras raises on slots made outside the scope);
* the step keeps its name, signature and result: each replica gets its shard of the global
  batch (`experimental_distribute_values_from_function`, contiguous rows, sizes differ by at
  most one: every replica needs at least one example), runs the forward pass and returns the
  gradient of ITS PART of the global loss: a mean over the batch is scaled by shard size /
  global size, a sum is not scaled, anything else is refused (only these two are provably the
  single-device loss once summed); every op of the forward pass must be known to treat each
  example separately (Keras Dense/Embedding layers, element-wise math, `matmul` by a
  non-batch matrix), else refused (batch statistics, random ops, slicing the batch);
* in cross-replica context the loss and the gradients are all-reduced ONCE
  (`strategy.reduce(SUM, ..., axis=None)`; `IndexedSlices` stay sparse: their rows are
  concatenated, the rows the single-device gradient has), then the step's own code runs
  unchanged on them: the same clip (element-wise, per tensor or global), applied once, and
  `optimizer.apply_gradients` in cross-replica context, where Keras 3 does not aggregate
  again. Keras' own `clipnorm`/`clipvalue`/`global_clipnorm` are refused: under a strategy
  Keras 3 clips each replica's part before the sum.

Other `tf.function`s (e.g. a gradient-norm probe) are left as they are: they read the mirrored
variables on one device, on the whole global batch, and return what they returned before.
Text in, text out; never imports TensorFlow. `Refuse(line, reason)` when the program is not of
this shape (the line is of the TF2-tier text; `distribute()` maps it back to the source).
"""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst
import libcst.matchers as m

from codemods.tf2._base import Names, Note, Refuse, Result, code, fresh, names_in, walk
from codemods.tf2.names import tf_alias

RULE = "distribute"
DESCRIPTION = "Run the TF2-tier train step under tf.distribute: shard, all-reduce once, clip once, apply."

STRATEGIES = {
    "mirrored": "tf.distribute.MirroredStrategy()",
    "multi_worker": "tf.distribute.MultiWorkerMirroredStrategy()",
}

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

# (strategy, before, after): run by tests/test_tf2_distribute.py, with applied-twice == once.
EXAMPLES = [
    ("mirrored",
     '''import tensorflow as tf

layer = tf.keras.layers.Dense(1)
layer.build((None, 2))
optimizer = tf.keras.optimizers.SGD(0.1)
variables = layer.trainable_variables


@tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(layer(x) - y))
    gradients = tape.gradient(loss, variables)
    gradients, _ = tf.clip_by_global_norm(gradients, 1.0)
    optimizer.apply_gradients(zip(gradients, variables))
    return loss
''',
     '''import tensorflow as tf

# variables, layers and the optimizer (its slots too) are created once, mirrored on every replica
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    layer = tf.keras.layers.Dense(1)
    layer.build((None, 2))
    optimizer = tf.keras.optimizers.SGD(0.1)
    variables = layer.trainable_variables
    optimizer.build(variables)


def batch_shard(batch, ctx):
    """This replica's rows of a global batch: contiguous, shard sizes differ by at most one."""
    size = tf.shape(batch)[0]
    i, n = ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync
    return batch[size * i // n:size * (i + 1) // n]


@tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
def train_step(x, y):
    def replica_step(x, y):
        # a sum over the batch: the replicas' sums add up to the global sum
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(x) - y))
        return tape.gradient(loss, variables), loss

    # each replica gets its shard of the global batch
    shards = strategy.experimental_distribute_values_from_function(
        lambda ctx: (batch_shard(x, ctx), batch_shard(y, ctx)))
    replica_gradients, replica_loss = strategy.run(replica_step, args=shards)
    # all-reduce once (cross-replica context): the loss and the gradients of the global batch;
    # the clip below then runs once on them and apply_gradients does not sum again
    loss = strategy.reduce(tf.distribute.ReduceOp.SUM, replica_loss, axis=None)
    gradients = [None if g is None else strategy.reduce(tf.distribute.ReduceOp.SUM, g, axis=None)
                 for g in replica_gradients]
    gradients, _ = tf.clip_by_global_norm(gradients, 1.0)
    optimizer.apply_gradients(zip(gradients, variables))
    return loss
'''),
    ("multi_worker",  # per-tensor clip of a sparse (Embedding) gradient; a scalar argument is replicated
     '''import tensorflow as tf

embedding = tf.keras.layers.Embedding(100, 4)
embedding.build((None,))
head = tf.keras.layers.Dense(1)
head.build((None, 4))
params = embedding.trainable_variables + head.trainable_variables
opt = tf.keras.optimizers.Adam(0.01, epsilon=1e-8)


@tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 1], tf.float32),
                              tf.TensorSpec([], tf.float32)])
def step(ids, target, weight):
    with tf.GradientTape() as g:
        out = head(embedding(ids))
        cost = tf.reduce_mean(weight * tf.square(out - target))
    pairs = list(zip(g.gradient(cost, params), params))
    clipped = [(None if grad is None else tf.clip_by_norm(grad, 1.0), v) for grad, v in pairs]
    opt.apply_gradients(clipped)
    return cost
''',
     '''import tensorflow as tf

# variables, layers and the optimizer (its slots too) are created once, mirrored on every replica
strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    embedding = tf.keras.layers.Embedding(100, 4)
    embedding.build((None,))
    head = tf.keras.layers.Dense(1)
    head.build((None, 4))
    params = embedding.trainable_variables + head.trainable_variables
    opt = tf.keras.optimizers.Adam(0.01, epsilon=1e-8)
    opt.build(params)


def batch_shard(batch, ctx):
    """This replica's rows of a global batch: contiguous, shard sizes differ by at most one."""
    size = tf.shape(batch)[0]
    i, n = ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync
    return batch[size * i // n:size * (i + 1) // n]


@tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 1], tf.float32),
                              tf.TensorSpec([], tf.float32)])
def step(ids, target, weight):
    # each replica scales its loss by its share of the global batch
    global_batch_size = tf.shape(ids)[0]

    def replica_step(ids, target, weight):
        # this replica's part of the global-batch mean: its shard's mean * shard size / global size
        with tf.GradientTape() as g:
            out = head(embedding(ids))
            cost = tf.reduce_mean(weight * tf.square(out - target))
            scaled_loss = cost * tf.cast(tf.shape(ids)[0] / global_batch_size, cost.dtype)
        return g.gradient(scaled_loss, params), scaled_loss

    # each replica gets its shard of the global batch
    shards = strategy.experimental_distribute_values_from_function(
        lambda ctx: (batch_shard(ids, ctx), batch_shard(target, ctx), weight))
    replica_gradients, replica_loss = strategy.run(replica_step, args=shards)
    # all-reduce once (cross-replica context): the loss and the gradients of the global batch;
    # the clip below then runs once on them and apply_gradients does not sum again
    cost = strategy.reduce(tf.distribute.ReduceOp.SUM, replica_loss, axis=None)
    gradients = [None if g_2 is None else strategy.reduce(tf.distribute.ReduceOp.SUM, g_2, axis=None)
                 for g_2 in replica_gradients]
    pairs = list(zip(gradients, params))
    clipped = [(None if grad is None else tf.clip_by_norm(grad, 1.0), v) for grad, v in pairs]
    opt.apply_gradients(clipped)
    return cost
'''),
]

# (before, reason fragment): programs that are refused, with why.
_BASE = EXAMPLES[0][1]
REFUSED = [
    ("import tensorflow as tf\nx = tf.constant(1.0)\n", "no train step"),
    (_BASE.replace("tf.reduce_sum(tf.square(layer(x) - y))", "tf.nn.l2_loss(layer(x) - y)"),
     "is not a tf.reduce_mean or tf.reduce_sum over the whole batch"),
    (_BASE.replace("tf.reduce_sum(tf.square(layer(x) - y))", "tf.reduce_sum(tf.square(layer(x) - y), axis=0)"),
     "is not a tf.reduce_mean or tf.reduce_sum over the whole batch"),
    (_BASE.replace("tf.square(layer(x) - y)", "tf.square(layer(x - tf.reduce_mean(x, axis=0)) - y)"),
     "not known to treat each example on its own"),
    (_BASE.replace("tf.square(layer(x) - y)", "tf.square(layer(x) - y + tf.random.normal([1]))"),
     "not known to treat each example on its own"),
    (_BASE.replace("SGD(0.1)", "SGD(0.1, global_clipnorm=1.0)"), "the optimizer clips by itself (global_clipnorm=)"),
    (_BASE.replace("tf.TensorSpec([None, 1], tf.float32)", "tf.TensorSpec([16, 1], tf.float32)"),
     "argument `y` has a fixed first dimension"),
    (_BASE.replace("        loss = tf.reduce_sum", "        pred = layer(x)\n        loss = tf.reduce_sum")
     .replace("return loss", "return loss, pred"), "`pred` is computed per replica"),
    (_BASE.replace("layer.build((None, 2))\n", ""), "layer `layer` is not built up front"),
]


def _tf(text: str, alias: str) -> str:
    return text if alias == "tf" else re.sub(r"\btf\.", alias + ".", text)


class _Step:
    """What the analysis of the train step found."""

    def __init__(self):
        self.index = -1
        self.node: Optional[cst.FunctionDef] = None
        self.params: list[str] = []
        self.batch: list[bool] = []
        self.tape = ""
        self.loss = ""
        self.kind = ""  # mean | sum
        self.var_list = ""
        self.optimizer = ""
        self.grad_stmt = -1  # index in the body of `NAME = tape.gradient(...)`, if that simple
        self.grad_name = ""
        self.loss_line = 0


def transform(module: cst.Module, strategy: str) -> tuple[cst.Module, list]:
    """Distribute the TF2-tier `module` over `strategy` ('mirrored' or 'multi_worker')."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {sorted(STRATEGIES)}")
    names = Names(module)
    mod = names.module
    for node in walk(mod):
        if isinstance(node, (cst.Attribute, cst.Name)) and names.under(node, "tensorflow.distribute"):
            return module, []  # already distributed: applying twice equals applying once
    step = _find_step(names)
    module_names = set(names_in(mod))
    _analyse_signature(names, step)
    layers = _layer_names(names, step.index)
    _analyse_tape(names, step, layers)
    _analyse_after_tape(names, step)
    start, end, built = _state_region(names, step, layers)
    alias = tf_alias(mod)
    taken = module_names | {p for p in step.params}
    new = _rewrite(mod, step, start, end, built, alias, strategy, taken)
    notes = [Note(step.loss_line, RULE, "change",
                  f"train step `{step.node.name.value}` distributed with {STRATEGIES[strategy].split('(')[0]}: "
                  f"sharded batch, loss {'scaled to the global batch' if step.kind == 'mean' else 'summed'}, "
                  "gradients all-reduced once, then clipped once and applied in cross-replica context")]
    return new, notes


def distribute(text: str, filename: str = "<string>", strategy: str = "mirrored",
               source: Optional[str] = None) -> Result:
    """Text-level `transform`: `Result.text` is None with a 'human' note (on `source`'s lines
    when the original source is given) when the program is not of the recognized shape."""
    try:
        module = cst.parse_module(text)
        new, notes = transform(module, strategy)
        out = new.code
        compile(out, filename, "exec", dont_inherit=True)
    except Refuse as exc:
        line = _source_line(text, source, exc.line) if source is not None else exc.line
        return Result(None, [Note(line, RULE, "human", f"not distributed (--strategy {strategy}): {exc.reason}")])
    except (cst.ParserSyntaxError, SyntaxError, ValueError, TypeError, AttributeError, IndexError) as exc:
        # a rule bug must not lose the file: it keeps its single-device TF2 output
        return Result(None, [Note(0, RULE, "human", f"not distributed (--strategy {strategy}): the rewrite "
                                                    f"failed ({type(exc).__name__}: {exc}); please report this")])
    if source is not None:
        notes = [Note(_source_line(text, source, n.line), n.rule, n.kind, n.message) for n in notes]
    return Result(out, notes)


def _source_line(text: str, source: str, line: int) -> int:
    """Line `line` of the TF2-tier `text` → the line of `source` with the same code; a line the
    rewrite made (a `def`, a decorator) → the first of the next few lines found; else 0."""
    lines = text.splitlines()
    source_lines = [s.strip() for s in source.splitlines()]
    for candidate in range(line, min(line + 12, len(lines) + 1)) if line > 0 else ():
        wanted = lines[candidate - 1].strip()
        if not wanted or wanted.startswith(("#", "@", "def ", "with ", "return")):
            continue
        for i, s in enumerate(source_lines, 1):
            if s == wanted:
                return i
        for i, s in enumerate(source_lines, 1):
            if len(s) > 8 and (wanted in s or s in wanted):
                return i
    return 0


# -- analysis -----------------------------------------------------------------------------------
def _is_tf_function(names: Names, fn: cst.FunctionDef) -> Optional[cst.Decorator]:
    for d in fn.decorators:
        target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        if names.is_(target, "tensorflow.function"):
            return d
    return None


def _apply_calls(node: cst.CSTNode) -> list[cst.Call]:
    return [n for n in walk(node) if m.matches(n, m.Call(func=m.Attribute(attr=m.Name("apply_gradients"))))]


def _find_step(names: Names) -> _Step:
    steps = []
    for i, st in enumerate(names.module.body):
        if isinstance(st, cst.FunctionDef) and _is_tf_function(names, st) and _apply_calls(st):
            steps.append(i)
    if not steps:
        raise Refuse(0, "no train step (a tf.function that calls optimizer.apply_gradients) at module level")
    if len(steps) > 1:
        second = names.module.body[steps[1]]
        raise Refuse(names.line(second), "more than one train step: only a program with one is distributed")
    step = _Step()
    step.index = steps[0]
    step.node = names.module.body[steps[0]]
    for n in walk(names.module):
        if m.matches(n, m.Call(func=m.Attribute(attr=m.Name("apply_gradients")))) and not _inside(n, step.node):
            raise Refuse(names.line(n), "apply_gradients outside the train step")
    return step


def _inside(node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return any(n is node for n in walk(container))


def _analyse_signature(names: Names, step: _Step) -> None:
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


def _analyse_tape(names: Names, step: _Step, layers: dict) -> None:
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


def _analyse_loss(names: Names, step: _Step, target: str, value: cst.BaseExpression, batch: set,
                  layers: dict) -> None:
    line = names.line(value)
    reduce = m.Call(args=[m.Arg(keyword=None)]) | m.Call(args=[m.Arg(keyword=None),
                                                               m.Arg(keyword=m.Name("axis"), value=m.Name("None"))])
    kind = "mean" if names.is_(getattr(value, "func", None), *MEAN) else \
        "sum" if names.is_(getattr(value, "func", None), *SUM) else ""
    if not kind or not m.matches(value, reduce):
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


def _analyse_after_tape(names: Names, step: _Step) -> None:
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


def _state_region(names: Names, step: _Step, layers: dict) -> tuple[int, int, bool]:
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


# -- rewrite ------------------------------------------------------------------------------------
def _rewrite(mod: cst.Module, step: _Step, start: int, end: int, built: bool, alias: str, strategy: str,
             taken: set) -> cst.Module:
    body = list(mod.body)
    n_strategy = fresh("strategy", taken)
    n_shard = fresh("batch_shard", taken)
    n_replica = fresh("replica_step", taken)
    n_shards = fresh("shards", taken)
    n_rgrads = fresh("replica_gradients", taken)
    n_rloss = fresh("replica_loss", taken)
    n_scaled = fresh("scaled_loss", taken)
    n_global = fresh("global_batch_size", taken)
    n_grads = step.grad_name or fresh("gradients", taken)
    n_g = fresh("g", taken | {step.tape})

    def T(text: str) -> str:
        return _tf(text, alias)

    # module: strategy + scope
    region = [_no_blank_indent(st) for st in body[start:end + 1]]
    lead = region[0].leading_lines
    region[0] = region[0].with_changes(leading_lines=[])
    if not built:
        region.append(cst.parse_statement(f"{step.optimizer}.build({step.var_list})\n"))
    strategy_stmt = cst.parse_statement(T(f"{n_strategy} = {STRATEGIES[strategy]}\n")).with_changes(
        leading_lines=[*lead, cst.EmptyLine(comment=cst.Comment(
            "# variables, layers and the optimizer (its slots too) are created once, mirrored on every replica"))])
    scope = cst.With(items=[cst.WithItem(cst.parse_expression(f"{n_strategy}.scope()"))],
                     body=cst.IndentedBlock(body=region))
    shard_def = cst.parse_statement(T(
        f'def {n_shard}(batch, ctx):\n'
        f'    """This replica\'s rows of a global batch: contiguous, shard sizes differ by at most one."""\n'
        f'    size = tf.shape(batch)[0]\n'
        f'    i, n = ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync\n'
        f'    return batch[size * i // n:size * (i + 1) // n]\n'))
    fn = step.node
    shard_def = shard_def.with_changes(leading_lines=fn.leading_lines)

    # the step
    fbody = list(fn.body.body)
    tape_with = fbody[0]
    first_batch = next(p for p, b in zip(step.params, step.batch) if b)
    pre = []
    target = step.loss
    tape_lines = list(tape_with.body.body)
    if step.kind == "mean":
        pre.append(cst.parse_statement(T(f"{n_global} = tf.shape({first_batch})[0]\n")).with_changes(
            leading_lines=[cst.EmptyLine(comment=cst.Comment(
                "# each replica scales its loss by its share of the global batch"))]))
        tape_lines.append(cst.parse_statement(T(
            f"{n_scaled} = {step.loss} * tf.cast(tf.shape({first_batch})[0] / {n_global}, {step.loss}.dtype)\n")))
        target = n_scaled
        why = ("# this replica's part of the global-batch mean: its shard's mean * shard size / global size")
    else:
        why = "# a sum over the batch: the replicas' sums add up to the global sum"
    new_with = tape_with.with_changes(body=tape_with.body.with_changes(body=tape_lines), leading_lines=[
        cst.EmptyLine(comment=cst.Comment(why))])
    replica_def = cst.FunctionDef(
        name=cst.Name(n_replica), params=fn.params, leading_lines=[cst.EmptyLine(indent=False)] if pre else [],
        body=cst.IndentedBlock(body=[new_with, cst.parse_statement(
            f"return {step.tape}.gradient({target}, {step.var_list}), {target}\n")]))
    pre.append(replica_def)
    shard_args = ", ".join(f"{n_shard}({p}, ctx)" if b else p for p, b in zip(step.params, step.batch))
    if len(step.params) == 1:
        shard_args += ","
    tail = [
        cst.parse_statement(f"{n_shards} = {n_strategy}.experimental_distribute_values_from_function(\n"
                            f"    lambda ctx: ({shard_args}))\n").with_changes(leading_lines=[
                                cst.EmptyLine(indent=False), cst.EmptyLine(comment=cst.Comment(
                                    "# each replica gets its shard of the global batch"))]),
        cst.parse_statement(f"{n_rgrads}, {n_rloss} = {n_strategy}.run({n_replica}, args={n_shards})\n"),
        cst.parse_statement(T(f"{step.loss} = {n_strategy}.reduce(tf.distribute.ReduceOp.SUM, {n_rloss}, "
                              f"axis=None)\n")).with_changes(leading_lines=[
                                  cst.EmptyLine(comment=cst.Comment(
                                      "# all-reduce once (cross-replica context): the loss and the gradients "
                                      "of the global batch;")),
                                  cst.EmptyLine(comment=cst.Comment(
                                      "# the clip below then runs once on them and apply_gradients does not "
                                      "sum again"))]),
        cst.parse_statement(T(f"{n_grads} = [None if {n_g} is None else {n_strategy}.reduce("
                              f"tf.distribute.ReduceOp.SUM, {n_g}, axis=None)\n"
                              f"{' ' * (len(n_grads) + 3)} for {n_g} in {n_rgrads}]\n")),
    ]
    rest = []
    for i, st in enumerate(fbody[1:], 1):
        if i == step.grad_stmt:
            continue
        rest.append(st.visit(_ReplaceGradient(step.tape, n_grads)))
    new_fn = fn.with_changes(body=fn.body.with_changes(body=[*pre, *tail, *rest]),
                             leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    new_body = [*body[:start], strategy_stmt, scope, *body[end + 1:step.index], shard_def, new_fn,
                *body[step.index + 1:]]
    return mod.with_changes(body=new_body)


def _no_blank_indent(st):
    """Blank lines before a statement moved into a block stay blank (no trailing spaces)."""
    return st.with_changes(leading_lines=[
        line.with_changes(indent=False) if line.comment is None else line for line in st.leading_lines])


class _ReplaceGradient(cst.CSTTransformer):
    def __init__(self, tape: str, name: str):
        self.tape, self.name = tape, name

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if m.matches(updated, m.Call(func=m.Attribute(value=m.Name(self.tape), attr=m.Name("gradient")))):
            return cst.Name(self.name)
        return updated

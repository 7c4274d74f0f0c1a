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
this shape (`distribute_analysis` decides; the line is of the TF2-tier text, `distribute()` maps it
back to the source). Examples before and after: `distribute_examples`.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst
import libcst.matchers as m

from codemods.tf2 import emit
from codemods.tf2._base import Names, Note, Refuse, Result, fresh, names_in, walk
from codemods.tf2.distribute_analysis import Reduction, Step, analyse
from codemods.tf2.names import short, tf_alias

RULE = "distribute"
DESCRIPTION = "Run the TF2-tier train step under tf.distribute: shard, all-reduce once, clip once, apply."

STRATEGIES = {
    "mirrored": "tensorflow.distribute.MirroredStrategy",
    "multi_worker": "tensorflow.distribute.MultiWorkerMirroredStrategy",
}


def transform(module: cst.Module, strategy: str) -> tuple[cst.Module, list]:
    """Distribute the TF2-tier `module` over `strategy` ('mirrored' or 'multi_worker')."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {sorted(STRATEGIES)}")
    names = Names(module)
    mod = names.module
    for node in walk(mod):
        if isinstance(node, (cst.Attribute, cst.Name)) and names.under(node, "tensorflow.distribute"):
            return module, []  # already distributed: applying twice equals applying once
    step = analyse(names)
    taken = set(names_in(mod)) | set(step.params)
    new = _rewrite(mod, step, tf_alias(mod), strategy, taken)
    notes = [Note(step.loss_line, RULE, "change",
                  f"train step `{step.node.name.value}` distributed with {short(STRATEGIES[strategy])}: "
                  f"sharded batch, loss {'scaled to the global batch' if step.kind == Reduction.MEAN else 'summed'}, "
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


# -- rewrite ------------------------------------------------------------------------------------
# The code the rewrite adds: templates whose holes are names (str) or nodes (the user's code,
# TensorFlow references spelled with the module's alias by `emit.tf_ref`).
STRATEGY = "{strategy} = {cls}()"
SCOPE = "with {strategy}.scope():\n    {region}"
BUILD = "{optimizer}.build({variables})"
SHARD_DEF = (
    "def {shard}(batch, ctx):\n"
    '    """This replica\'s rows of a global batch: contiguous, shard sizes differ by at most one."""\n'
    "    size = {shape}(batch)[0]\n"
    "    i, n = ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync\n"
    "    return batch[size * i // n:size * (i + 1) // n]\n")
SHARD_CALL = "{shard}({batch}, ctx)"
GLOBAL_SIZE = "{size} = {shape}({batch})[0]"
SCALED_LOSS = "{scaled} = {loss} * {cast}({shape}({batch})[0] / {size}, {loss}.dtype)"
REPLICA_DEF = "def {replica}({params}):\n    {body}"
REPLICA_RETURN = "return {tape}.gradient({target}, {variables}), {target}"
SHARDS = "{shards} = {strategy}.experimental_distribute_values_from_function(\n    lambda ctx: {args})"
RUN = "{grads}, {loss} = {strategy}.run({replica}, args={shards})"
REDUCE_LOSS = "{loss} = {strategy}.reduce({op}, {replica_loss}, axis=None)"
REDUCE_GRADS = "{grads} = [None if {g} is None else {strategy}.reduce({op}, {g}, axis=None) for {g} in {replica_grads}]"


def _rewrite(mod: cst.Module, step: Step, alias: str, strategy: str, taken: set) -> cst.Module:
    body = list(mod.body)
    start, end, built = step.start, step.end, step.built
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
    shape = emit.tf_ref(alias, "tensorflow.shape")
    reduce_sum = emit.tf_ref(alias, "tensorflow.distribute.ReduceOp.SUM")

    # module: strategy + scope
    region = [_no_blank_indent(st) for st in body[start:end + 1]]
    lead = region[0].leading_lines
    region[0] = region[0].with_changes(leading_lines=[])
    if not built:
        region.append(emit.stmt(BUILD, optimizer=step.optimizer, variables=step.var_list))
    strategy_stmt = emit.stmt(STRATEGY, strategy=n_strategy, cls=emit.tf_ref(alias, STRATEGIES[strategy])).with_changes(
        leading_lines=[*lead, *_comments(
            "variables, layers and the optimizer (its slots too) are created once, mirrored on every replica")])
    scope = emit.stmt(SCOPE, strategy=n_strategy, region=cst.IndentedBlock(body=region))
    fn = step.node
    shard_def = emit.stmt(SHARD_DEF, shard=n_shard, shape=shape).with_changes(leading_lines=fn.leading_lines)

    # the step
    fbody = list(fn.body.body)
    tape_with = fbody[0]
    first_batch = next(p for p, b in zip(step.params, step.batch) if b)
    pre = []
    target = step.loss
    tape_lines = list(tape_with.body.body)
    if step.kind == Reduction.MEAN:
        pre.append(emit.stmt(GLOBAL_SIZE, size=n_global, shape=shape, batch=first_batch).with_changes(
            leading_lines=_comments("each replica scales its loss by its share of the global batch")))
        tape_lines.append(emit.stmt(SCALED_LOSS, scaled=n_scaled, loss=step.loss, shape=shape, batch=first_batch,
                                    size=n_global, cast=emit.tf_ref(alias, "tensorflow.cast")))
        target = n_scaled
        why = "this replica's part of the global-batch mean: its shard's mean * shard size / global size"
    else:
        why = "a sum over the batch: the replicas' sums add up to the global sum"
    new_with = tape_with.with_changes(body=tape_with.body.with_changes(body=tape_lines), leading_lines=_comments(why))
    replica_def = emit.stmt(REPLICA_DEF, replica=n_replica, params=fn.params, body=cst.IndentedBlock(body=[
        new_with, emit.stmt(REPLICA_RETURN, tape=step.tape, target=target, variables=step.var_list)])).with_changes(
        leading_lines=[cst.EmptyLine(indent=False)] if pre else [])
    pre.append(replica_def)
    shard_args = cst.Tuple([cst.Element(emit.expr(SHARD_CALL, shard=n_shard, batch=p) if b else cst.Name(p))
                            for p, b in zip(step.params, step.batch)])
    reduce_grads = emit.stmt(REDUCE_GRADS, grads=n_grads, g=n_g, strategy=n_strategy, op=reduce_sum,
                             replica_grads=n_rgrads)
    tail = [
        emit.stmt(SHARDS, shards=n_shards, strategy=n_strategy, args=shard_args).with_changes(leading_lines=[
            cst.EmptyLine(indent=False), *_comments("each replica gets its shard of the global batch")]),
        emit.stmt(RUN, grads=n_rgrads, loss=n_rloss, strategy=n_strategy, replica=n_replica, shards=n_shards),
        emit.stmt(REDUCE_LOSS, loss=step.loss, strategy=n_strategy, op=reduce_sum, replica_loss=n_rloss).with_changes(
            leading_lines=_comments(
                "all-reduce once (cross-replica context): the loss and the gradients of the global batch;",
                "the clip below then runs once on them and apply_gradients does not sum again")),
        # the `for` on its own line, under the bracket's first character
        _for_on_next_line(reduce_grads, len(n_grads) + len(" = [")),
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


def _comments(*lines: str) -> list:
    """Comment lines `# line`, one for each of `lines`, as they are (no rewrapping)."""
    return [cst.EmptyLine(comment=cst.Comment("# " + line)) for line in lines]


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


def _for_on_next_line(st: cst.SimpleStatementLine, column: int) -> cst.SimpleStatementLine:
    """`name = [x for ...]` with its `for` on the next line at `column` (of the statement's indentation)."""
    comp = st.body[0].value
    newline = cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(" " * column))
    return st.with_deep_changes(comp.for_in, whitespace_before=newline)

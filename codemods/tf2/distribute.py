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

import re
from typing import Optional

import libcst as cst
import libcst.matchers as m

from codemods.tf2._base import Names, Note, Refuse, Result, fresh, names_in, walk
from codemods.tf2.distribute_analysis import Reduction, Step, analyse
from codemods.tf2.names import tf_alias

RULE = "distribute"
DESCRIPTION = "Run the TF2-tier train step under tf.distribute: shard, all-reduce once, clip once, apply."

STRATEGIES = {
    "mirrored": "tf.distribute.MirroredStrategy()",
    "multi_worker": "tf.distribute.MultiWorkerMirroredStrategy()",
}


def _tf(text: str, alias: str) -> str:
    return text if alias == "tf" else re.sub(r"\btf\.", alias + ".", text)


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
                  f"train step `{step.node.name.value}` distributed with {STRATEGIES[strategy].split('(')[0]}: "
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
    if step.kind == Reduction.MEAN:
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

"""The common path of every hooked optimizer update, eager, inside tf.function or built in a graph.

- Eager: the step is recorded (loss, pre- and post-clip norms) and the update runs.
- Inside tf.function: the numbers are computed in the traced step and handed to a
  `tf.py_function` callback that the update waits for, so each execution records one step.
- Graph construction (TF1): the update op is remembered with what its numbers need; the
  step is recorded when a `Session.run` executes it (hooks/graph.py). Nothing is built now:
  ops built here would shift the seeds of random ops the script creates after this line.
"""
from __future__ import annotations

import numpy as np

from tf1clip.parity.distribute import replica_id
from tf1clip.parity.quantities import global_norm, loss_tensor, loss_value, magnitudes


def on_update(rec, optimizer, kept, call_original, post_fn):
    """Common path of every hooked update: eager, tf.function or graph construction."""
    import tensorflow as tf

    variables = [v for _, v in kept]
    update = rec.update_for(optimizer, variables)
    if not update.variables:
        update.variables = variables
    grads = [g for g, _ in kept]
    target, raw = rec.find_raw(variables) if replica_id() is None else (None, None)
    if tf.executing_eagerly():
        rec.match_late(variables)
        rec.check_match(update, variables)
        rec.before_update(update)
        if rec.initial is None and (rec.side == "old" or not rec.transfer):
            rec.initial = rec.keyed([(update, [v.numpy() for v in variables])])
        post = post_fn(grads) if post_fn else grads
        pre_norm = global_norm(raw) if raw is not None else None
        loss = loss_value(target)
        rec.record_step(update, loss, pre_norm, global_norm(post), magnitudes(variables).numpy())
        return call_original()
    if tf.inside_function():
        rec.check_match(update, variables)
        post = post_fn(grads) if post_fn else grads
        replica = replica_id()
        if replica is not None:
            # An update made inside each replica (Keras' own aggregation): what the step
            # applies is the sum over replicas, so that is what is recorded, by replica 0.
            ctx = tf.distribute.get_replica_context()
            target, raw = rec.find_raw(variables, replica=replica)
            loss = ctx.all_reduce("sum", loss_tensor(target))
            raw = None if raw is None or any(g is None for g in raw) else ctx.all_reduce("sum", list(raw))
            post = ctx.all_reduce("sum", [g for g in post])
        else:
            loss = loss_tensor(target)
        pre_norm = global_norm(raw) if raw is not None else tf.constant(np.nan)
        post_norm = global_norm(post)
        post_norm = tf.constant(np.nan) if post_norm is None else post_norm
        if replica not in (None, 0):
            return call_original()

        scales = magnitudes(variables)

        def callback(loss_v, pre_v, post_v, scales_v):
            rec.before_update(update)
            if rec.initial is None and not rec.transfer:  # NEW's own start values, to compare
                rec.initial = rec.keyed([(update, [v.numpy() for v in update.variables])])
            rec.record_step(update, loss_v.numpy(), None if np.isnan(pre_v.numpy()) else pre_v.numpy(),
                            post_v.numpy(), scales_v.numpy())
            return np.int32(0)

        marker = tf.py_function(callback, [loss, pre_norm, post_norm, scales], Tout=tf.int32)
        with tf.control_dependencies([marker]):
            return call_original()
    # graph construction (TF1): remember the op; the step is recorded when a Session runs it.
    # The variables the optimizer makes now (slots, beta powers) are its own, not model state.
    before = {v.op.name for v in tf.compat.v1.global_variables()}
    result = call_original()
    rec.owned.update(v.op.name for v in tf.compat.v1.global_variables() if v.op.name not in before)
    op = result if isinstance(result, tf.Operation) else getattr(result, "op", None)
    if op is not None:
        # post_fn (an optimizer's own clip) is called at the first run, not now: ops built
        # now would shift the seeds of random ops the script creates after this line.
        rec.graph_updates[op.name] = (update, target, raw, grads, post_fn, op)
        rec.graph_extras.pop((update.index, op.name), None)  # built for an earlier graph's op of this name
        update.graph_ops.append(op.name)
        rec.graph_steps.register_update(op, update)
    return result

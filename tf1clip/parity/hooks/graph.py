"""TF1 graph mode: `tf.compat.v1.train.Optimizer.apply_gradients` builds an update op, and the
step happens when `Session.run` executes it (through its fetches' inputs or control
dependencies). The run that executes it also fetches the step's loss and norms; the first
such run captures (OLD) or loads (NEW) the start values, and the training session's last
values are the final weights (read at `close`, or at the end when the script leaves it open).
"""
from __future__ import annotations

import numpy as np

from tf1clip.parity.quantities import global_norm, loss_tensor
from tf1clip.parity.recorder import StopParity, var_key
from tf1clip.parity.updates import on_update
from tf1clip.steps import wrap


def install(rec) -> None:
    from tensorflow.python.client import session as session_lib
    from tensorflow.python.training import optimizer as v1_optimizer

    def make_v1_apply(original):
        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            pairs = [(g, v) for g, v in grads_and_vars]
            kept = [(g, v) for g, v in pairs if g is not None]
            return on_update(rec, self, kept, lambda: original(self, pairs, global_step, name), post_fn=None)
        return apply_gradients

    wrap(v1_optimizer.Optimizer, "apply_gradients", make_v1_apply)

    def make_run(original):
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            triggered = _triggered(rec, self, fetches) if rec.graph_updates else []
            if not triggered:
                return original(self, fetches, feed_dict, options, run_metadata)
            for update, *_ in triggered:
                if rec.max_steps is not None and len(update.steps) >= rec.max_steps:
                    rec.stopped = True
                    capture_final(rec, self, original)
                    raise StopParity()
            if rec.pending_loads:
                for update, *_ in triggered:
                    rec.check_match(update, update.variables)
                for var, value in rec.pending_loads:
                    var.load(value, self)
                rec.pending_loads = []
            if rec.initial is None and rec.side == "old":
                _capture_initial(rec, self, original)
            rec.train_session = self
            extras = [_graph_extras(rec, t[-1].name) for t in triggered]
            result, extra_values = original(self, (fetches, extras), feed_dict, options, run_metadata)
            for (update, *_), (loss, pre, post) in zip(triggered, extra_values):
                rec.record_step(update, loss, pre, post)
            rec.final = None
            return result
        return run

    wrap(session_lib.BaseSession, "run", make_run)

    def make_close(original):
        def close(self):
            if self is rec.train_session and rec.final is None:
                capture_final(rec, self, session_lib.BaseSession.run.__wrapped__)
            return original(self)
        return close

    wrap(session_lib.BaseSession, "close", make_close)


def _capture_initial(rec, session, raw_run):
    """OLD's start: every trainable variable's value before the first update, in creation
    order. Updated variables are keyed by optimizer (opt{i}/var{j}); the others (a frozen
    layer left out of var_list still shapes the loss) as trainable/var{k}."""
    import tensorflow as tf

    trainable = session.graph.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)
    keys = {}
    for update in rec.ordered():
        for j, var in enumerate(update.variables):
            keys.setdefault(id(var), var_key(update.index, j))
    everything = list(trainable) + [v for u in rec.ordered() for v in u.variables
                                    if id(v) not in {id(t) for t in trainable}]
    values = raw_run(session, everything)
    rec.initial, rec.ranks = {}, {}
    for rank, (var, value) in enumerate(zip(everything, values)):
        key = keys.get(id(var), f"trainable/var{rank}")
        if key not in rec.initial:
            rec.initial[key] = np.asarray(value)
            rec.ranks[key] = rank


def capture_final(rec, session, raw_run):
    """The updated variables' values now, read with the session's unhooked run."""
    if rec.final is not None:
        return
    try:
        values = raw_run(session, [[v for v in u.variables] for u in rec.ordered()])
        rec.final = rec.keyed(list(zip(rec.ordered(), values)))
    except Exception:  # noqa: BLE001 - a closed or broken session: no final weights
        pass


def _graph_extras(rec, op_name):
    """[loss, pre-norm, post-norm] tensors for one graph update op, built once, lazily."""
    import tensorflow as tf

    extras = rec.graph_extras.get(op_name)
    if extras is None:
        update, target, raw, grads, post_fn, op = rec.graph_updates[op_name]
        with op.graph.as_default(), tf.name_scope("tf1clip_parity"):
            post = post_fn(grads) if post_fn else grads
            nan = tf.constant(np.nan, tf.float64)
            loss = loss_tensor(target) if target is not None else nan
            pre = global_norm(raw) if raw is not None else None
            post_norm = global_norm(post)
            extras = [loss, nan if pre is None else pre, nan if post_norm is None else post_norm]
        rec.graph_extras[op_name] = extras
    return extras


def _triggered(rec, session, fetches):
    """The graph updates a Session.run of `fetches` executes (through inputs or control deps)."""
    import tensorflow as tf

    graph = session.graph
    try:
        flat = tf.nest.flatten(fetches)
    except Exception:  # noqa: BLE001
        return []
    ops = []
    for item in flat:
        try:
            element = graph.as_graph_element(item, allow_tensor=True, allow_operation=True)
        except Exception:  # noqa: BLE001 - not a graph element (e.g. a callable fetch)
            continue
        ops.append(element if isinstance(element, tf.Operation) else element.op)
    key = tuple(sorted(op.name for op in ops))
    cached = rec.trigger_cache.get((id(graph), key))
    if cached is None:
        targets = set(rec.graph_updates)
        found, seen, stack = [], set(), list(ops)
        while stack:
            op = stack.pop()
            if op.name in seen:
                continue
            seen.add(op.name)
            if op.name in targets:
                found.append(op.name)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
        cached = sorted(found, key=lambda name: rec.graph_updates[name][0].index)
        rec.trigger_cache[(id(graph), key)] = cached
    return [rec.graph_updates[name] for name in cached]

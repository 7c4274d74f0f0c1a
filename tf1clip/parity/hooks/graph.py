"""TF1 graph mode: `tf.compat.v1.train.Optimizer.apply_gradients` builds an update op, and the
step happens when `Session.run` executes it (through its fetches' inputs or control
dependencies; tf1clip/steps.py decides, as for `tf1clip run --steps`). In a graph with no
optimizer, a run that writes model variables is a step of those writes.

The run that makes a step also fetches its loss and norms. The first step captures (OLD) or
loads (NEW) the start values; the training session's last values are the final weights (read
at `close`, or at the end of the script when it leaves the session open).
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from tf1clip.parity.quantities import global_norm, loss_tensor, magnitudes
from tf1clip.parity.record_values import var_key
from tf1clip.parity.recorder import StopParity
from tf1clip.parity.updates import on_update
from tf1clip.steps import step_keys, wrap


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
    inside = threading.local()  # runs the recorder makes itself (loads, reads) are not steps

    def make_run(original):
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            if getattr(inside, "active", False):
                return original(self, fetches, feed_dict, options, run_metadata)
            keys, effect = step_keys(rec.graph_steps, self.graph, fetches)
            if not keys:
                result = original(self, fetches, feed_dict, options, run_metadata)
                rec.fetched.note(result, self.graph, fetches)
                return result
            inside.active = True
            try:
                result = _step(rec, self, original, keys, effect, fetches, feed_dict, options, run_metadata)
            finally:
                inside.active = False
            rec.fetched.note(result, self.graph, fetches)
            return result
        return run

    wrap(session_lib.BaseSession, "run", make_run)

    def make_make_callable(original):
        def make_callable(self, fetches, feed_list=None, accept_options=False):
            function = original(self, fetches, feed_list, accept_options)

            def call(*args, **kwargs):
                keys, _ = step_keys(rec.graph_steps, self.graph, fetches)
                if getattr(inside, "active", False):
                    return function(*args, **kwargs)
                if not keys:
                    result = function(*args, **kwargs)
                    rec.fetched.note(result, self.graph, fetches)
                    return result
                # a step: through run, which records it (same fetches, same feeds)
                return self.run(fetches, dict(zip(feed_list or (), args)), kwargs.get("options"),
                                kwargs.get("run_metadata"))
            return call
        return make_callable

    wrap(session_lib.BaseSession, "make_callable", make_make_callable)

    def make_close(original):
        def close(self):
            if self is rec.train_session and rec.final is None:
                capture_final(rec, self, session_lib.BaseSession.run.__wrapped__)
            return original(self)
        return close

    wrap(session_lib.BaseSession, "close", make_close)


def finish(rec) -> None:
    """At the end of the script: the final values of a training session left open."""
    from tensorflow.python.client import session as session_lib

    session = rec.train_session
    if rec.final is None and session is not None:  # a closed session raises: no final values
        capture_final(rec, session, session_lib.BaseSession.run.__wrapped__)


def _step(rec, session, raw_run, keys, effect, fetches, feed_dict, options, run_metadata):
    updates = _updates(rec, session.graph, keys, effect)
    for update in updates:
        if rec.max_steps is not None and len(update.steps) >= rec.max_steps:
            rec.stopped = True
            capture_final(rec, session, raw_run)
            raise StopParity()
    if not rec.started:
        _start(rec, session, raw_run)
    else:
        _start_late(rec, session, raw_run, [u for u in updates if not u.steps])
    for update in updates:
        rec.check_match(update, update.variables)
    _note_state(rec, session.graph, effect)
    rec.train_session = session
    extras = [_extras(rec, update, effect) for update in updates]
    result, extra_values = raw_run(session, (fetches, extras), feed_dict, options, run_metadata)
    for update, (loss, pre, post, scales) in zip(updates, extra_values):
        rec.record_step(update, loss, pre, None if update.writes else post, scales)
        if update.writes:
            rec.record_values(update, raw_run(session, update.variables))
    rec.final = None
    return result


def _updates(rec, graph, keys, effect):
    """The Updates a step runs: its optimizers', or the Update of the variables it writes."""
    if effect.updates:
        return list(effect.updates)
    by_name = _variables_by_op(graph)
    variables = [by_name[v.name] for v in effect.step_variables() if v.name in by_name]
    return [rec.update_for_writes(keys[0], variables)] if variables else []


def _variables_by_op(graph):
    import tensorflow as tf

    return {v.op.name: v for v in graph.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES)}


def _start(rec, session, raw_run):
    """The first step: OLD records every trainable variable's value before it, in creation
    order (a frozen layer left out of var_list still shapes the loss); NEW matches its
    variables to OLD's by the start-value rule and loads OLD's values (unless --no-transfer,
    when it records its own). Updated variables are keyed by update (opt{i}/var{j}), the
    others as trainable/var{k}."""
    import tensorflow as tf

    rec.started = True
    trainable = session.graph.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)
    seen = {id(t) for t in trainable}
    everything = list(trainable) + [v for u in rec.ordered() for v in u.variables if id(v) not in seen]
    rec.start_ids = {id(v) for v in everything}
    if rec.side == "new":
        loads = rec.match_graph(everything)
        for var, value in loads:
            var.load(value, session)
        if rec.transfer:
            return
    keys = {}
    for update in rec.ordered():
        for j, var in enumerate(update.variables):
            keys.setdefault(id(var), var_key(update.index, j))
    values = raw_run(session, everything)
    rec.initial, rec.ranks = {}, {}
    for rank, (var, value) in enumerate(zip(everything, values)):
        key = rec.key_of(var, keys.get(id(var), f"trainable/var{rank}"))
        if key not in rec.initial:
            rec.initial[key] = np.asarray(value)
            rec.ranks[key] = rank
            rec.draws.mine[key] = rec.draws.of_variable(var)


def _start_late(rec, session, raw_run, updates):
    """Updates whose first step comes after the run's first step (a later part of the script:
    another graph, a variable made since): their variables that did not exist at the start get
    their start values now, by the same rule as `_start`."""
    fresh = [(u, j, v) for u in updates for j, v in enumerate(u.variables) if id(v) not in rec.start_ids]
    if not fresh:
        return
    rec.start_ids.update(id(v) for _, _, v in fresh)
    variables = [v for _, _, v in fresh]
    if rec.side == "new":
        for var, value in rec.match_graph(variables):
            var.load(value, session)
        if rec.transfer:
            return
    rank = max(rec.ranks.values(), default=-1) + 1
    for offset, ((update, j, var), value) in enumerate(zip(fresh, raw_run(session, variables))):
        key = rec.key_of(var, var_key(update.index, j))
        if key not in rec.initial:
            rec.initial[key] = np.asarray(value)
            rec.ranks[key] = rank + offset
            rec.draws.mine[key] = rec.draws.of_variable(var)


def _note_state(rec, graph, effect):
    """Model state a step writes besides its update's variables (batch norm's moving
    statistics, ...); the optimizers' own variables are left out when the record is written."""
    if not effect.writes:
        return
    import tensorflow as tf

    ranks = {v.op.name: (i, v) for i, v in enumerate(graph.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES))}
    for op in effect.writes:
        known = rec.state.get(op.name)
        # a later graph's variable of the same name (an Estimator's next train() call) replaces it
        if op.name in ranks and (known is None or known[1].graph is not graph):
            rec.state[op.name] = ranks[op.name]


def capture_final(rec, session, raw_run):
    """The updated variables' and the written state's values now (the session's unhooked run).
    A variable-writes update's are those after its last step, which may have run in another
    session (a script's examples each open their own)."""
    if rec.final is not None:
        return
    fetched = [u for u in rec.ordered() if not u.writes]
    try:
        state = rec.state_variables()
        values = raw_run(session, [list(u.variables) for u in fetched] + [[v for _, v in state]])
    except Exception:  # noqa: BLE001 - a closed or broken session: no final weights
        return
    rec.final = rec.keyed(list(zip(fetched, values)))
    rec.final.update({key: np.asarray(value) for (key, _), value in zip(state, values[-1])})
    rec.final.update(rec.last_values())


def _extras(rec, update, effect):
    """[loss, pre-norm, post-norm, magnitudes] tensors for one update's step, built once, lazily
    (the magnitudes are read in the step's run, unordered with its update: either value is one
    the variable had)."""
    import tensorflow as tf

    name = "writes" if update.writes else next(n for n in update.graph_ops if n in effect.ops)
    extras = rec.graph_extras.get((update.index, name))
    if extras is not None:
        return extras
    if update.writes:
        target, raw = rec.find_raw(update.variables)
        if raw is not None and not all(g is None or g.op.name in effect.ops for g in raw):
            target, raw = None, None  # a gradient the writes do not use: not this step's
        grads, post_fn, graph = None, None, update.variables[0].graph
    else:
        _, target, raw, grads, post_fn, op = rec.graph_updates[name]
        graph = op.graph
    with _unfinalized(graph), graph.as_default(), tf.name_scope("tf1clip_parity"):
        nan = tf.constant(np.nan, tf.float64)
        loss = loss_tensor(target) if target is not None else nan
        pre = global_norm(raw) if raw is not None else None
        post_norm = None
        if grads is not None:
            post_norm = global_norm(post_fn(grads) if post_fn else grads)
        extras = [loss, nan if pre is None else pre, nan if post_norm is None else post_norm,
                  magnitudes(update.variables)]
    rec.graph_extras[(update.index, name)] = extras
    return extras


@contextlib.contextmanager
def _unfinalized(graph):
    """Room for the recording ops in a graph a MonitoredSession (Estimator) has finalized."""
    finalized = graph.finalized
    if finalized:
        graph._unsafe_unfinalize()  # noqa: SLF001 - TensorFlow's own way back; finalized again below
    try:
        yield
    finally:
        if finalized:
            graph.finalize()

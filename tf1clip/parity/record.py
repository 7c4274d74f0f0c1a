"""Record a training script's optimizer updates by hooks, without editing the script.

Run as `python -m tf1clip.parity.record --side old|new --out DIR [--steps N]
[--init FILE.npz] [--deterministic] SCRIPT [ARGS...]`. OLD runs under the TF 1.x face
(graph mode), NEW under plain TensorFlow 2. Writes DIR/record.json, DIR/initial.npz and
DIR/final.npz.

What is recorded, per optimizer (numbered in the order of their first update):
- one entry per update: the loss, the pre-clip and the post-clip global gradient norm;
- the variables the update touched (name, shape), their values before the first update and
  after the last.

Where the numbers come from:
- The update is `apply_gradients` of `tf.compat.v1.train.Optimizer` (and so of
  ClippedOptimizer, contrib's decorator, optimize_loss, slim's create_train_op), of tf-keras'
  optimizers, or `apply` of a Keras 3 optimizer (which `apply_gradients` and `fit` use).
- The loss is the target of the gradient computation that produced the update's raw
  gradients: `compute_gradients(loss)` / `minimize(loss)` / `tf.gradients(loss, ...)` /
  `tape.gradient(loss, ...)`. In graph mode it is fetched in the same `Session.run` as the
  train op, so it is the value the step was computed from.
- Pre-clip norm: global norm of those raw gradients for the update's variables. Post-clip:
  global norm of the gradients handed to the optimizer, after the optimizer's own
  clipvalue/clipnorm/global_clipnorm where it has them.
- In graph mode the recording ops are built at the first `Session.run` that runs an update,
  after the user's graph is built, so they do not shift the op-count-derived seeds of the
  user's random ops.

Same starting point (NEW only): the values of OLD's trainable variables before its first
update are loaded into NEW's variables as NEW creates them. Rule: OLD's trainable variables,
in creation order, are matched to NEW's trainable variables, in creation order, within each
shape (the k-th variable of shape S in NEW gets the k-th of shape S in OLD). At NEW's first update the
match is checked: each optimizer must update the same variables (as a set) as in OLD; if
not, the run stops with exit status 3 and both lists in the record.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import threading
import traceback

import numpy as np

EXIT_MISMATCH = 3
EXIT_CRASH = 4
EXIT_NO_STRATEGY = 5


class StopParity(BaseException):
    """Raised into the script when the requested number of steps is reached."""


class Update:
    """One optimizer as seen by the recorder."""

    def __init__(self, index, optimizer):
        self.index = index
        self.name = _optimizer_name(optimizer)
        self.cls = f"{type(optimizer).__module__}.{type(optimizer).__name__}"
        self.variables = []  # the variable objects of the first update, in update order
        self.steps = []


class Recorder:
    def __init__(self, side, out, steps=None, init_file=None):
        self.side = side
        self.out = out
        self.max_steps = steps
        self.optimizers = {}  # id(optimizer) -> Update
        self._continuing = {}  # id(optimizer in a later graph) -> the Update it continues
        self.grad_records = []  # (target, {id(var): raw grad}) most recent last
        self.stopped = False
        self.mismatch = None
        self.initial = None  # {key: array} before the first update (OLD side)
        self.ranks = {}  # key -> creation rank (OLD side)
        self.final = None
        self.graph_updates = {}  # op name -> (Update, loss, raw, post) in graph mode
        self._graph_extras = {}
        self._trigger_cache = {}
        self._train_session = None
        self._old_init = None
        self._creation = []  # NEW: trainable variables in creation order
        self._assigned = {}  # id(new var) -> old key
        self._pending_loads = []  # (graph variable, OLD value) for graph-mode NEW
        self._lock = threading.Lock()  # MirroredStrategy runs replicas in threads
        self.replicas_seen = 0  # largest strategy created in the run (NEW under --replicas)
        if init_file:
            with np.load(init_file, allow_pickle=False) as data:
                meta = json.loads(str(data["__meta__"]))
                meta.sort(key=lambda entry: entry.get("rank", 0))  # OLD's creation order
                self._old_init = [(entry["key"], tuple(entry["shape"]), data[entry["key"]]) for entry in meta]
            self._old_used = set()

    # ---- bookkeeping -------------------------------------------------------------------------
    def update_for(self, optimizer, variables=()):
        update = self.optimizers.get(id(optimizer)) or self._continuing.get(id(optimizer))
        if update is None and variables:
            update = self._continued(optimizer, variables)
        if update is None:
            update = Update(len(self.optimizers), optimizer)
            update._optimizer = optimizer  # keep it alive: ids must stay unique
            self.optimizers[id(optimizer)] = update
        return update

    def _continued(self, optimizer, variables):
        """The Update that a new graph's optimizer continues, or None.

        An Estimator builds a fresh graph on each train() call and restores the checkpoint the
        previous call saved: a new optimizer object over new variables of the same names and
        shapes, in a graph of its own, is the same training going on. Its steps extend that
        Update, and the final weights are read from the newest graph.
        """
        name = _optimizer_name(optimizer)
        graph = getattr(variables[0], "graph", None)
        signature = [(_var_name(v), _var_shape(v)) for v in variables]
        for update in self.optimizers.values():
            if update.name != name or not update.variables or graph is None:
                continue
            if getattr(update.variables[0], "graph", graph) is graph:
                continue
            if [(_var_name(v), _var_shape(v)) for v in update.variables] != signature:
                continue
            for old, new in zip(update.variables, variables):
                key = self._assigned.get(_var_identity(old))
                if key is not None:
                    self._assigned[_var_identity(new)] = key
            update.variables = list(variables)
            self._continuing[id(optimizer)] = update
            update._continued = getattr(update, "_continued", []) + [optimizer]  # ids must stay unique
            return update
        return None

    def note_gradients(self, target, sources, grads):
        if grads is None:
            return
        flat_sources = _flatten(sources)
        flat_grads = _flatten(grads)
        if len(flat_sources) != len(flat_grads):
            return
        raw = {id(v): g for v, g in zip(flat_sources, flat_grads)}
        # the sources are kept with the record so that their ids stay unique while it lives
        with self._lock:
            self.grad_records.append((target, raw, list(flat_sources), _replica_id()))
            del self.grad_records[:-64]

    def find_raw(self, variables, replica=None):
        """(loss target, raw grads) of the latest gradient computation over `variables`.

        Under a tf.distribute strategy each replica computed its own part: asked from
        cross-replica context (replica=None) the parts of all replicas are summed, which is
        the gradient of the global loss; asked from a replica, that replica's part.
        """
        with self._lock:
            records = list(self.grad_records)
        parts = {}
        for target, raw, _sources, rid in reversed(records):
            if not all(id(v) in raw for v in variables):
                continue
            if rid is None or (replica is not None and rid == replica):
                if not parts:
                    return target, [raw[id(v)] for v in variables]
                break
            if replica is None and rid not in parts:
                parts[rid] = (target, [raw[id(v)] for v in variables])
            elif replica is None:
                break
        if not parts:
            return None, None
        return _sum_parts([p for _, p in sorted(parts.items())])

    # ---- NEW: starting point ------------------------------------------------------------------
    def creator(self, next_creator, **kwargs):
        """variable_creator_scope hook (NEW): give each trainable variable OLD's start value."""
        import tensorflow as tf

        var = next_creator(**kwargs)
        if self._old_init is None or kwargs.get("trainable") is False:
            return var
        if "/replica_" in str(kwargs.get("name") or ""):
            return var  # MirroredStrategy's copies of replica 0's variable: they copy its value
        shape = _var_shape(var)
        for key, old_shape, value in self._old_init:
            if key not in self._old_used and old_shape == shape:
                self._old_used.add(key)
                self._assigned[id(var)] = key
                with tf.init_scope():
                    if tf.executing_eagerly():
                        var.assign(tf.cast(value, var.dtype))
                    else:  # graph-mode NEW: loaded right before its first update runs
                        self._pending_loads.append((var, value))
                break
        return var

    def check_match(self, update, variables):
        if self._old_init is None or update.steps:
            return
        meta = self._old_meta()
        expected = meta.get(update.index)
        got = [self._assigned.get(_var_identity(v)) for v in variables]
        if expected is None or None in got or sorted(got) != sorted(expected):
            self.mismatch = {
                "optimizer": update.index,
                "old": [self._old_describe(k) for k in (expected or [])],
                "new": [{"name": _var_name(v), "shape": list(_var_shape(v)),
                         "matched": self._assigned.get(_var_identity(v))} for v in variables],
            }
            raise StopParity()

    def _old_meta(self):
        """Optimizer index -> OLD keys of the variables it updated."""
        meta = {}
        for key, _, _ in self._old_init:
            if key.startswith("opt"):
                meta.setdefault(int(key.split("/")[0][3:]), []).append(key)
        return meta

    def _old_describe(self, key):
        for k, shape, _ in self._old_init:
            if k == key:
                return {"key": key, "shape": list(shape)}
        return {"key": key}

    # ---- stepping -----------------------------------------------------------------------------
    def before_update(self, update):
        if self.max_steps is not None and len(update.steps) >= self.max_steps:
            self.stopped = True
            raise StopParity()

    def record_step(self, update, loss, pre, post):
        update.steps.append({"step": len(update.steps) + 1, "loss": _num(loss), "grad_norm_pre": _num(pre),
                             "grad_norm_post": _num(post)})

    # ---- output -------------------------------------------------------------------------------
    def write(self, status, error=None):
        os.makedirs(self.out, exist_ok=True)
        record = {
            "side": self.side,
            "status": status,
            "error": error,
            "optimizers": [
                {"index": u.index, "name": u.name, "class": u.cls,
                 "variables": [{"name": _var_name(v), "shape": list(_var_shape(v)), "key": _key(u.index, j)}
                               for j, v in enumerate(u.variables)],
                 "steps": u.steps}
                for u in sorted(self.optimizers.values(), key=lambda u: u.index)
            ],
            "mismatch": self.mismatch,
        }
        if self.side == "new" and self._old_init is not None:
            for entry, u in zip(record["optimizers"], sorted(self.optimizers.values(), key=lambda u: u.index)):
                for var_entry, v in zip(entry["variables"], u.variables):
                    var_entry["key"] = self._assigned.get(_var_identity(v), var_entry["key"])
        with open(os.path.join(self.out, "record.json"), "w") as handle:
            json.dump(record, handle, indent=1, default=str)
        for label, arrays in (("initial", self.initial), ("final", self.final)):
            if arrays:
                _save_arrays(os.path.join(self.out, f"{label}.npz"), arrays, self.ranks)

    def keyed(self, values_per_update):
        """{key: array} from [(update, [arrays])], keys per the record (OLD keys on NEW)."""
        out = {}
        for update, values in values_per_update:
            for j, (var, value) in enumerate(zip(update.variables, values)):
                key = self._assigned.get(_var_identity(var), _key(update.index, j)) if self.side == "new" \
                    else _key(update.index, j)
                out[key] = np.asarray(value)
        return out


# ---- helpers ---------------------------------------------------------------------------------
def _key(opt_index, var_index):
    return f"opt{opt_index}/var{var_index}"


def _save_arrays(path, arrays, ranks):
    meta = [{"key": key, "shape": list(np.shape(value)), "rank": ranks.get(key, i)}
            for i, (key, value) in enumerate(arrays.items())]
    np.savez(path, __meta__=np.array(json.dumps(meta)), **arrays)


def _num(value):
    if value is None:
        return None
    value = float(np.asarray(value))
    return value if np.isfinite(value) else repr(value)


def _flatten(x):
    import tensorflow as tf

    return tf.nest.flatten(x, expand_composites=False)


def _optimizer_name(optimizer):
    if hasattr(optimizer, "get_name"):  # tf.compat.v1.train.Optimizer
        return str(optimizer.get_name())
    return str(getattr(optimizer, "name", type(optimizer).__name__))


def _var_identity(var):
    """id of the tf.Variable the creator saw behind `var`: Keras 3 variables wrap one
    (`_value`), tf.distribute variables hold one per replica (`_primary` is the first)."""
    inner = getattr(var, "_value", None)
    if inner is not None and not callable(inner):
        var = inner
    primary = getattr(var, "_primary", None)
    return id(primary if primary is not None else var)


def _var_name(var):
    return str(getattr(var, "path", None) or getattr(var, "name", "?"))


def _var_shape(var):
    shape = getattr(var, "shape", None)
    try:
        return tuple(int(d) for d in shape)
    except Exception:  # noqa: BLE001
        return ()


def _creation_shape(kwargs):
    shape = kwargs.get("shape")
    if shape is not None:
        try:
            return tuple(int(d) for d in shape)
        except Exception:  # noqa: BLE001
            pass
    initial = kwargs.get("initial_value")
    if callable(initial):
        return None
    try:
        return tuple(int(d) for d in np.shape(initial))
    except Exception:  # noqa: BLE001
        return None


def _as_initial(value, dtype):
    import tensorflow as tf

    if dtype is not None:
        return tf.constant(value, dtype=tf.as_dtype(dtype))
    return tf.constant(value)


def _global_norm_value(grads):
    import tensorflow as tf

    present = [g for g in grads if g is not None]
    if not present:
        return None
    return tf.linalg.global_norm(present)


# ---- hooks -----------------------------------------------------------------------------------
def _wrap(owner, attr, make):
    original = getattr(owner, attr)
    if getattr(original, "_tf1clip_hook", False):
        return
    wrapper = make(original)
    wrapper._tf1clip_hook = True
    wrapper.__wrapped__ = original
    setattr(owner, attr, wrapper)


def install_hooks(rec: Recorder):
    import tensorflow as tf
    from tensorflow.python.client import session as session_lib
    from tensorflow.python.ops import gradients_impl
    from tensorflow.python.training import optimizer as v1_optimizer

    # gradient sources ---------------------------------------------------------------------
    def make_compute(original):
        def compute_gradients(self, loss, var_list=None, *args, **kwargs):
            result = original(self, loss, var_list, *args, **kwargs)
            try:
                pairs = list(result)
                rec.note_gradients(loss, [v for _, v in pairs], [g for g, _ in pairs])
            except Exception:  # noqa: BLE001 - recording must never break the script
                pass
            return result
        return compute_gradients

    _wrap(v1_optimizer.Optimizer, "compute_gradients", make_compute)

    def make_gradients(original):
        def gradients(ys, xs, *args, **kwargs):
            result = original(ys, xs, *args, **kwargs)
            rec.note_gradients(ys, xs, result)
            return result
        return gradients

    # tf-keras' get_updates reaches tf.gradients through tf.compat.v2.compat.v1
    for module in (gradients_impl, tf.compat.v1, tf.compat.v2.compat.v1):
        _wrap(module, "gradients", make_gradients)

    def make_tape_gradient(original):
        def gradient(self, target, sources, *args, **kwargs):
            result = original(self, target, sources, *args, **kwargs)
            rec.note_gradients(target, sources, result)
            return result
        return gradient

    _wrap(tf.GradientTape, "gradient", make_tape_gradient)

    # updates -------------------------------------------------------------------------------
    def make_v1_apply(original):
        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            pairs = [(g, v) for g, v in grads_and_vars]
            kept = [(g, v) for g, v in pairs if g is not None]
            return _on_update(rec, self, kept, lambda: original(self, pairs, global_step, name), post_fn=None)
        return apply_gradients

    _wrap(v1_optimizer.Optimizer, "apply_gradients", make_v1_apply)

    try:
        from keras.src.optimizers import base_optimizer

        def make_keras3_apply(original):
            def apply(self, grads, trainable_variables=None):
                if trainable_variables is None:
                    return original(self, grads, trainable_variables)
                grads = list(grads)
                variables = list(trainable_variables)
                if not self.built:
                    # build (creating slots) as apply would, but outside the control dependency
                    # on the recording callback: variables made under it cannot be lifted out
                    # of a tf.function
                    from keras.src import backend as keras_backend

                    with keras_backend.name_scope(self.name, caller=self):
                        self.build(variables)
                    self.built = True
                kept = [(g, v) for g, v in zip(grads, variables) if g is not None]
                return _on_update(rec, self, kept, lambda: original(self, grads, variables),
                                  post_fn=lambda gs: self._clip_gradients(gs))
            return apply

        _wrap(base_optimizer.BaseOptimizer, "apply", make_keras3_apply)
    except ImportError:
        pass

    if os.environ.get("TF_USE_LEGACY_KERAS") in ("1", "true", "True"):
        try:
            from tf_keras.src.optimizers.legacy import optimizer_v2

            def make_v2_apply(original):
                def apply_gradients(self, grads_and_vars, *args, **kwargs):
                    pairs = list(grads_and_vars)
                    kept = [(g, v) for g, v in pairs if g is not None]

                    def post(gs):
                        return [g for g, _ in self._transform_gradients(list(zip(gs, [v for _, v in kept])))]

                    return _on_update(rec, self, kept, lambda: original(self, pairs, *args, **kwargs), post_fn=post)
                return apply_gradients

            _wrap(optimizer_v2.OptimizerV2, "apply_gradients", make_v2_apply)
        except ImportError:
            pass

    # graph mode: the update happens when Session.run runs the op ---------------------------
    def make_run(original):
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            triggered = _triggered(rec, self, fetches) if rec.graph_updates else []
            if not triggered:
                return original(self, fetches, feed_dict, options, run_metadata)
            for update, *_ in triggered:
                if rec.max_steps is not None and len(update.steps) >= rec.max_steps:
                    rec.stopped = True
                    _capture_final_graph(rec, self, original)
                    raise StopParity()
            if rec._pending_loads:
                for update, *_ in triggered:
                    rec.check_match(update, update.variables)
                for var, value in rec._pending_loads:
                    var.load(value, self)
                rec._pending_loads = []
            if rec.initial is None and rec.side == "old":
                _capture_initial_graph(rec, self, original)
            rec._train_session = self
            extras = [_graph_extras(rec, t[-1].name) for t in triggered]
            result, extra_values = original(self, (fetches, extras), feed_dict, options, run_metadata)
            for (update, *_), (loss, pre, post) in zip(triggered, extra_values):
                rec.record_step(update, loss, pre, post)
            rec.final = None
            return result
        return run

    _wrap(session_lib.BaseSession, "run", make_run)

    def make_close(original):
        def close(self):
            if self is rec._train_session and rec.final is None:
                _capture_final_graph(rec, self, session_lib.BaseSession.run.__wrapped__)
            return original(self)
        return close

    _wrap(session_lib.BaseSession, "close", make_close)


def _ordered(rec):
    return sorted(rec.optimizers.values(), key=lambda u: u.index)


def _capture_initial_graph(rec, session, raw_run):
    """OLD's start: every trainable variable's value before the first update, in creation
    order. Updated variables are keyed by optimizer (opt{i}/var{j}); the others (a frozen
    layer left out of var_list still shapes the loss) as trainable/var{k}."""
    import tensorflow as tf

    trainable = session.graph.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)
    keys = {}
    for update in _ordered(rec):
        for j, var in enumerate(update.variables):
            keys.setdefault(id(var), _key(update.index, j))
    everything = list(trainable) + [v for u in _ordered(rec) for v in u.variables
                                    if id(v) not in {id(t) for t in trainable}]
    values = raw_run(session, everything)
    rec.initial, rec.ranks = {}, {}
    for rank, (var, value) in enumerate(zip(everything, values)):
        key = keys.get(id(var), f"trainable/var{rank}")
        if key not in rec.initial:
            rec.initial[key] = np.asarray(value)
            rec.ranks[key] = rank


def _capture_final_graph(rec, session, raw_run):
    if rec.final is not None:
        return
    try:
        values = raw_run(session, [[v for v in u.variables] for u in _ordered(rec)])
        rec.final = rec.keyed(list(zip(_ordered(rec), values)))
    except Exception:  # noqa: BLE001 - a closed or broken session: no final weights
        pass


def _on_update(rec, optimizer, kept, call_original, post_fn):
    """Common path of every hooked update: eager, tf.function or graph construction."""
    import tensorflow as tf

    variables = [v for _, v in kept]
    update = rec.update_for(optimizer, variables)
    if not update.variables:
        update.variables = variables
    grads = [g for g, _ in kept]
    target, raw = rec.find_raw(variables) if _replica_id() is None else (None, None)
    if tf.executing_eagerly():
        rec.check_match(update, variables)
        rec.before_update(update)
        if rec.initial is None and rec.side == "old":
            rec.initial = rec.keyed([(update, [v.numpy() for v in variables])])
        post = post_fn(grads) if post_fn else grads
        pre_norm = _global_norm_value(raw) if raw is not None else None
        loss = _loss_value(target)
        rec.record_step(update, loss, pre_norm, _global_norm_value(post))
        return call_original()
    if tf.inside_function():
        rec.check_match(update, variables)
        post = post_fn(grads) if post_fn else grads
        replica = _replica_id()
        if replica is not None:
            # An update made inside each replica (Keras' own aggregation): what the step
            # applies is the sum over replicas, so that is what is recorded, by replica 0.
            ctx = tf.distribute.get_replica_context()
            target, raw = rec.find_raw(variables, replica=replica)
            loss = ctx.all_reduce("sum", _loss_tensor(target))
            raw = None if raw is None or any(g is None for g in raw) else ctx.all_reduce("sum", list(raw))
            post = ctx.all_reduce("sum", [g for g in post])
        else:
            loss = _loss_tensor(target)
        pre_norm = _global_norm_value(raw) if raw is not None else tf.constant(np.nan)
        post_norm = _global_norm_value(post)
        post_norm = tf.constant(np.nan) if post_norm is None else post_norm
        if replica not in (None, 0):
            return call_original()

        def callback(loss_v, pre_v, post_v):
            rec.before_update(update)
            rec.record_step(update, loss_v.numpy(), None if np.isnan(pre_v.numpy()) else pre_v.numpy(),
                            post_v.numpy())
            return np.int32(0)

        marker = tf.py_function(callback, [loss, pre_norm, post_norm], Tout=tf.int32)
        with tf.control_dependencies([marker]):
            return call_original()
    # graph construction (TF1): remember the op; the step is recorded when a Session runs it
    result = call_original()
    op = result if isinstance(result, tf.Operation) else getattr(result, "op", None)
    if op is not None:
        # post_fn (an optimizer's own clip) is called at the first run, not now: ops built
        # now would shift the seeds of random ops the script creates after this line.
        rec.graph_updates[op.name] = (update, target, raw, grads, post_fn, op)
        rec._graph_extras.pop(op.name, None)  # built for an earlier graph's op of this name
    return result


def _replica_id():
    """Static replica id inside a multi-replica strategy's replica context, else None."""
    import tensorflow as tf

    ctx = tf.distribute.get_replica_context()
    if ctx is None or ctx.num_replicas_in_sync <= 1:
        return None
    value = tf.get_static_value(ctx.replica_id_in_sync_group)
    return None if value is None else int(value)


def _sum_parts(parts):
    """Sum per-replica (target, grads) parts: the global loss and the global gradient."""
    import tensorflow as tf

    targets = [t for t, _ in parts if t is not None]
    target = None
    if targets:
        target = tf.add_n([tf.reduce_sum(tf.cast(t, tf.float64)) for t in targets])
    grads = []
    for per_var in zip(*[g for _, g in parts]):
        present = [g for g in per_var if g is not None]
        if not present:
            grads.append(None)
        elif any(isinstance(g, tf.IndexedSlices) for g in present):
            grads.append(tf.IndexedSlices(tf.concat([tf.convert_to_tensor(g.values) for g in present], 0),
                                          tf.concat([g.indices for g in present], 0), present[0].dense_shape))
        else:
            grads.append(tf.add_n(present))
    return target, grads


def _loss_value(target):
    if target is None:
        return None
    import tensorflow as tf

    flat = [t for t in _flatten(target) if t is not None]
    if not flat:
        return None
    return float(sum(float(tf.reduce_sum(t)) for t in flat))


def _loss_tensor(target):
    import tensorflow as tf

    if target is None:
        return tf.constant(np.nan)
    flat = [tf.reduce_sum(tf.cast(t, tf.float64)) for t in _flatten(target) if t is not None]
    return tf.add_n(flat) if flat else tf.constant(np.nan, tf.float64)


def _graph_extras(rec, op_name):
    """[loss, pre-norm, post-norm] tensors for one graph update op, built once, lazily."""
    import tensorflow as tf

    extras = rec._graph_extras.get(op_name)
    if extras is None:
        update, target, raw, grads, post_fn, op = rec.graph_updates[op_name]
        with _unfinalized(op.graph), op.graph.as_default(), tf.name_scope("tf1clip_parity"):
            post = post_fn(grads) if post_fn else grads
            nan = tf.constant(np.nan, tf.float64)
            loss = _loss_tensor(target) if target is not None else nan
            pre = _global_norm_value(raw) if raw is not None else None
            post_norm = _global_norm_value(post)
            extras = [loss, nan if pre is None else pre, nan if post_norm is None else post_norm]
        rec._graph_extras[op_name] = extras
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


def _triggered(rec, session, fetches):
    """The graph updates a Session.run of `fetches` executes (through inputs or control deps)."""
    import tensorflow as tf

    graph = session.graph
    ops = []
    flat = _fetch_leaves(fetches)
    for item in flat:
        try:
            element = graph.as_graph_element(item, allow_tensor=True, allow_operation=True)
        except Exception:  # noqa: BLE001 - not a graph element (e.g. a callable fetch)
            continue
        ops.append(element if isinstance(element, tf.Operation) else element.op)
    key = tuple(sorted(op.name for op in ops))
    cached = rec._trigger_cache.get((id(graph), key))
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
        rec._trigger_cache[(id(graph), key)] = cached
    return [rec.graph_updates[name] for name in cached]


def _fetch_leaves(fetches):
    """The leaves of a Session.run fetch structure. Not tf.nest: MonitoredSession fetches a dict
    keyed by its hooks next to 'caller', which tf.nest cannot sort."""
    if isinstance(fetches, dict):
        return [leaf for value in fetches.values() for leaf in _fetch_leaves(value)]
    if isinstance(fetches, (list, tuple)):
        return [leaf for value in fetches for leaf in _fetch_leaves(value)]
    return [fetches]


# ---- entry point -----------------------------------------------------------------------------
def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tf1clip.parity.record")
    parser.add_argument("--side", choices=("old", "new"), required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--init")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deterministic", action="store_true")
    parser.add_argument("--replicas", type=int, help="NEW: N logical CPU devices, the default of MirroredStrategy()")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)

    from tf1clip._source import check_source, decode_source

    with open(opts.script, "rb") as handle:
        data = handle.read()
    problem = check_source(opts.script, data)
    if problem is not None:
        print(problem.one_line(), file=sys.stderr)
        return 2
    text, _ = decode_source(data)

    if opts.side == "old":
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    random.seed(opts.seed)
    np.random.seed(opts.seed)
    import tensorflow as tf

    if opts.deterministic:
        tf.config.experimental.enable_op_determinism()
    if opts.replicas:
        _provide_replicas(opts.replicas)
    rec = Recorder(opts.side, opts.out, steps=opts.steps, init_file=opts.init)
    install_hooks(rec)
    status, error, code = "completed", None, 0
    try:
        if opts.side == "old":
            import tf1clip.v1  # noqa: F401 - graph mode, as the script expects
            tf.compat.v1.set_random_seed(opts.seed)
            from tf1clip import runner

            code = runner.run_script(opts.script, text, opts.args, passthrough=(BaseException,))
        else:
            from tf1clip import runner

            tf.random.set_seed(opts.seed)
            with tf.variable_creator_scope(rec.creator):
                code = runner.execute_main(opts.script, text, opts.args, passthrough=(BaseException,))
    except StopParity:
        status = "stopped"
    except BaseException as exc:  # noqa: BLE001
        # a stop raised inside a tf.function callback arrives wrapped in a TF error
        if rec.stopped or rec.mismatch or "StopParity" in str(exc):
            status = "stopped"
        else:
            from tf1clip.runner import _print_user_traceback

            status, error, code = "crashed", "".join(traceback.format_exception_only(type(exc), exc)).strip(), 1
            _print_user_traceback(exc)
    if rec.mismatch:
        status = "mismatch"
    if opts.replicas and status in ("completed", "stopped") and _STRATEGY_REPLICAS[0] != opts.replicas:
        status, error = "no-strategy", (
            f"--replicas {opts.replicas}: the script created no tf.distribute.MirroredStrategy over "
            f"{opts.replicas} replicas (largest seen: {_STRATEGY_REPLICAS[0]}); a distributed NEW builds its "
            "step under strategy.scope() (e.g. tf1clip migrate --to tf2 --strategy mirrored)")
    if isinstance(code, int) and code != 0 and status == "completed":
        status, error = "crashed", f"script exited with status {code}"
    if rec.final is None:
        rec.final = _final_eager(rec)
    rec.write(status, error)
    if status == "mismatch":
        return EXIT_MISMATCH
    if status == "crashed":
        return EXIT_CRASH
    if status == "no-strategy":
        return EXIT_NO_STRATEGY
    return 0


_STRATEGY_REPLICAS = [0]


def _provide_replicas(n):
    """Split the CPU into n logical devices and make MirroredStrategy() use them by default."""
    import tensorflow as tf
    from tensorflow.python.distribute import mirrored_strategy

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n)])
    devices = [d.name for d in tf.config.list_logical_devices("CPU")]

    def make_init(original):
        def __init__(self, devices_arg=None, cross_device_ops=None):
            original(self, devices_arg if devices_arg is not None else devices, cross_device_ops)
            _STRATEGY_REPLICAS[0] = max(_STRATEGY_REPLICAS[0], self.num_replicas_in_sync)
        return __init__

    _wrap(mirrored_strategy.MirroredStrategy, "__init__", make_init)


def _final_eager(rec):
    try:
        return rec.keyed([(u, [np.asarray(v.numpy()) for v in u.variables]) for u in _ordered(rec)])
    except Exception:  # noqa: BLE001 - graph variables whose session is gone
        return None


if __name__ == "__main__":
    sys.exit(main())

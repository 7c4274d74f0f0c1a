"""Training steps of a TF 1.x graph script, seen from outside it, and stopping after N of them.

Used by `tf1clip run --steps N` and by the parity recorder (`tf1clip parity --steps N`), so
that both agree on what a step is.

A step is a `Session.run` (also through `MonitoredTrainingSession`, hooks and `make_callable`:
they all end in `BaseSession`) that changes the model:
- a run that executes an optimizer's update op (`apply_gradients` of a `tf.compat.v1.train`
  optimizer, and so `minimize`, contrib's clip decorator, `optimize_loss`, slim's train op; or
  of a tf-keras optimizer) is one update of that optimizer. Several optimizers (GANs) are
  counted separately, each by its own updates;
- in a graph where no optimizer update was built, a run that writes a floating-point global
  variable (gradient descent written by hand: `Assign*`, `Scatter*`, `Apply*` ops, found
  through data inputs and control dependencies) is one step of the writes to that set of
  variables.
Not steps: initializers (`global_variables_initializer`, `Variable.load`), a Saver's restore,
writes to local (metric, epoch-counter) variables and to integer counters such as the global
step. What a fetch set executes is worked out once per distinct fetch set and graph (the
fetched ops' ancestors through data and control inputs); nothing is added to the graph, so the
op-count-derived seeds of the script's random ops are unchanged.
"""
from __future__ import annotations

import threading
import weakref

# Op types that write the variable given as their first input (a ref or a resource handle).
_WRITE_PREFIXES = ("Assign", "Scatter", "ResourceScatter", "Apply", "ResourceApply", "SparseApply",
                   "ResourceSparseApply", "ResourceStridedSliceAssign", "StridedSliceAssign")
_NOT_WRITES = frozenset({"AssignVariableXlaConcatND"})
_VARIABLE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp", "TemporaryVariable"})
_PASS_THROUGH = frozenset({"Identity", "RefIdentity", "Enter", "RefEnter", "Switch", "RefSwitch", "Merge",
                           "RefMerge", "ReadVariableOp", "IdentityN"})
_RESTORE_OPS = frozenset({"RestoreV2", "Restore", "RestoreSlice"})


class StepsReached(BaseException):
    """Raised into the script right before the update that would go past the step limit.

    A BaseException, so that a script's `except Exception:` does not swallow it.
    """

    def __init__(self, limit: int):
        super().__init__(f"stopped after {limit} updates")
        self.limit = limit


def is_write(op) -> bool:
    """Does `op` write the variable given as its first input?"""
    kind = op.type
    return kind.startswith(_WRITE_PREFIXES) and kind not in _NOT_WRITES and bool(op.inputs)


def written_variable(op):
    """The variable op (VariableV2 / VarHandleOp) a write op writes, or None."""
    return _source(op.inputs[0].op)


def _source(op, depth=8):
    while depth and op.type not in _VARIABLE_OPS:
        if op.type not in _PASS_THROUGH or not op.inputs:
            return None
        op = op.inputs[0].op
        depth -= 1
    return op if op.type in _VARIABLE_OPS else None


def _restored(op) -> bool:
    """Is `op` a write whose value comes from a Saver's restore op?"""
    if len(op.inputs) < 2:
        return False
    value = op.inputs[1].op
    for _ in range(4):
        if value.type in _RESTORE_OPS:
            return True
        if value.type not in _PASS_THROUGH or not value.inputs:
            return False
        value = value.inputs[0].op
    return False


def fetched_ops(graph, fetches):
    """The graph operations a `Session.run(fetches)` asks for (tensors give their ops)."""
    import tensorflow as tf

    ops = []
    for item in _flat_fetches(fetches):
        try:
            element = graph.as_graph_element(item, allow_tensor=True, allow_operation=True)
        except Exception:  # noqa: BLE001 - not a graph element (None, a callable, a feed-only name)
            continue
        ops.append(element if isinstance(element, tf.Operation) else element.op)
    return ops


def _flat_fetches(fetches):
    """The leaves of a fetch structure, as Session.run walks it: lists, tuples (named too),
    dicts (values; MonitoredSession's keys mix strings and hook objects), attrs classes."""
    stack, out = [fetches], []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif hasattr(type(item), "__attrs_attrs__"):
            stack.extend(getattr(item, a.name) for a in type(item).__attrs_attrs__)
        else:
            out.append(item)
    return out


class RunEffect:
    """What one fetch set executes: optimizer updates, model writes, every op (by name)."""

    __slots__ = ("updates", "writes", "all_writes", "ops")

    def __init__(self, updates, writes, all_writes, ops):
        self.updates = updates  # owners of the registered update ops it runs, in registration order
        self.writes = writes  # variable ops it writes (model state: float, global, not init/restore),
        # in creation order
        self.all_writes = all_writes  # every model variable it writes, integer and boolean ones
        # too (not the global step), in creation order
        self.ops = ops  # frozenset of the names of every op it runs

    def step_variables(self) -> list:
        """What a run in a graph with no optimizer update is a step of: the float model variables
        it writes, or, when it writes none, its integer and boolean ones (`my_var.assign(2 *
        my_var)` in a script of integer variables). Beside floats an integer is a counter (an
        optimizer's iteration count), not what the step computes."""
        return self.writes or self.all_writes


class GraphSteps:
    """Which ops are optimizer updates, and what each distinct fetch set executes (cached)."""

    def __init__(self):
        self._updates = weakref.WeakKeyDictionary()  # graph -> {op name: owner}
        self._effects = weakref.WeakKeyDictionary()  # graph -> {fetch key: RunEffect}
        self._lock = threading.Lock()

    def register_update(self, op, owner):
        """Remember `op` (built by an optimizer's apply_gradients) as an update by `owner`."""
        with self._lock:
            self._updates.setdefault(op.graph, {})[op.name] = owner
            self._effects.pop(op.graph, None)  # cached effects may now run an update

    def has_updates(self, graph) -> bool:
        return bool(self._updates.get(graph))

    def effect(self, graph, fetches) -> RunEffect:
        ops = fetched_ops(graph, fetches)
        key = tuple(sorted(op.name for op in ops))
        with self._lock:
            cache = self._effects.setdefault(graph, {})
            found = cache.get(key)
        if found is None:
            found = self._analyse(graph, ops)
            with self._lock:
                self._effects.setdefault(graph, {})[key] = found
        return found

    def _analyse(self, graph, ops) -> RunEffect:
        with self._lock:
            updates = dict(self._updates.get(graph, {}))
        seen, stack, writes = set(), list(ops), []
        while stack:
            op = stack.pop()
            if op.name in seen:
                continue
            seen.add(op.name)
            if is_write(op):
                writes.append(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
        order = {name: i for i, name in enumerate(updates)}
        owners = []
        for name in sorted((n for n in seen if n in updates), key=order.get):
            if not any(updates[name] is o for o in owners):
                owners.append(updates[name])
        written = self._model_writes(graph, writes)
        floats = [v for v, dtype in written if dtype.is_floating]
        return RunEffect(owners, floats, [v for v, _ in written], frozenset(seen))

    @staticmethod
    def _model_writes(graph, writes):
        """[(variable op, dtype)] of the model variables `writes` write, in creation order."""
        if not writes:
            return []
        import tensorflow as tf

        keys = tf.compat.v1.GraphKeys
        initializers, local = set(), {v.op.name for v in graph.get_collection(keys.GLOBAL_STEP)}
        rank = {v.op.name: i for i, v in enumerate(graph.get_collection(keys.GLOBAL_VARIABLES))}
        for collection in (keys.GLOBAL_VARIABLES, keys.LOCAL_VARIABLES, keys.MODEL_VARIABLES,
                           keys.TRAINABLE_VARIABLES, keys.METRIC_VARIABLES):
            for var in graph.get_collection(collection):
                initializer = getattr(var, "initializer", None)
                if initializer is not None:
                    initializers.add(initializer.name)
                if collection in (keys.LOCAL_VARIABLES, keys.METRIC_VARIABLES):
                    local.add(var.op.name)
        out, names = [], set()
        for op in writes:
            if op.name in initializers or _restored(op):
                continue
            variable = written_variable(op)
            if variable is None or variable.name in local or variable.name in names:
                continue
            dtype = _dtype(variable)
            if dtype is not None:
                out.append((variable, dtype))
                names.add(variable.name)
        return sorted(out, key=lambda pair: rank.get(pair[0].name, len(rank)))  # creation order


def _dtype(variable):
    """A variable op's numeric dtype (float, integer or boolean), or None."""
    import tensorflow as tf

    try:
        dtype = tf.as_dtype(variable.get_attr("dtype")).base_dtype
    except Exception:  # noqa: BLE001
        return None
    return dtype if dtype.is_floating or dtype.is_integer or dtype.is_bool else None


def step_keys(steps: GraphSteps, graph, fetches):
    """What a run of `fetches` counts as: the optimizers it updates, or else (no optimizer
    update built in this graph) the set of model variables it writes, or nothing."""
    effect = steps.effect(graph, fetches)
    if effect.updates:
        return [("update", id(owner)) for owner in effect.updates], effect
    written = effect.step_variables()
    if written and not steps.has_updates(graph):
        return [("writes", graph_key(graph), tuple(v.name for v in written))], effect
    return [], effect


def graph_key(graph) -> int:
    return id(graph)


class StepLimit:
    """Counts steps per key; `check` raises StepsReached before a key's step `limit + 1`."""

    def __init__(self, limit: int):
        self.limit = limit
        self.counts = {}
        self._lock = threading.Lock()

    def check(self, keys):
        with self._lock:
            if any(self.counts.get(key, 0) >= self.limit for key in keys):
                raise StepsReached(self.limit)

    def count(self, keys):
        with self._lock:
            for key in keys:
                self.counts[key] = self.counts.get(key, 0) + 1


def wrap(owner, attr, make):
    """Replace owner.attr by make(original), once (a second install is a no-op)."""
    original = getattr(owner, attr)
    if getattr(original, "_tf1clip_hook", False):
        return
    wrapper = make(original)
    wrapper._tf1clip_hook = True
    wrapper.__wrapped__ = original
    setattr(owner, attr, wrapper)


def install_step_limit(limit: int) -> StepLimit:
    """Hooks for `tf1clip run --steps N`: stop the script before its update N + 1.

    Optimizer updates are registered when `apply_gradients` builds them (graph mode) or
    counted when it runs (eager); `Session.run` and `make_callable` count the steps of what
    they execute. Installing adds no graph ops.
    """
    import tensorflow as tf
    from tensorflow.python.client import session as session_lib
    from tensorflow.python.training import optimizer as v1_optimizer

    steps, limiter = GraphSteps(), StepLimit(limit)
    inside = threading.local()  # make_callable's generic path calls run: count once

    def make_apply(original):
        def apply_gradients(self, *args, **kwargs):
            if tf.executing_eagerly():
                key = [("update", id(self))]
                limiter.check(key)
                result = original(self, *args, **kwargs)
                limiter.count(key)
                return result
            result = original(self, *args, **kwargs)
            op = result if isinstance(result, tf.Operation) else getattr(result, "op", None)
            if op is not None:
                steps.register_update(op, self)
            return result
        return apply_gradients

    wrap(v1_optimizer.Optimizer, "apply_gradients", make_apply)
    legacy_keras_optimizer = _tf_keras_optimizer_v2()
    if legacy_keras_optimizer is not None:
        wrap(legacy_keras_optimizer, "apply_gradients", make_apply)

    def counted(session, fetches, call):
        if getattr(inside, "active", False):
            return call()
        keys, _ = step_keys(steps, session.graph, fetches)
        if keys:
            limiter.check(keys)
        inside.active = True
        try:
            result = call()
        finally:
            inside.active = False
        if keys:
            limiter.count(keys)
        return result

    def make_run(original):
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            return counted(self, fetches, lambda: original(self, fetches, feed_dict, options, run_metadata))
        return run

    def make_make_callable(original):
        def make_callable(self, fetches, feed_list=None, accept_options=False):
            function = original(self, fetches, feed_list, accept_options)

            def call(*args, **kwargs):
                return counted(self, fetches, lambda: function(*args, **kwargs))
            return call
        return make_callable

    wrap(session_lib.BaseSession, "run", make_run)
    wrap(session_lib.BaseSession, "make_callable", make_make_callable)
    return limiter


def _tf_keras_optimizer_v2():
    """tf-keras' OptimizerV2 class (what tf.keras optimizers are under the TF 1.x face), if loaded
    by the legacy-Keras switch; None otherwise."""
    import os

    if os.environ.get("TF_USE_LEGACY_KERAS") not in ("1", "true", "True"):
        return None
    try:
        from tf_keras.src.optimizers.legacy import optimizer_v2
    except ImportError:
        return None
    return optimizer_v2.OptimizerV2

"""The recorder's bookkeeping: optimizers seen, gradient computations, steps, start values, output.

What is recorded, per optimizer (numbered in the order of their first update):
- one entry per update: the loss, the pre-clip and the post-clip global gradient norm;
- the variables the update touched (name, shape), their values before the first update and
  after the last.
A graph script with no optimizer is recorded the same way, with each set of variables that
Session.runs write (tf1clip/steps.py) in place of an optimizer, and their values after every
step. Other model state the training runs write (batch norm's moving statistics, an
exponential moving average: float variables written by the steps that are neither an
optimizer's variables nor its slots) is recorded by its final values, as `state`.

Same starting point (NEW only): the values of OLD's trainable variables before its first
update are loaded into NEW's variables as NEW creates them. Rule: OLD's trainable variables,
in creation order, are matched to NEW's trainable variables, in creation order, within each
shape (the k-th variable of shape S in NEW gets the k-th of shape S in OLD). At NEW's first
update the match is checked: each optimizer must update the same variables (as a set) as in
OLD; if not, the run stops and both lists go into the record. Under --no-transfer only the
variables drawn from the same initializer as OLD's get OLD's values (initializers.py).
"""
from __future__ import annotations

import itertools
import json
import os
import threading

import numpy as np

from tf1clip.parity import initializers, membership, start_values
from tf1clip.parity.fetched import Fetched
from tf1clip.parity.record_values import (flatten, number, optimizer_name, save_arrays, var_identity, var_key, var_name,
                                          var_shape)
from tf1clip.parity.distribute import replica_id, sum_parts
from tf1clip.steps import GraphSteps


class StopParity(BaseException):
    """Raised into the script when the requested number of steps is reached."""


class VariableWrites:
    """Stands for the optimizer of a graph script that has none: the Session.runs that write
    one set of model variables (tf1clip/steps.py says which runs those are)."""

    name = "variable writes (no optimizer)"

    def __init__(self, names):
        self.names = names


class Update:
    """One optimizer (or one set of variable writes) as seen by the recorder."""

    def __init__(self, index, optimizer):
        self.index = index
        self.name = optimizer_name(optimizer)
        self.cls = f"{type(optimizer).__module__}.{type(optimizer).__name__}"
        self.optimizer = optimizer  # kept alive: ids must stay unique
        self.writes = isinstance(optimizer, VariableWrites)
        self.variables = []  # the variable objects of the first update, in update order
        self.steps = []
        self.scales = []  # per variable: the largest |value| it had before a step (magnitudes)
        self.graph_ops = []  # graph mode: names of the update ops built for it
        self.continued = []  # the same training's optimizers in later graphs (an Estimator's train() calls)
        self.matched = False  # NEW: its variables were checked against OLD's optimizer of its number


class Recorder:
    def __init__(self, side, out, steps=None, init_file=None, transfer=True):
        self.side = side
        self.transfer = transfer  # NEW: load OLD's start values (else only match them, by key)
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
        self.graph_extras = {}  # (update index, op name) -> [loss, pre, post] tensors
        self.train_session = None
        self.graph_steps = GraphSteps()  # which ops are updates, what each fetch set runs
        self.writes_updates = {}  # write key -> Update (graph scripts with no optimizer)
        self.owned = set()  # op names (graph) / ids of variables an optimizer made: its slots
        self.state = {}  # variable op name -> (rank, variable): other model state the steps write
        self.step_values = {}  # "key@step" -> array: variables written with no optimizer
        self.started = False  # the first step ran (start values captured / loaded)
        self.start_ids = set()  # ids of the graph variables whose start values are captured / loaded
        self.replicas_seen = 0  # largest strategy created in the run (NEW under --replicas)
        self._old_init = None
        self._assigned = {}  # id(new var) -> old key
        self.start_distribution = []  # NEW: its own start values' statistics, before OLD's are loaded
        self._lock = threading.Lock()  # MirroredStrategy runs replicas in threads
        self.fetched = Fetched()  # what the script's computations returned, in order
        self.keys = None  # keyed_draws.DropoutKeys under keyed dropout: told when NEW's computations run
        self.draws = initializers.Draws()  # what each start value was drawn from
        if init_file:
            with np.load(init_file, allow_pickle=False) as data:
                meta = json.loads(str(data["__meta__"]))
                meta.sort(key=lambda entry: entry.get("rank", 0))  # OLD's creation order
                self._old_init = [(entry["key"], tuple(entry["shape"]), data[entry["key"]]) for entry in meta]
            self._old_members = membership.members_from_meta(meta)
            self._old_names = {entry["key"]: entry.get("name") for entry in meta}
            self.draws.old = {entry["key"]: entry.get("draw") for entry in meta}
            self._old_used = set()

    # ---- bookkeeping -------------------------------------------------------------------------
    def update_for(self, optimizer, variables=()):
        update = self.optimizers.get(id(optimizer)) or self._continuing.get(id(optimizer))
        if update is None and variables:
            update = self._continued(optimizer, variables)
        if update is None:
            update = Update(len(self.optimizers), optimizer)
            self.optimizers[id(optimizer)] = update
        return update

    def _continued(self, optimizer, variables):
        """The Update that a new graph's optimizer continues, or None.

        An Estimator builds a fresh graph on each train() call and restores the checkpoint the
        previous call saved: a new optimizer object over new variables of the same names and
        shapes, in a graph of its own, is the same training going on. Its steps extend that
        Update, and the final weights are read from the newest graph.
        """
        name = optimizer_name(optimizer)
        graph = getattr(variables[0], "graph", None)
        signature = [(var_name(v), var_shape(v)) for v in variables]
        for update in self.optimizers.values():
            if update.name != name or not update.variables or graph is None:
                continue
            if getattr(update.variables[0], "graph", graph) is graph:
                continue
            if [(var_name(v), var_shape(v)) for v in update.variables] != signature:
                continue
            for old, new in zip(update.variables, variables):
                key = self._assigned.get(var_identity(old))
                if key is not None:
                    self._assigned[var_identity(new)] = key
            update.variables = list(variables)
            self._continuing[id(optimizer)] = update
            update.continued.append(optimizer)  # kept alive: ids must stay unique
            return update
        return None

    def update_for_writes(self, key, variables):
        """The Update standing for the Session.runs that write `variables` (no optimizer)."""
        update = self.writes_updates.get(key)
        if update is None:
            update = self.update_for(VariableWrites(key[-1]))
            update.variables = list(variables)
            self.writes_updates[key] = update
        return update

    def computation_began(self) -> None:
        if self.keys is not None:
            self.keys.begin()

    def computation_ended(self, result) -> None:
        """A tf.function call returned (result None for one inside another)."""
        if self.keys is not None:
            self.keys.end()
        if result is not None:
            self.fetched.note(result)

    def updates_done(self) -> int:
        """How many optimizer updates (and steps of variable writes) were recorded so far."""
        return sum(len(update.steps) for update in self.optimizers.values())

    def ordered(self):
        """The optimizers' Updates in the order of their first update."""
        return sorted(self.optimizers.values(), key=lambda u: u.index)

    def note_gradients(self, target, sources, grads):
        if grads is None:
            return
        flat_sources = flatten(sources)
        flat_grads = flatten(grads)
        if len(flat_sources) != len(flat_grads):
            return
        raw = {id(v): g for v, g in zip(flat_sources, flat_grads)}
        # the sources are kept with the record so that their ids stay unique while it lives
        with self._lock:
            self.grad_records.append((target, raw, list(flat_sources), replica_id()))
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
        return sum_parts([p for _, p in sorted(parts.items())])

    # ---- NEW: starting point ------------------------------------------------------------------
    def creator(self, next_creator, **kwargs):
        """variable_creator_scope hook (NEW, eager or tf.function): give each trainable
        variable OLD's start value as it is created. A graph-mode NEW's variables are matched
        and loaded at its first step instead (hooks/graph.py, match_graph)."""
        import tensorflow as tf

        kwargs, drawn = self.draws.watch(kwargs)
        var = next_creator(**kwargs)
        self.draws.remember(var, drawn)
        if self._old_init is None or kwargs.get("trainable") is False:
            return var
        if "/replica_" in str(kwargs.get("name") or ""):
            return var  # MirroredStrategy's copies of replica 0's variable: they copy its value
        with tf.init_scope():
            if not tf.executing_eagerly():
                return var
        shape = var_shape(var)
        for key, old_shape, value in self._old_init:
            if key not in self._old_used and old_shape == shape:
                self._old_used.add(key)
                self._assigned[id(var)] = key
                if self.transfer:
                    with tf.init_scope():
                        self.start_distribution.append({"key": key, "name": var_name(var),
                                                        "old": start_values.stats(value),
                                                        "new": start_values.stats(var.numpy()),
                                                        **self.draws.pair(key, var)})
                        var.assign(tf.cast(value, var.dtype))
                elif self.draws.judge(key, var, var_name(var)):
                    with tf.init_scope():
                        var.assign(tf.cast(value, var.dtype))
                break
        return var

    def match_graph(self, variables):
        """Graph-mode NEW: give `variables` (in creation order) OLD's keys by the start-value
        rule; returns [(variable, OLD value)] to load."""
        loads = []
        if self._old_init is None:
            return loads
        for var in variables:
            if id(var) in self._assigned:
                continue
            shape = var_shape(var)
            for key, old_shape, value in self._old_init:
                if key not in self._old_used and old_shape == shape:
                    self._old_used.add(key)
                    self._assigned[id(var)] = key
                    if self.transfer or self.draws.judge(key, var, var_name(var)):
                        loads.append((var, value))
                    break
        return loads

    def match_late(self, variables):
        """NEW's eager variables the creator hook did not see (a TF 1.x eager script's
        `tfe.Variable`, made directly as a ResourceVariable, bypasses creator scopes): matched
        and given OLD's start values at their first update, by the same rule."""
        import tensorflow as tf

        if self.side != "new" or self.started:
            return
        with tf.init_scope():
            for var, value in self.match_graph([v for v in variables if var_identity(v) not in self._assigned]):
                var.assign(tf.cast(value, var.dtype))

    def key_of(self, var, default):
        """The record's key of `var`: on NEW the OLD key it was matched to; on OLD the first key
        it was given (a variable two optimizers update is one variable, with one key)."""
        if self.side == "old":
            return self._assigned.setdefault(var_identity(var), default)
        return self._assigned.get(var_identity(var), default)

    def check_match(self, update, variables):
        if self._old_init is None or update.steps:
            return
        meta = self._old_meta()
        got = [self._assigned.get(var_identity(v)) for v in variables]
        self._take_old_index(update, meta, got)
        expected = meta.get(update.index)
        if expected is None or None in got or sorted(got) != sorted(expected):
            self.mismatch = {
                "optimizer": update.index,
                "old": [self._old_describe(k) for k in (expected or [])],
                "new": [{"name": var_name(v), "shape": list(var_shape(v)),
                         "matched": self._assigned.get(var_identity(v))} for v in variables],
            }
            raise StopParity()
        update.matched = True

    def _take_old_index(self, update, meta, got):
        """Optimizers are numbered in the order of their first update, and a program and its
        translation may first run them in another order (membership.take_old_index)."""
        membership.take_old_index(update, self.optimizers.values(), meta, got)

    def _old_meta(self):
        """Optimizer index -> OLD keys of the variables it updated (OLD's optimizers that ran)."""
        return self._old_members

    def _old_describe(self, key):
        for k, shape, _ in self._old_init:
            if k == key:
                return {"key": key, "shape": list(shape), "name": self._old_names.get(key)}
        return {"key": key}

    # ---- stepping -----------------------------------------------------------------------------
    def before_update(self, update):
        if self.max_steps is not None and len(update.steps) >= self.max_steps:
            self.stopped = True
            raise StopParity()

    def record_step(self, update, loss, pre, post, scales=None):
        update.steps.append({"step": len(update.steps) + 1, "loss": number(loss), "grad_norm_pre": number(pre),
                             "grad_norm_post": number(post)})
        if scales is not None:  # the running max per variable
            update.scales = [max(a, float(b)) for a, b in itertools.zip_longest(update.scales, scales, fillvalue=0.0)]

    def record_values(self, update, values):
        """The values of a variable-writes update's variables after its latest step."""
        step = len(update.steps)
        for key, value in self.keyed([(update, values)]).items():
            self.step_values[f"{key}@{step}"] = value

    def last_values(self):
        """{key: array}: each variable-writes update's variables after its last step."""
        out = {}
        for update in self.ordered():
            if update.writes and update.steps:
                step = len(update.steps)
                for j, var in enumerate(update.variables):
                    key = self.key_of(var, var_key(update.index, j))
                    out[key] = self.step_values[f"{key}@{step}"]
        return out

    def state_variables(self):
        """Other model state the steps wrote, in creation order: (key, variable)."""
        updated = {var_identity(v) for u in self.optimizers.values() for v in u.variables}
        kept = sorted((rank, name, v) for name, (rank, v) in self.state.items()
                      if var_identity(v) not in updated and name not in self.owned)
        return [(f"state/{k}", v) for k, (_, _, v) in enumerate(kept)]

    # ---- output -------------------------------------------------------------------------------
    def write(self, status, error=None):
        import tensorflow as tf

        os.makedirs(self.out, exist_ok=True)
        record = {
            "side": self.side,
            "status": status,
            "error": error,
            "eager": tf.executing_eagerly(),  # at the end: a TF 1.x script may have turned it on
            "optimizers": [
                {"index": u.index, "name": u.name, "class": u.cls, "writes": u.writes,
                 "variables": [{"name": var_name(v), "shape": list(var_shape(v)), "key": var_key(u.index, j)}
                               for j, v in enumerate(u.variables)],
                 "steps": u.steps}
                for u in self.ordered()
            ],
            "mismatch": self.mismatch,
            "state": [{"key": key, "name": var_name(v), "shape": list(var_shape(v))}
                      for key, v in self.state_variables()],
            "state_observed": self.started,
            "start_distribution": self.start_distribution,
            "draws": self.draws.entries,  # NEW under --no-transfer: each matched variable's draws
        }
        for entry, u in zip(record["optimizers"], self.ordered()):
            for j, (var_entry, v) in enumerate(zip(entry["variables"], u.variables)):
                var_entry["key"] = self.key_of(v, var_entry["key"])
                if j < len(u.scales):
                    var_entry["scale"] = u.scales[j]
        with open(os.path.join(self.out, "record.json"), "w") as handle:
            json.dump(record, handle, indent=1, default=str)
        self.fetched.save(self.out)
        members = membership.members(record["optimizers"])
        self.draws.note_start([(self.key_of(v, var_key(u.index, j)), v) for u in self.ordered()
                               for j, v in enumerate(u.variables)], members, self.initial or {})
        for label, arrays in (("initial", self.initial), ("final", self.final), ("steps", self.step_values)):
            if arrays:
                save_arrays(os.path.join(self.out, f"{label}.npz"), arrays, self.ranks,
                            members if label == "initial" else None)

    def keyed(self, values_per_update):
        """{key: array} from [(update, [arrays])], keys per the record (OLD keys on NEW)."""
        out = {}
        for update, values in values_per_update:
            for j, (var, value) in enumerate(zip(update.variables, values)):
                out[self.key_of(var, var_key(update.index, j))] = np.asarray(value)
        return out

    def final_eager(self):
        """Final values of eager (or Keras) variables; None when they live in a closed graph session."""
        try:
            return self.keyed([(u, [np.asarray(v.numpy()) for v in u.variables]) for u in self.ordered()])
        except Exception:  # noqa: BLE001 - graph variables whose session is gone
            return None

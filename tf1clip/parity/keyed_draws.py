"""Keyed dropout draws: the randomness policy for a TF 1.x program against its TF 2 translation.

A TF 1.x graph and a TF 2 program draw from different random streams: a graph's stateful ops
take seeds from its op count, a `tf.function` from its own graph, Keras layers from their seed
generators. Seeding both sides alike therefore cannot make the same dropout draw the same
mask. Instead, under this policy every dropout mask is a pure function of what the dropout is
and when it runs, the same on both sides:

    mask = stateless_uniform(noise_shape, seed=(rank, ordinal, step)) >= rate

- **rank**: the dropout's place in the computation that runs it. A computation is one
  `Session.run` (OLD) or one call of a `tf.function` (NEW). Its dropouts are numbered in the
  order they were created, among those the computation reaches: in OLD, those whose draw the
  run's fetches reach in the graph; in NEW, those whose draw the traced function's results and
  updates reach. A dropout inside a while loop (or cond) the computation reaches counts
  whether or not its own value is used: a TF 2 loop body runs all of its dropouts, a TF 1.x one
  only those its fetched values need (an RNN's outputs discarded, its state kept), so counting
  the used ones only would shift every later rank on one side.
  Eagerly, a dropout outside any function is numbered among the eager dropouts since the last
  update.
- **ordinal**: how many times that dropout already ran in this computation (a dropout in a
  while loop, e.g. an RNN cell's `DropoutWrapper`, runs once per time step; while loops run
  one iteration at a time under parity, so the ordinal is the time step).
- **step**: the number of optimizer updates done before the computation started.
- **rate**: the dropout's own rate, compared as TF does (`keep = draw >= rate`). A different
  rate (keep_prob passed as rate), a dropout left out or one added therefore gives other masks
  from the first step.

Only dropout is keyed (every entry point of TF 2.21 funnels into `nn_ops._dropout`:
`tf.nn.dropout` v1 and v2, `tf.compat.v1.layers.dropout`, Keras 3 and tf-keras `Dropout`,
`DropoutWrapper`, `stateless_dropout`). Other random ops keep the default policy's seeds, and
they do not shift the keys: an initializer or a Keras seed generator made before a dropout
changes nothing here. `tf.data` shuffles without a seed get the op seed of their creation
order in the process (shuffles are made outside step functions on both sides), so the same
shuffle draws the same order and another buffer size shows.

The draw reads its key through one `numpy_function` per dropout, so OLD's graph gets two ops
per dropout that it did not have: later random ops of OLD get other op-count seeds than in a
plain run. That changes nothing that parity compares, since NEW starts from OLD's values.
"""
from __future__ import annotations

import threading
import weakref
from collections import Counter

import numpy as np

from tf1clip.parity.fetched import fetch_ops
from tf1clip.steps import wrap

POLICY = ("TF 1.x against TF 2, dropout keyed: each dropout mask is drawn from a stateless seed of "
          "(its creation rank in the run or step function, its run within the call, the number of "
          "updates before), compared against its own rate; tf.data shuffles seeded by creation order; "
          "candidate samplers (nce_loss, sampled_softmax_loss) seeded by creation order; "
          "other seeds as the default policy; while loops one iteration at a time")


class DropoutKeys:
    """What each dropout draws: the key of the current computation and the dropouts' sites."""

    def __init__(self, updates_done, seed: int = 0):
        self.updates_done = updates_done  # () -> int: optimizer updates done so far
        self.seed = int(seed)
        self._lock = threading.Lock()
        self._graphs = weakref.WeakKeyDictionary()  # graph -> _Sites
        self._next_graph = 0
        self._depth = 0  # computations in progress (a tf.function traced inside another is one)
        self._run = None  # the outermost computation in progress
        self._eager = [None, 0]  # [updates at the last eager dropout, eager dropouts since]
        self._reach = {}  # (graph key, fetch op names, sites) -> {site: rank}

    # ---- sites ------------------------------------------------------------------------------
    def sites(self, graph) -> "_Sites":
        with self._lock:
            found = self._graphs.get(graph)
            if found is None:
                found = _Sites(self._next_graph, graph)
                self._next_graph += 1
                self._graphs[graph] = found
            return found

    def seed_tensor(self):
        """The seed of one dropout's draw: a constant eagerly, else an op read as it runs."""
        import tensorflow as tf
        from tensorflow.python.framework import ops

        if tf.executing_eagerly():
            with self._lock:
                step = self.updates_done()
                if self._eager[0] != step:
                    self._eager = [step, 0]
                rank = self._eager[1]
                self._eager[1] += 1
            return tf.constant(self._key(rank, 0, step), dtype=tf.int64)
        made_in = ops.get_default_graph()
        graph = _function_graph(made_in)
        sites = self.sites(graph)
        site = len(sites.ops)
        seed = tf.numpy_function(lambda: self._drawn(sites, site), [], tf.int64, stateful=True,
                                 name="tf1clip_dropout_key")
        seed.set_shape([2])
        sites.ops.append(seed.op.name)
        sites.made_in.append(weakref.ref(made_in))
        return seed

    def _drawn(self, sites, site):
        with self._lock:
            run = self._run
            if run is None:  # executed with no computation seen starting (a callable's fast path)
                return self._key(site, 0, self.updates_done())
            ranks = run.ranks
            if ranks is None:  # NEW: a tf.function's graph, numbered once per trace
                ranks = sites.function_ranks()
            rank = ranks.get(site, site)
            ordinal = run.count[(sites.key, site)]
            run.count[(sites.key, site)] += 1
            return self._key(rank, ordinal, run.step)

    def _key(self, rank, ordinal, step):
        return np.array([(self.seed << 40) + (rank << 20) + ordinal, step], dtype=np.int64)

    # ---- computations -----------------------------------------------------------------------
    def begin(self, ranks=None) -> None:
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._run = _Run(self.updates_done(), ranks)

    def end(self) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self._run = None

    def ranks_for(self, graph, fetches):
        """OLD: {site: rank} of the dropouts a Session.run's fetches reach (drawn, or in a while
        loop or cond the fetches reach)."""
        sites = self._graphs.get(graph)
        if sites is None or not sites.ops:
            return {}
        targets = fetch_ops(graph, fetches)
        cache = (sites.key, tuple(sorted(op.name for op in targets)), len(sites.ops))
        found = self._reach.get(cache)
        if found is None:
            reached = list(_ancestors(targets))
            names = {op.name for op in reached}
            contexts = {id(ctx) for op in reached for ctx in _contexts(op)}
            counted = []
            for site, name in enumerate(sites.ops):
                op = graph.get_operation_by_name(name)
                if name in names or any(id(ctx) in contexts for ctx in _contexts(op)):
                    counted.append(site)
            found = {site: rank for rank, site in enumerate(counted)}
            self._reach[cache] = found
        return found


class _Sites:
    def __init__(self, key, graph):
        self.key = key
        self.graph = weakref.ref(graph)
        self.ops = []  # names of the key ops, in the order their dropouts were made
        self.made_in = []  # weak references to the graph each was made in (a loop body's own)
        self.ranks = None  # NEW: {site: rank}, computed at the first draw of a trace
        self.ranks_of = 0

    def function_ranks(self):
        """NEW: {site: rank} of a traced function's dropouts that its results and updates reach."""
        if self.ranks is None or self.ranks_of != len(self.ops):
            top, graphs = self.graph(), [ref() for ref in self.made_in]
            if top is None or any(g is None for g in graphs):
                return {}
            self.ranks_of = len(self.ops)
            self.ranks = _function_reach(top, self.ops, graphs)
        return self.ranks


class _Run:
    def __init__(self, step, ranks):
        self.step = step
        self.ranks = ranks
        self.count = Counter()


def _function_graph(graph):
    """The graph a dropout belongs to: control-flow bodies (TF 2 while / cond) count as their function."""
    from tensorflow.python.ops.control_flow_v2_func_graphs import ControlFlowFuncGraph

    while isinstance(graph, ControlFlowFuncGraph) and getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return graph


def _contexts(op):
    """The TF 1.x while / cond contexts around an op, innermost first."""
    ctx = op._get_control_flow_context()  # noqa: SLF001 - TF 1.x control flow has no public accessor
    while ctx is not None:
        yield ctx
        ctx = ctx.outer_context


_BODY_ATTRS = ("_body_graph", "_cond_graph", "_true_graph", "_false_graph")


def _bodies(op):
    """The function graphs a TF 2 while / cond op runs (while_v2, cond_v2 keep them on the op)."""
    found = [getattr(op, attr, None) for attr in _BODY_ATTRS]
    found.extend(getattr(op, "_branch_graphs", None) or ())
    return [g for g in found if g is not None]


def _function_reach(top, names, graphs):
    """{site: rank} for the dropouts of one traced function: a site counts when its draw feeds
    an op that the function's results or updates reach, or when it lies in a loop or cond body
    that they reach. The walk starts at the outputs and the control outputs (what automatic
    control dependencies make run), except the draws themselves, and never enters a draw through
    a control edge (those edges only order stateful ops)."""
    draws = {(id(g), name) for g, name in zip(graphs, names)}
    start = [t.op for t in top.outputs]
    start += [op for op in top.control_outputs if (id(top), op.name) not in draws]
    seen, bodies = set(), set()
    for op in _ancestors(start, control=lambda c: (id(top), c.name) not in draws):
        seen.add(op.name)
        inner = _bodies(op)
        while inner:
            body = inner.pop()
            if id(body) not in bodies:
                bodies.add(id(body))
                inner.extend(b for o in body.get_operations() for b in _bodies(o))
    counted = [site for site, (g, name) in enumerate(zip(graphs, names))
               if id(g) in bodies or (g is top and name in seen)]
    return {site: rank for rank, site in enumerate(counted)}


def _ancestors(targets, control=lambda op: True):
    """The ops `targets` depend on, themselves included; `control` says which control inputs count."""
    seen, stack = set(), list(targets)
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        yield op
        stack.extend(t.op for t in op.inputs)
        stack.extend(c for c in op.control_inputs if control(c))


def install(keys: DropoutKeys) -> None:
    """Key every dropout's draw, mark OLD's computations (each Session.run; NEW's tf.function
    calls reach `keys.begin` / `end` through the recorder's hooks/calls.py), seed tf.data
    shuffles by creation order. Adds no graph ops until a dropout is made."""
    import tensorflow as tf
    from tensorflow.python.client import session as session_lib
    from tensorflow.python.data.ops import dataset_ops
    from tensorflow.python.ops import nn_ops

    def make_dropout(original):
        def _dropout(x, rate, noise_shape, uniform_sampler, dummy_rng_step, name, default_name):
            def keyed_sampler(shape, dtype):
                return tf.random.stateless_uniform(shape, seed=keys.seed_tensor(), dtype=dtype)
            return original(x, rate, noise_shape, keyed_sampler, dummy_rng_step, name, default_name)
        return _dropout

    wrap(nn_ops, "_dropout", make_dropout)

    def make_run(original):
        def _run(self, handle, fetches, feed_dict, options, run_metadata):
            keys.begin(keys.ranks_for(self.graph, fetches))
            try:
                return original(self, handle, fetches, feed_dict, options, run_metadata)
            finally:
                keys.end()
        return _run

    wrap(session_lib.BaseSession, "_run", make_run)

    made = [0]

    def make_shuffle(original):
        def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
            if seed is None:
                made[0] += 1
                seed = made[0]
            return original(self, buffer_size, seed, reshuffle_each_iteration, name)
        return shuffle

    for cls in (dataset_ops.DatasetV2, dataset_ops.DatasetV1):
        wrap(cls, "shuffle", make_shuffle)

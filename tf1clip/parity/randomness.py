"""Equal, fixed randomness on both sides of a parity run, and the `--no-dropout` policy.

Default: OLD and NEW are the same program (a script and its `--to compat` migration, or an
identical copy), so every source of randomness is seeded the same way on both sides and they
draw the same numbers:
- Python's `random` and NumPy's global generator are seeded before the script runs (and
  PYTHONHASHSEED=0 is in the environment);
- TensorFlow's eager global seed is set, and so is the graph-level seed of every graph: the
  default graph and each one the script makes (`tf.Graph()`, `reset_default_graph()`), also
  when NEW enters graph mode itself with `tf.compat.v1.disable_v2_behavior()`. With a graph
  seed, a random op without its own seed gets one derived from the graph's count of such ops,
  so the same program gets the same seeds: initializers, dropout masks, `tf.data` shuffles,
  and TF1's MNIST reader, which reseeds NumPy from `get_seed(None)` (random when no graph seed
  is set). A script that sets its own seed keeps it.
- Candidate samplers (the negative classes of `tf.nn.nce_loss` and `sampled_softmax_loss`, and
  `tf.random.*_candidate_sampler`) are stateful: their kernel is seeded once and advances at
  each run (a Session's `run`, a `tf.function`'s call). The op seed TF derives for one without
  its own seed counts the random ops of its graph, which a TF 1.x graph (initializers first)
  and a TF 2 step function (its own graph) count differently, so each gets an explicit op seed
  instead: its creation order among the candidate-sampling ops of its graph (0, 1, ...; a
  `tf.function` traced again, e.g. after creating its optimizer's variables, counts afresh),
  with the graph's seed as the first. A TF 1.x script and its translation build their
  samplers in the same order, so they draw the same classes run after run. A sampler given a
  seed keeps it.
- TF 1.x while loops run one iteration at a time where their order could change a draw
  (`while_loops.py`).
"""
from __future__ import annotations

import random
import sys

from tf1clip.parity.keyed_draws import POLICY as KEYED_POLICY
from tf1clip.parity.post_import import after_import
from tf1clip.parity.pipelines import SESSION_SCHEDULE
from tf1clip.steps import wrap

DEFAULT_POLICY = ("same seeds on both sides: Python, NumPy, TensorFlow's global seed and every graph's "
                  "seed (dropout, tf.data shuffles, the MNIST reader draw alike in the same program); candidate "
                  "samplers (nce_loss, sampled_softmax_loss) seeded by creation order; TF 1.x while loops one "
                  "iteration at a time (dropout in an RNN cell draws in time order); queue runners one thread "
                  "each, shuffle queues dequeued from full, tf.data maps one element at a time")
NO_DROPOUT_POLICY = ("--no-dropout: dropout and tf.data shuffles are the identity on both sides (their expectation); "
                     "candidate samplers (nce_loss, sampled_softmax_loss) seeded by creation order; "
                     "other seeds as default")


SAME_SEEDS, KEYED, NO_DROPOUT = "same-seeds", "keyed", "no-dropout"
# entering TF 1.x graph mode from TF 2: a NEW that does is graph code (a compat migration)
_GRAPH_MODE_CALLS = {"disable_v2_behavior", "disable_eager_execution", "Session", "InteractiveSession",
                     "MonitoredTrainingSession", "MonitoredSession", "SingularMonitoredSession"}


def choose(no_dropout: bool, same_program: bool, new_source: bytes, same_seeds: bool = False) -> str:
    """The policy a parity run takes: `--no-dropout` when asked; the same seeds on both sides
    for the same program (an identical copy, or NEW still TF 1.x graph code: a compat
    migration, which calls `disable_v2_behavior` or makes a Session); otherwise (a TF 1.x
    program against TF 2 code) dropout keyed by what each dropout is (keyed_draws.py)."""
    if no_dropout:
        return NO_DROPOUT
    if same_program or same_seeds or graph_program(new_source):
        return SAME_SEEDS
    return KEYED


def graph_program(source: bytes) -> bool:
    """Is this NEW TF 1.x graph code run on TF 2 (it enters graph mode or makes a Session)?"""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in _GRAPH_MODE_CALLS:
                return True
    return False


def policy(name: str) -> str:
    """The randomness policy in force and the sessions' schedule, one line for the report header."""
    text = {NO_DROPOUT: NO_DROPOUT_POLICY, KEYED: KEYED_POLICY}.get(name, DEFAULT_POLICY)
    return f"{text}; {SESSION_SCHEDULE}"


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and TensorFlow (eager and every graph, present and future).

    Call before the script runs and before it creates a graph; adds no graph ops.
    """
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    import tensorflow as tf
    from tensorflow.python.framework import ops

    def make_init(original):
        def __init__(self, *args, **kwargs):
            original(self, *args, **kwargs)
            if self.seed is None:
                self.seed = seed  # a FuncGraph sets its own (its outer graph's) right after
        return __init__

    wrap(ops.Graph, "__init__", make_init)
    # `set_random_seed(None)` (an Estimator with RunConfig(tf_random_seed=None) calls it in every
    # graph it builds) would take the seed away again: under parity "no seed" is this seed.
    prop = ops.Graph.__dict__["seed"]
    if not getattr(prop.fset, "_tf1clip_hook", False):
        def set_seed(self, value, _set=prop.fset):
            _set(self, seed if value is None else value)
        set_seed._tf1clip_hook = True
        ops.Graph.seed = property(prop.fget, set_seed, prop.fdel, prop.__doc__)
    if tf.executing_eagerly():
        tf.random.set_seed(seed)
    else:
        # Graph mode (the TF 1.x face): tf.random.set_seed would make the default graph to seed
        # it, and a script starting with tf.enable_eager_execution() (TF 1.x's eager API) would
        # then stop: "must be called at program startup". Every graph is seeded as it is made
        # (above); the eager seed is set when the script turns eager execution on.
        def make_enable(original):
            def enable_eager_execution_internal(*args, **kwargs):
                result = original(*args, **kwargs)
                tf.random.set_seed(seed)
                return result
            return enable_eager_execution_internal

        wrap(ops, "enable_eager_execution_internal", make_enable)
    # The global default graph is made lazily, through the wrapped __init__; asking for it here
    # would make it (see above). Only a graph that exists already is seeded here.
    stack = getattr(ops, "_default_graph_stack", None)
    graph = getattr(stack, "_global_default_graph", None) if stack is not None else ops.get_default_graph()
    if graph is not None and graph.seed is None:
        graph.seed = seed


def seed_candidate_samplers() -> None:
    """Give every candidate-sampling op made without a seed the op seed of its creation order
    in its graph (a TF 1.x graph, or one trace of a `tf.function`).

    The samplers of `candidate_sampling_ops` (every public `*_candidate_sampler` and the one
    inside nce_loss / sampled_softmax_loss, TF 1 and TF 2 alike) take their seeds from that
    module's `random_seed.get_seed`; it is replaced there by one that numbers, graph by graph,
    the calls without a seed. Adds no graph ops."""
    from tensorflow.python.framework import random_seed
    from tensorflow.python.ops import candidate_sampling_ops

    if not isinstance(candidate_sampling_ops.random_seed, _CreationOrderSeeds):
        candidate_sampling_ops.random_seed = _CreationOrderSeeds(random_seed)


class _CreationOrderSeeds:
    """`random_seed` as the candidate-sampling module sees it: `get_seed(None)` → the number of
    candidate-sampling ops its graph had before, as the op seed (the graph's seed stays the first)."""

    def __init__(self, module):
        import weakref

        self._module = module
        self._counts = weakref.WeakKeyDictionary()  # graph → candidate-sampling ops made in it

    def get_seed(self, op_seed):
        if op_seed is None:
            from tensorflow.python.framework import ops

            graph = ops.get_default_graph()
            op_seed = self._counts.get(graph, 0)
            self._counts[graph] = op_seed + 1
        return self._module.get_seed(op_seed)

    def __getattr__(self, name):
        return getattr(self._module, name)


def identity_dropout() -> None:
    """Make dropout the identity in this process (`--no-dropout`)."""
    from tensorflow.python.framework import ops
    from tensorflow.python.ops import nn_ops

    def make_dropout(original):
        # nn_ops._dropout is TF 2.21's one implementation behind tf.nn.dropout (v1 and v2),
        # stateless_dropout and general_dropout, which every dropout layer calls; a test
        # checks each public entry point (tests/test_parity_randomness.py)
        def _dropout(x, rate, noise_shape, uniform_sampler, dummy_rng_step, name, default_name):
            return ops.convert_to_tensor(x, name="x")
        return _dropout

    wrap(nn_ops, "_dropout", make_dropout)

    # A tf.data shuffle draws its order from the seeds of the program that built it, which a
    # TF 1.x graph and its TF 2 translation give differently: its expectation, the order unchanged.
    from tensorflow.python.data.ops import dataset_ops

    def make_shuffle(original):
        def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
            return self
        return shuffle

    for cls in (dataset_ops.DatasetV2, dataset_ops.DatasetV1):
        wrap(cls, "shuffle", make_shuffle)

    def patch_wrapper(module):
        def make_variational(original):
            def _variational_recurrent_dropout_value(self, unused_index, value, noise, keep_prob):
                return value
            return _variational_recurrent_dropout_value

        for name in ("DropoutWrapper", "DropoutWrapperBase"):
            cls = getattr(module, name, None)
            if cls is not None and hasattr(cls, "_variational_recurrent_dropout_value"):
                wrap(cls, "_variational_recurrent_dropout_value", make_variational)

    for module in ("tf_keras.src.layers.rnn.legacy_cell_wrappers", "tf_keras.src.layers.rnn.cell_wrappers"):
        after_import(module, patch_wrapper)

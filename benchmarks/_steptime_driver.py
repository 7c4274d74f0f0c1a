"""Run one training script in-process and time its train steps (a helper of bench_steptime.py).

    python _steptime_driver.py {tf1,tf2,tf2-xla} WARMUP SCRIPT [ARGS...]

tf1:  SCRIPT is a TF 1.x script, run as `tf1clip run SCRIPT` runs it (graph mode, Session).
      A train step is a `Session.run` whose fetches reach an optimizer update op (an op whose
      type has "Apply" in it, or a scatter update), walking back through data and control inputs.
tf2:  SCRIPT is a TF2 script, run as `python SCRIPT`. A train step is a call of a `tf.function`
      during whose tracing an optimizer applied gradients (Keras 3, tf-keras or tf.compat.v1),
      or of the concrete function `get_concrete_function` traced from one.
tf2-xla: as tf2, with `tf.function` defaulting to jit_compile=True.

The script's output goes to stdout as usual; at the end one line `MARKER {json}` gives the
number of train steps, the median start-to-start interval between consecutive train steps
after WARMUP of them (what the training loop experiences: feeding, the step, fetching,
printing) and the median duration of the train-step call alone. Exit status: the script's.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import json
import os
import statistics
import sys
import time

MARKER = "@@STEPTIME@@"
_clock = time.perf_counter
starts: list[float] = []     # start of each train step
durations: list[float] = []  # its Session.run / Function.__call__ alone


def _record(t0, t1):
    starts.append(t0)
    durations.append(t1 - t0)


# -- TF1: Session.run ------------------------------------------------------------------------
_SCATTER_UPDATES = {f"{prefix}Scatter{kind}" for prefix in ("", "Resource")
                    for kind in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update")}


def _is_update(op) -> bool:
    return "Apply" in op.type or op.type in _SCATTER_UPDATES


def _flat(fetches):
    if isinstance(fetches, (list, tuple)):
        return [x for item in fetches for x in _flat(item)]
    if isinstance(fetches, dict):
        return [x for item in fetches.values() for x in _flat(item)]
    return [fetches]


def _reaches_update(graph, elements) -> bool:
    todo, seen = [], set()
    for element in elements:
        try:
            element = graph.as_graph_element(element)
        except Exception:  # noqa: BLE001 - not a graph element (e.g. a string handle): no update
            continue
        todo.append(getattr(element, "op", element))
    while todo:
        op = todo.pop()
        if op in seen:
            continue
        seen.add(op)
        if _is_update(op):
            return True
        todo.extend(t.op for t in op.inputs)
        todo.extend(op.control_inputs)
    return False


def install_tf1_hooks():
    from tensorflow.python.client import session

    original = session.BaseSession.run
    verdicts: dict = {}  # key -> (is train step, the fetched objects, kept alive so ids stay theirs)

    def run(self, fetches, *args, **kwargs):
        t0 = _clock()
        result = original(self, fetches, *args, **kwargs)
        t1 = _clock()
        elements = _flat(fetches)
        key = (id(self.graph), *map(id, elements))
        verdict = verdicts.get(key)
        if verdict is None:
            verdict = verdicts[key] = (_reaches_update(self.graph, elements), elements)
        if verdict[0]:
            _record(t0, t1)
        return result

    session.BaseSession.run = run


# -- TF2: tf.function calls ------------------------------------------------------------------
_OPTIMIZER_METHODS = (  # (module, class, method) that apply gradients, hooked once imported
    ("keras.src.optimizers.base_optimizer", "BaseOptimizer", "apply"),
    ("tf_keras.src.optimizers.optimizer", "_BaseOptimizer", "apply_gradients"),
    ("tf_keras.src.optimizers.optimizer", "Optimizer", "apply_gradients"),
    ("tf_keras.src.optimizers.legacy.optimizer_v2", "OptimizerV2", "apply_gradients"),
    ("tensorflow.python.training.optimizer", "Optimizer", "apply_gradients"),
)
_tracing: list = []       # the Functions whose Python body is running (i.e. being traced)
_train_ids: set = set()   # ids of Functions that applied gradients when traced
_hooked: set = set()
_kept: list = []          # train-step Functions and their concrete functions (ids stay theirs)


def _hook_optimizers():
    for module_name, class_name, method in _OPTIMIZER_METHODS:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None)
        if cls is None or (module_name, class_name) in _hooked or method not in vars(cls):
            continue
        _hooked.add((module_name, class_name))
        setattr(cls, method, _marking(vars(cls)[method]))


def _marking(original):
    @functools.wraps(original)
    def applying(*args, **kwargs):
        _train_ids.update(map(id, _tracing))  # every Function being traced holds this update
        # Kept alive: a script that rebinds the name to the concrete function drops the Function,
        # and a later Function (an eval step) could be given its id.
        _kept.extend(_tracing)
        return original(*args, **kwargs)
    return applying


def install_tf2_hooks(xla: bool):
    import tensorflow as tf
    from tensorflow.python.eager.polymorphic_function.concrete_function import ConcreteFunction
    from tensorflow.python.eager.polymorphic_function.polymorphic_function import Function

    original_call, original_concrete = Function.__call__, Function.get_concrete_function
    original_concrete_call = ConcreteFunction.__call__
    called: set = set()

    def __call__(self, *args, **kwargs):
        if id(self) not in called:  # first call: the optimizers in use are imported by now
            called.add(id(self))
            _hook_optimizers()
        _tracing.append(self)
        t0 = _clock()
        try:
            return original_call(self, *args, **kwargs)
        finally:
            t1 = _clock()
            _tracing.pop()
            if not _tracing and id(self) in _train_ids:  # a call from the loop, not from a tracing
                _record(t0, t1)

    def get_concrete_function(self, *args, **kwargs):
        _hook_optimizers()
        _tracing.append(self)
        try:
            concrete = original_concrete(self, *args, **kwargs)
        finally:
            _tracing.pop()
        if id(self) in _train_ids:  # the TF2 tier calls its steps through their concrete functions
            _train_ids.add(id(concrete))
            _kept.append(concrete)  # alive, so its id stays its own
        return concrete

    def concrete_call(self, *args, **kwargs):
        t0 = _clock()
        try:
            return original_concrete_call(self, *args, **kwargs)
        finally:
            t1 = _clock()
            if not _tracing and id(self) in _train_ids:
                _record(t0, t1)

    Function.__call__ = functools.wraps(original_call)(__call__)
    Function.get_concrete_function = functools.wraps(original_concrete)(get_concrete_function)
    ConcreteFunction.__call__ = functools.wraps(original_concrete_call)(concrete_call)
    if xla:
        original_function = tf.function
        signature = inspect.signature(original_function)

        @functools.wraps(original_function)
        def function(*args, **kwargs):  # both @tf.function and @tf.function(...)
            bound = signature.bind(*args, **kwargs)
            if bound.arguments.get("jit_compile") is None and not bound.arguments.get("experimental_compile"):
                bound.arguments["jit_compile"] = True
            return original_function(*bound.args, **bound.kwargs)

        tf.function = function


class _AfterTensorFlowImport:
    """builtins.__import__ wrapper that calls `callback` once the script's first import that
    loads TensorFlow has finished: TensorFlow decides tf.keras (TF_USE_LEGACY_KERAS) when it is
    imported, so the driver must not import it before the script had its say."""

    def __init__(self, callback):
        self.callback, self.original, self.depth = callback, builtins.__import__, 0

    def __call__(self, *args, **kwargs):
        self.depth += 1
        try:
            return self.original(*args, **kwargs)
        finally:
            self.depth -= 1
            if self.depth == 0 and "tensorflow" in sys.modules and builtins.__import__ is self:
                builtins.__import__ = self.original
                self.callback()


# -- main ------------------------------------------------------------------------------------
def main(argv) -> int:
    mode, warmup, script, args = argv[0], int(argv[1]), argv[2], argv[3:]
    from tf1clip._source import decode_source

    with open(script, "rb") as handle:
        text, _ = decode_source(handle.read())
    if mode == "tf1":
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # what tf1clip.runner.run_script does first
        install_tf1_hooks()
        from tf1clip.runner import run_script
        rc = run_script(script, text, args)
    elif mode in ("tf2", "tf2-xla"):
        builtins.__import__ = _AfterTensorFlowImport(lambda: install_tf2_hooks(mode == "tf2-xla"))
        from tf1clip.runner import execute_main
        rc = execute_main(script, text, args)
    else:
        raise SystemExit(f"unknown mode {mode!r}: tf1, tf2 or tf2-xla")
    intervals = [b - a for a, b in zip(starts, starts[1:])][warmup:]
    result = {"rc": rc, "steps": len(starts), "warmup": warmup, "intervals": len(intervals),
              "step_ms": statistics.median(intervals) * 1e3 if intervals else None,
              "call_ms": statistics.median(durations[warmup:]) * 1e3 if intervals else None}
    sys.stdout.flush()
    print(MARKER, json.dumps(result), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Every value a program fetches, recorded in order and compared: not only what trains.

A translation whose evaluation reads the wrong object trains like the original and prints
another loss. So each side records what its computations return to the script:
- OLD (TF 1.x graph): the result of each `Session.run` the script makes (also through
  `make_callable`), not the runs the recorder makes itself;
- NEW (TF 2): the result of each call of a `tf.function` made from outside any other one.

A result is flattened into its numeric leaves in `tf.nest` order (a dict by its keys); `None`
(what a train op fetches), strings and serialized summaries are left out, and a computation that
returns no numeric leaf is not counted. A `Session.run` that fetches only variables
(`sess.run(global_step)`, `sess.run(W)`) is not counted either: TF 2 code reads state eagerly
(`global_step.numpy()`), outside any step function, and the weights are compared anyway. The k-th fetch of OLD is then compared with the k-th
of NEW, leaf by leaf, with the weights' rule (`max |OLD - NEW| <= atol + rtol * max |NEW|`).
When the two sequences do not line up (another number of fetches, of leaves or other shapes:
the programs fetch different things, e.g. NEW trains with Keras' `fit`, or computes a loss
eagerly), nothing is judged and the report says so, with the first place they part: a shifted
sequence is never judged value by value. A run cut short by `--steps` stops both sides before
the same update, so the counts still agree.
"""
from __future__ import annotations

import os

import numpy as np

LIMIT = 20000  # fetches kept per side; a longer run is compared over its first LIMIT


class Fetched:
    """One side's fetches, in order: a list of lists of arrays."""

    def __init__(self):
        self.values = []
        self.truncated = False

    def note(self, result, graph=None, fetches=None) -> None:
        """One computation's result (OLD: with its graph and fetches, to leave out reads of state)."""
        if graph is not None and state_only(graph, fetches):
            return
        leaves = numeric_leaves(result)
        if not leaves:
            return
        if len(self.values) >= LIMIT:
            self.truncated = True
            return
        self.values.append(leaves)

    def save(self, folder: str) -> None:
        arrays = {f"f{k}_{j}": leaf for k, leaves in enumerate(self.values) for j, leaf in enumerate(leaves)}
        counts = np.array([len(leaves) for leaves in self.values], dtype=np.int64)
        np.savez(os.path.join(folder, "fetched.npz"), __counts__=counts, __truncated__=np.array(self.truncated),
                 **arrays)


def load(folder: str):
    """[[array, ...], ...] as saved, or None when the side recorded none (an older record)."""
    path = os.path.join(folder, "fetched.npz")
    if not os.path.exists(path):
        return None
    with np.load(path, allow_pickle=False) as data:
        counts = data["__counts__"]
        return [[data[f"f{k}_{j}"] for j in range(int(n))] for k, n in enumerate(counts)]


def fetch_ops(graph, fetches):
    """The graph operations a Session.run's fetch structure names."""
    found, stack = [], [fetches]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item is not None:
            try:
                element = graph.as_graph_element(item, allow_tensor=True, allow_operation=True)
            except (TypeError, ValueError, KeyError):
                for part in getattr(item, "_fields", ()) or ():
                    stack.append(getattr(item, part))
                for part in ("values", "indices", "dense_shape"):  # SparseTensor, IndexedSlices
                    if hasattr(item, part) and not callable(getattr(item, part)):
                        stack.append(getattr(item, part))
                continue
            found.append(getattr(element, "op", element))
    return found


_STATE_OPS = {"VariableV2", "Variable", "VarHandleOp", "ReadVariableOp"}


def state_only(graph, fetches) -> bool:
    """Does a Session.run fetch nothing but variables (their values, read as they are)?"""
    ops = fetch_ops(graph, fetches)
    if not ops:
        return False
    for op in ops:
        while op.type == "Identity" and op.inputs:  # `v.value()`, `tf.identity(v)` of a ref variable
            op = op.inputs[0].op
        if op.type not in _STATE_OPS:
            return False
    return True


def numeric_leaves(result) -> list:
    out, stack = [], [result]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (str, bytes)):
            continue
        if isinstance(item, dict):
            stack.extend(item[key] for key in reversed(sorted(item, key=str)))
            continue
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
            continue
        value = _array(item)
        if value is not None:
            out.append(value)
    return out


def _array(item):
    if hasattr(item, "read_value") and callable(item.read_value):
        return None  # a variable object returned as such: not the value TF 1.x fetched
    if hasattr(item, "numpy") and callable(item.numpy):
        try:
            item = item.numpy()
        except Exception:  # noqa: BLE001 - a symbolic tensor, a resource: not a value
            return None
    value = np.asarray(item) if isinstance(item, (np.ndarray, np.generic, bool, int, float, complex)) else None
    if value is None or value.dtype.kind not in "biufc":
        return None
    return value


def compare(old, new, rtol: float, atol: float) -> dict:
    """{'status': 'equal' | 'different' | 'not compared' | 'none', 'count', 'first', 'note'}."""
    if old is None or new is None:
        return {"status": "none", "count": 0, "note": "not recorded"}
    if not old and not new:
        return {"status": "none", "count": 0, "note": "neither side fetched a value"}
    count = len(old)
    if len(old) != len(new):
        return {"status": "not compared", "count": 0,
                "note": f"OLD fetched values {len(old)} times, NEW {len(new)} times: they fetch different things"}
    for k in range(count):
        a, b = old[k], new[k]
        shapes_a, shapes_b = [x.shape for x in a], [x.shape for x in b]
        if shapes_a != shapes_b:
            return {"status": "not compared", "count": k,
                    "note": f"fetch {k + 1}: OLD fetched {len(a)} values of shapes {shapes_a}, NEW {len(b)} of "
                            f"shapes {shapes_b}: they fetch different things"}
    for k in range(count):
        for j, (a, b) in enumerate(zip(old[k], new[k])):
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if np.isnan(a64).any() or np.isnan(b64).any():
                if not np.array_equal(np.isnan(a64), np.isnan(b64)):
                    return _different(k, j, a, b, None, count)
                a64, b64 = np.nan_to_num(a64), np.nan_to_num(b64)
            diff = float(np.abs(a64 - b64).max()) if a64.size else 0.0
            scale = float(np.abs(b64).max()) if b64.size else 0.0
            if diff > atol + rtol * scale:
                return _different(k, j, a, b, diff, count)
    return {"status": "equal", "count": count, "note": f"{count} fetches equal"}


def _different(k, j, a, b, diff, count):
    show = (lambda x: np.array2string(x.ravel()[:4], precision=6) + (" ..." if x.size > 4 else ""))
    return {"status": "different", "count": count, "first": k + 1,
            "note": f"fetch {k + 1}, value {j + 1}: OLD {show(a)} NEW {show(b)}"
                    + (f" (max |OLD - NEW| {diff:.6g})" if diff is not None else " (NaN on one side only)")}

"""Calls that check the coverage table's "kept" and "mapped" claims: TF 1.x's call against the TF2 tier's.

    python tools/gen_api_samples.py            # writes tools/api_samples.txt

For every function the TF2 tier keeps in its own spelling or maps through TensorFlow's upgrade
spec (`codemods.tf2.coverage.decide`), this tries argument lists from `CANDIDATES` until one
runs in TF 1.x's graph mode (`tf.compat.v1.X(...)` in a `tf.Graph`, through a Session) and gives
the same value twice (random draws are left out). With that argument list it writes the call
the translator would write (`api_changes.to_tf2`) and runs it in TF 2, eagerly and inside a
`tf.function`. One line a symbol: `name<TAB>arguments<TAB>verdict`, verdict `same` (all three
agree), `differs` or `fails in TF 2` (a claim that does not hold: a finding), or `no sample`
(no candidate ran in TF 1.x; its claim is left to the identity check of the test), or `not
called` (`NOT_CALLED`: settings, files and host utilities are not called here).
tests/test_api_coverage.py replays every `same` line, so the table's claims stay checked.
`tf.raw_ops` is not tried: its kernels are TF 1.x's and TF 2's alike (the test checks identity).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]
OUT = ROOT / "tools" / "api_samples.txt"

# Not called here: they change the process, the file system or TensorFlow's settings, or they are
# host utilities (files, flags, logging) with no tensor to compare. Their verdict says so.
NOT_CALLED = ("tf.gfile.", "tf.io.", "tf.config.", "tf.app.", "tf.flags.", "tf.logging.", "tf.test.", "tf.sysconfig.",
              "tf.saved_model.", "tf.train.", "tf.summary.", "tf.tpu.", "tf.distribute.", "tf.lite.", "tf.profiler.",
              "tf.autograph.", "tf.debugging.experimental.", "tf.compat.", "tf.experimental.", "tf.mlir.", "tf.data.",
              "tf.resource_loader.", "tf.version.", "tf.queue.", "tf.python_io.", "tf.user_ops.", "tf.xla.")
NOT_CALLED_WORDS = ("enable_", "disable_", "set_", "reset_", "print", "Print", "write", "executing_eagerly",
                    "load_", "device", "get_", "register")

CANDIDATES = (
    "x", "x, y", "i", "i, j", "b", "b, c", "v", "m", "x, 1", "x, 0", "x, axis=1", "x, [1, 0]", "v, 2", "i, 2",
    "x, y, x", "s", "x, [2, 3]", "[x, y]", "[x, y], 0", "x, x, x", "v, v", "m, m", "i, [1, 0]", "x, i",
    "x, [[0, 0], [1, 1]]", "x, 1, 2", "xs, 2", "[2, 3]", "[2, 3], 1.5", "v, 0.5", "x, 0.5", "i, 1, 0",
)


def inputs(tf, np, v1: bool) -> dict:
    """The arguments' values: constants of the current graph (TF 1.x) or eager tensors."""
    vals = {
        "x": np.array([[0.5, 1.5, 2.5], [3.0, 0.25, 1.0]], np.float32),
        "y": np.array([[1.0, 0.5, 2.0], [0.75, 1.25, 3.0]], np.float32),
        "xs": np.array([[0.5, 1.5, 2.5, 1.0], [3.0, 0.25, 1.0, 2.0]], np.float32),
        "i": np.array([[1, 2, 3], [4, 5, 6]], np.int32),
        "j": np.array([[2, 1, 3], [1, 5, 2]], np.int32),
        "b": np.array([[True, False, True], [False, False, True]]),
        "c": np.array([[True, True, False], [False, True, True]]),
        "v": np.array([0.1, 0.7, 0.2], np.float32),
        "m": np.array([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 1.5]], np.float32),
        "s": np.array([b"a b", b"cd"]),
    }
    return {k: tf.constant(a) for k, a in vals.items()}


def _numbers(np, value):
    import tensorflow as tf
    flat = tf.nest.flatten(value, expand_composites=True)
    return [np.asarray(getattr(t, "numpy", lambda t=t: t)()) for t in flat]


def _equal(np, a, b) -> bool:
    if len(a) != len(b):
        return False
    for p, q in zip(a, b):
        if p.shape != q.shape or p.dtype != q.dtype:
            return False
        if p.dtype.kind in "fc":
            if not np.allclose(p, q, rtol=1e-5, atol=1e-6, equal_nan=True):
                return False
        elif not np.array_equal(p, q):
            return False
    return True


def tf1_value(tf, np, name: str, args: str):
    """TF 1.x's value of `tf.compat.v1.<name>(args)` in graph mode, or None if it does not run there."""
    with tf.Graph().as_default():
        env = {"tf": tf.compat.v1, **inputs(tf, np, True)}
        try:
            out = eval(f"tf.{name[3:]}({args})", env)  # noqa: S307 - our own candidate text
            flat = tf.nest.flatten(out, expand_composites=True)
            if not flat or not all(isinstance(t, tf.Tensor) for t in flat):
                return None
            if any(t is a for t in flat for a in env.values()):
                return None  # the argument given back: nothing computed to compare
            if any(op.op_def.is_stateful for op in tf.compat.v1.get_default_graph().get_operations()):
                return None  # a random draw or a variable: no single value to compare
            with tf.compat.v1.Session() as sess:
                first = sess.run(flat)
                second = sess.run(flat)
        except Exception:
            return None
    first = [np.asarray(a) for a in first]
    if not _equal(np, first, [np.asarray(a) for a in second]):
        return None  # a random draw: no single value to compare
    return first


def tf2_code(name: str, args: str) -> str:
    import libcst as cst
    from codemods.tf2.api_changes import to_tf2
    call = cst.parse_expression(f"{name}({args})")
    new_name, new_call = to_tf2(name, call)
    return cst.Module([]).code_for_node(new_call.with_changes(func=cst.parse_expression(new_name)))


def check(tf, np, name: str, args: str, expected) -> str:
    try:
        code = tf2_code(name, args)
    except Exception as exc:  # the translator refuses these arguments: not this claim's sample
        return f"refused: {exc}"
    try:
        eager = _numbers(np, eval(code, {"tf": tf, **inputs(tf, np, False)}))  # noqa: S307
        # the arguments made inside the function, as a step's own tensors are (not captured)
        traced = _numbers(np, tf.function(lambda: eval(code, {"tf": tf, **inputs(tf, np, False)}))())  # noqa: S307
    except Exception as exc:
        return f"fails in TF 2: {type(exc).__name__}"
    if _equal(np, eager, expected) and _equal(np, traced, expected):
        return "same"
    return "differs"


def claims() -> list:
    import gen_api_surface
    from codemods.tf2.coverage import decide
    out = []
    for name, (kind, _) in gen_api_surface.read().items():
        if kind != "function" or name.startswith("tf.raw_ops."):
            continue
        if decide(name).form in ("kept", "mapped"):
            out.append(name)
    return out


def called(name: str) -> bool:
    last = name.rsplit(".", 1)[1]
    return not name.startswith(NOT_CALLED) and not last.startswith(NOT_CALLED_WORDS)


def sample(tf, np, name: str) -> tuple:
    if not called(name):
        return "", "not called (a setting, a file or a host utility)"
    for args in CANDIDATES:
        expected = tf1_value(tf, np, name, args)
        if expected is None:
            continue
        verdict = check(tf, np, name, args, expected)
        if verdict.startswith("refused"):
            continue
        return args, verdict
    return "", "no sample"


def worker(start: int, path: Path) -> int:
    """Probe the claims from index `start` on, one line a symbol appended to `path` as it is found (a
    call that aborts the process, as some kernels do on a wrong shape, loses only its own symbol)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import numpy as np
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    names = claims()
    os.chdir(tempfile.mkdtemp(prefix="api-samples-"))  # whatever a call writes lands here
    with path.open("a", encoding="utf-8") as out:
        for name in names[start:]:
            args, verdict = sample(tf, np, name)
            out.write(f"{name}\t{args}\t{verdict}\n")
            out.flush()
    return 0


def main() -> int:
    import subprocess
    names = claims()
    partial = OUT.with_suffix(".partial")
    partial.write_text("", encoding="utf-8")
    while True:
        done = partial.read_text(encoding="utf-8").count("\n")
        if done >= len(names):
            break
        print(f"{done}/{len(names)}", file=sys.stderr)
        subprocess.run([sys.executable, __file__, "--worker", str(done), str(partial)],
                       stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=False)
        if partial.read_text(encoding="utf-8").count("\n") == done:  # it aborted on this symbol
            with partial.open("a", encoding="utf-8") as out:
                out.write(f"{names[done]}\t\tno sample (a candidate aborts the process)\n")
    partial.replace(OUT)
    print(f"{OUT}: {len(names)} functions")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker(int(sys.argv[2]), Path(sys.argv[3])))
    sys.exit(main())

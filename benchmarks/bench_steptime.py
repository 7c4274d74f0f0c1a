"""Training step time: each TF1 fixture in graph mode (Session) vs its TF2 migration (tf.function).

For every `fixtures/legacy/r*.py` and `fixtures/bench/*.py`, three numbers, each the median over repeats of a fresh
subprocess's median step time after warm-up (`_steptime_driver.py` times the steps in-process):

  baseline  the TF1 original under `tf1clip run` (graph mode, Session.run of the train op);
  ours      its migration by `tf1clip migrate --to tf2` (tf.function steps, which the output
            calls through their concrete functions), or, where
            the codemod falls back to the compat tier (still a Session), the hand-written
            `fixtures/tf2` version, said so in the note (legacy fixtures only: a fixtures/bench
            model the TF2 tier refuses is reported as such, never hand-written);
  ours XLA  the same TF2 script with tf.function defaulting to jit_compile=True (second row).

One more row, the call floor: the same trivial step (two sums of the two fed batches times one
scalar weight, one plain gradient-descent kernel) written for each side, a TF1 Session script
and a TF2 script calling its concrete function with the same numpy batches: what the framework
alone costs a step, whatever the model. It is measured first, in the same run, and it is the goal
of the legacy fixtures' rows: their models are a few hundred parameters, their steps a fraction
of a millisecond, so their step time is the framework's per-call cost, and a migration at the
floor's ratio adds no overhead of its own. The compute-bound models of `fixtures/bench` (the
corpus's MNIST CNN, batch 128) are held to ≤ 1.0×: there the kernels are the step.

A step is the start-to-start interval between consecutive train steps: what the training loop
experiences (feeding, the step, the script's other fetches and printing); the train call
alone is in the samples. The fixtures train 10 steps; copies in a temp dir train `steps`
(COMPUTE_STEPS for fixtures/bench; same on both sides). Fixture files are never edited.

Usage: python benchmarks/bench_steptime.py [--quick] [--repeats N]   (prints the rows as JSON)
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import tempfile
import time
from pathlib import Path

import _common

SECTION = "step time"
METRIC = "ms/step (median)"
BASELINE_LABEL = "TF1 graph (Session)"
OURS_LABEL = "TF2 migration (tf.function)"
XLA_LABEL = "TF2 migration (tf.function, jit_compile=True)"
DRIVER = Path(__file__).resolve().parent / "_steptime_driver.py"
LEGACY, HAND_TF2 = _common.FIXTURES / "legacy", _common.FIXTURES / "tf2"
COMPUTE = _common.FIXTURES / "bench"  # compute-bound models: goal ≤ 1.0x, not the call floor
QUICK_MODELS = ("r02_clip_by_global_norm", "r07_mnist_mlp", "cnn_mnist_clip")
WARMUP = 10
# Steps of a compute-bound model ((quick, full)): ~0.1 s each on this machine, so fewer.
COMPUTE_STEPS = (15, 50)
# The one per-fixture knob: fixtures that train other than `for step in range(10):` are
# lengthened through their command line. R7's argument is its number of epochs; the synthetic
# MNIST set has 500 training examples after the validation split, 5 batches of 100 an epoch.
STEP_ARGS = {"r07_mnist_mlp": lambda steps: [str(max(1, steps // 5))]}


def run(quick: bool, log, repeats: int | None = None) -> list[dict]:
    """The section's rows: the call floor, then two per fixture model (tf.function, and
    tf.function with XLA)."""
    steps, default_repeats = (40, 1) if quick else (200, 3)
    repeats = repeats or default_repeats
    compute_steps = COMPUTE_STEPS[0] if quick else COMPUTE_STEPS[1]
    sources = {p.stem: p for folder in (LEGACY, COMPUTE) for p in sorted(folder.glob("*.py"))
               if folder != LEGACY or p.stem.startswith("r")}
    if quick:
        sources = {m: p for m, p in sources.items() if m in QUICK_MODELS}
    with tempfile.TemporaryDirectory(prefix="tf1clip-steptime-") as tmp:
        tmp = Path(tmp)
        floor = _bench_floor(tmp / "floor", steps, repeats, log)
        rows = [floor]
        migrated = {folder: _migrate(folder, tmp / "migrated" / folder.name, log) for folder in (LEGACY, COMPUTE)}
        _load_make_mnist().write_mnist(tmp / "MNIST_data")  # R7 reads MNIST_data/ in its cwd
        for stem, source in sources.items():
            if source.parent == COMPUTE:
                goal = {"target": 1.0}
            elif floor["ratio"] is None:
                goal = {"target": None}
            else:
                goal = {"target": floor["ratio"], "goal": f"≤ call floor ({floor['ratio']:.2f}×)"}
            rows += _bench_model(source, tmp, migrated[source.parent], compute_steps if source.parent == COMPUTE
                                 else steps, repeats, log, goal)
    return rows


def _migrate(folder: Path, out: Path, log):
    """Run the codemod once over `folder`; ({stem: tier}, error line or None, out)."""
    where = folder.relative_to(_common.ROOT)
    log(f"tf1clip migrate {where} --to tf2")
    result = _common.measure([_common.PYTHON, "-m", "tf1clip", "migrate", where, "--to", "tf2",
                              "--outtree", out], cwd=_common.ROOT, timeout=600, check=False)
    text = result.stdout + "\n" + result.stderr
    tiers = {Path(m[1]).stem: m[2] for m in re.finditer(r"^\S+\s+(\S+\.py) \((TF2|compat) tier", text, re.M)}
    error = None if result.returncode == 0 else f"tf1clip migrate failed: {_error_line(text)}"
    return tiers, error, out


def _bench_model(source, tmp, migrated, steps, repeats, log, goal) -> list[dict]:
    """The two rows of one fixture model; `goal` has the first row's target (and its label)."""
    stem, (tiers, migrate_error, out) = source.stem, migrated
    base_note, tf2_source, tf2_error = "", out / f"{stem}.py", migrate_error
    if tiers.get(stem) == "compat":
        tf2_source = HAND_TF2 / f"{stem}.py"
        base_note = "codemod falls back to compat; hand-written fixtures/tf2 version timed"
        if source.parent != LEGACY:
            tf2_error = "the TF2 tier falls back to compat: no TF2 version to time (see tf1clip migrate's report)"
        elif not tf2_source.exists():
            tf2_error = "codemod falls back to compat and there is no fixtures/tf2 version"
    elif tf2_error is None and not tf2_source.exists():
        tf2_error = f"tf1clip migrate wrote no {tf2_source.name}"
    args = STEP_ARGS.get(stem, lambda n: [])(steps)
    scripts, errors = {}, {}
    for side, script, failed in (("tf1", source, None), ("tf2", tf2_source, tf2_error)):
        try:
            if failed:
                raise RuntimeError(failed)
            scripts[side] = _lengthened(script, tmp / side / f"{stem}.py", steps, bool(args))
        except (OSError, RuntimeError) as exc:
            errors[side] = str(exc)
    scripts["tf2-xla"] = scripts.get("tf2")
    if "tf2" in errors:
        errors["tf2-xla"] = errors["tf2"]

    runs = {side: [] for side in ("tf1", "tf2", "tf2-xla")}
    for repeat in range(repeats):  # sides interleaved, so slow phases of the machine hit all three
        for side, results in runs.items():
            if errors.get(side):
                continue
            try:
                results.append(_run_driver(side, scripts[side], args, tmp, steps))
                log(f"{stem} {side} run {repeat + 1}/{repeats}: "
                    f"{results[-1]['step_ms']:.3f} ms/step (call {results[-1]['call_ms']:.3f} ms)")
            except RuntimeError as exc:
                errors[side] = str(exc)
                log(f"{stem} {side} failed: {exc}")

    def value(side):
        return None if errors.get(side) else _common.median([r["step_ms"] for r in runs[side]])

    def samples(side):
        return {"steps": steps, "warmup": WARMUP, "baseline_runs_ms": [r["step_ms"] for r in runs["tf1"]],
                "ours_runs_ms": [r["step_ms"] for r in runs[side]],
                "baseline_call_ms": [r["call_ms"] for r in runs["tf1"]],
                "ours_call_ms": [r["call_ms"] for r in runs[side]]}

    def note(side):
        parts = [base_note] if base_note else []
        if errors.get("tf1"):
            parts.append(f"baseline failed: {errors['tf1']}")
        if errors.get(side):
            xla_only = side == "tf2-xla" and not errors.get("tf2")
            parts.append(f"{'XLA n/a' if xla_only else 'ours failed'}: {errors[side]}")
        return "; ".join(parts)

    return [
        _common.row(SECTION, stem, METRIC, BASELINE_LABEL, value("tf1"), OURS_LABEL, value("tf2"),
                    better="lower", note=note("tf2"), samples=samples("tf2"), **goal),
        _common.row(SECTION, f"{stem} (XLA)", METRIC, BASELINE_LABEL, value("tf1"), XLA_LABEL,
                    value("tf2-xla"), better="lower", note=note("tf2-xla"), samples=samples("tf2-xla")),
    ]


_FLOOR_DATA = """import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
data_x = rng.randn(64, 8).astype(np.float32)  # the fixtures' batches: 16 x 8 and 16 x 3
data_y = rng.randn(64, 3).astype(np.float32)
"""
FLOOR_SCRIPTS = {  # the same trivial step on each side: framework cost only
    "tf1": _FLOOR_DATA + """x = tf.placeholder(tf.float32, [None, 8])
y = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(0.0)
loss = w * (tf.reduce_sum(x) + tf.reduce_sum(y))
train_op = tf.train.GradientDescentOptimizer(1e-6).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(10):
        batch = slice((step % 4) * 16, (step % 4 + 1) * 16)
        _, l = sess.run([train_op, loss], feed_dict={x: data_x[batch], y: data_y[batch]})
""",
    "tf2": _FLOOR_DATA + """w = tf.Variable(0.0)
optimizer = tf.compat.v1.train.GradientDescentOptimizer(1e-6)  # the same single kernel as TF1's


@tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None, 3], tf.float32)])
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = w * (tf.reduce_sum(x) + tf.reduce_sum(y))
    optimizer.apply_gradients([(tape.gradient(loss, w), w)])
    return loss


train_step = train_step.get_concrete_function()
for step in range(10):
    batch = slice((step % 4) * 16, (step % 4 + 1) * 16)
    l = train_step(data_x[batch], data_y[batch])
""",
}


def _bench_floor(tmp: Path, steps: int, repeats: int, log) -> dict:
    """The call-floor row: FLOOR_SCRIPTS' trivial step, TF1 Session vs TF2 concrete function."""
    runs, errors, scripts = {"tf1": [], "tf2": []}, {}, {}
    for side, text in FLOOR_SCRIPTS.items():
        source = tmp / "src" / f"floor_{side}.py"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(text, encoding="utf-8")
        scripts[side] = _lengthened(source, tmp / side / "floor.py", steps, False)
    for repeat in range(repeats):
        for side in runs:
            if side in errors:
                continue
            try:
                runs[side].append(_run_driver(side, scripts[side], [], tmp, steps))
                log(f"call floor {side} run {repeat + 1}/{repeats}: {runs[side][-1]['step_ms']:.3f} ms/step")
            except RuntimeError as exc:
                errors[side] = str(exc)
                log(f"call floor {side} failed: {exc}")
    value = {side: None if side in errors else _common.median([r["step_ms"] for r in runs[side]]) for side in runs}
    note = "; ".join([*(f"{side} failed: {e}" for side, e in errors.items()),
                      "the same trivial step on both sides (w * (sum(x) + sum(y)), one GradientDescent "
                      "kernel on one scalar), fed the fixtures' 16x8 and 16x3 numpy batches: what each "
                      "framework costs a step before any model; written here, not migrated"])
    return _common.row(SECTION, "call floor (trivial step)", METRIC, BASELINE_LABEL, value["tf1"],
                       "TF2 concrete function, same step", value["tf2"], better="lower", note=note,
                       samples={"steps": steps, "warmup": WARMUP,
                                "baseline_runs_ms": [r["step_ms"] for r in runs["tf1"]],
                                "ours_runs_ms": [r["step_ms"] for r in runs["tf2"]]})


def _lengthened(source: Path, target: Path, steps: int, by_args: bool) -> Path:
    """Copy `source` to `target` with its `range(10)` training loop raised to `steps`."""
    text, count = re.subn(r"\brange\(10\)", f"range({steps})", source.read_text(encoding="utf-8"))
    if count == 0 and not by_args:
        raise RuntimeError(f"{source.name}: no `range(10)` training loop to lengthen")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def _run_driver(mode, script, args, cwd, steps) -> dict:
    """One fresh process timing `script`; its result dict, or RuntimeError with the error line."""
    extra = {"PYTHONPATH": os.pathsep.join(filter(None, [str(_common.ROOT), os.environ.get("PYTHONPATH")]))}
    measured = _common.measure([_common.PYTHON, DRIVER, mode, WARMUP, script, *args], cwd=cwd,
                               extra_env=extra, timeout=900, check=False)
    lines = [l for l in measured.stdout.splitlines() if l.startswith("@@STEPTIME@@ ")]
    if measured.returncode != 0 or not lines:
        raise RuntimeError(_error_line(measured.stderr or measured.stdout)
                           or f"exited {measured.returncode} without a result")
    result = json.loads(lines[-1].split(" ", 1)[1])
    if result["steps"] != steps or result["step_ms"] is None:
        raise RuntimeError(f"{result['steps']} train steps detected, {steps} expected")
    return result


def _error_line(text: str) -> str:
    """The line naming the error (`SomeError: ...`), else the last non-empty line."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    named = [l for l in lines if re.match(r"^[\w.]*(Error|Exception|Exit)\b", l)]
    line = re.sub(r"^(\w+\.)+(?=\w+:)", "", (named or lines or [""])[-1])  # module path of the class
    return re.sub(r"\[_XlaMustCompile[^\]]*\]", "", line)[:300]  # XLA's attribute dump


def _load_make_mnist():
    spec = importlib.util.spec_from_file_location("make_mnist", _common.FIXTURES / "data" / "make_mnist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 models, 40 steps, 1 repeat (smoke test)")
    parser.add_argument("--repeats", type=int, help="fresh-process runs per side (default 3, quick 1)")
    opts = parser.parse_args()
    started = time.perf_counter()
    result = run(opts.quick, lambda msg: _common.log_to_stderr(f"[steptime] {msg}"), opts.repeats)
    print(json.dumps(result, indent=1))
    _common.log_to_stderr(f"[steptime] done in {time.perf_counter() - started:.1f} s")

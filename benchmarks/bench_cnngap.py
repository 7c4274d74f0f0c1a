"""Where the migrated CNN's step time goes: the TF1 session against TF2 forms of the same step.

The step-time section's CNN row (fixtures/bench/cnn_mnist_clip.py against its `--to tf2`
migration) compares two processes, whose speed drifts by a few percent between runs: as much as
the gap. This section runs every form of the step in one process, in turns (`_cnngap_driver.py`),
so that drift falls on all of them alike, and asks one question: does the gap come from how
the gradient graph is gated? Under TF 1.x, `compute_gradients` gates with GATE_OP, whose
`tuple` identities keep TF's oneDNN pass from merging each conv's bias gradient into its filter
gradient's kernel; a GradientTape's graph is not gated, so it merges. Rows (baseline: the
session with GATE_OP): the session ungated, the tape, the tape with only the conv bias
gradients gated, gated tf.gradients. Each row's note gives the largest difference of its
gradients from the session's, one step from identical weights: the merged kernel sums the bias
gradient in another order.

Each of `repeats` fresh processes runs `rounds` rounds of `steps` steps of every form; a value
is the median of all rounds' mean step times.
Usage: python bench_cnngap.py [--quick]
"""
from __future__ import annotations

import json
import statistics
import sys
import time

import _common

SECTION = "CNN step, gating taken apart"
DRIVER = _common.ROOT / "benchmarks" / "_cnngap_driver.py"
FORMS = {  # form -> row label
    "session-none": "TF 1.x Session, compute_gradients(gate_gradients=GATE_NONE)",
    "tape": "TF2 tf.function, GradientTape (the TF2 tier's form)",
    "tape-gated": "TF2 tf.function, GradientTape, each conv's bias gradient gated as GATE_OP does",
    "gradients": "TF2 tf.function, tf.gradients(gate_gradients=True)",
}
BASELINE = "TF 1.x Session, compute_gradients (GATE_OP, its default)"


def _config(quick):
    return ({"batch": 16, "rounds": 2, "steps": 2, "warmup": 2, "repeats": 1, "timeout": 300} if quick else
            {"batch": 128, "rounds": 30, "steps": 10, "warmup": 10, "repeats": 3, "timeout": 900})


def _runs(c, log):
    runs = []
    for rep in range(c["repeats"]):
        args = [f"--{k}={c[k]}" for k in ("batch", "rounds", "steps", "warmup")]
        done = _common.measure([_common.PYTHON, DRIVER, *args], cwd=_common.ROOT, timeout=c["timeout"],
                               check=True, sample_tree=False)
        result = json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])
        runs.append(result)
        log(f"  cnngap run {rep + 1}/{c['repeats']}: "
            + ", ".join(f"{f} {statistics.median(v):.2f}" for f, v in result["ms"].items()) + " ms/step")
    return runs


def run(quick: bool, log, repeats: int | None = None) -> list[dict]:
    c = _config(quick)
    c["repeats"] = repeats or c["repeats"]
    log(f"CNN gating: {len(FORMS) + 1} forms x {c['rounds']} rounds x {c['repeats']} process(es)")
    runs = _runs(c, log)
    pooled = {f: [ms for r in runs for ms in r["ms"][f]] for f in ["session", *FORMS]}
    base = statistics.median(pooled["session"])
    how = ((f"QUICK: batch {c['batch']}; " if quick else f"batch {c['batch']}, 28x28x1; ")
           + f"median of {len(pooled['session'])} rounds' mean of {c['steps']} steps, {c['repeats']} process(es), "
             f"forms in turns in each")
    rows = []
    for form, label in FORMS.items():
        paired = statistics.quantiles([ours / b for ours, b in zip(pooled[form], pooled["session"])], n=4)
        diffs = [d for r in runs for d in r["max_abs_diff"][form].items()]
        worst = {}
        for name, d in diffs:
            worst[name] = max(worst.get(name, 0.0), d)
        moved = ", ".join(f"{name} {d:.1e}" for name, d in worst.items() if d > 0) or "none (bit-identical)"
        note = (f"{how}; round-by-round ratio quartiles {paired[0]:.3f} / {paired[1]:.3f} / {paired[2]:.3f}; "
                f"gradients that differ from the session's, largest |difference|: {moved}")
        rows.append(_common.row(SECTION, f"CNN 28x28 b{c['batch']}: {form}", "ms/step (median)", BASELINE, base,
                                label, statistics.median(pooled[form]), note=note,
                                samples={"baseline_rounds": pooled["session"], "ours_rounds": pooled[form],
                                         "max_abs_diff": worst}))
    return rows


if __name__ == "__main__":
    start = time.perf_counter()
    out = run("--quick" in sys.argv[1:], _common.log_to_stderr)
    print(json.dumps(out, indent=1))
    _common.log_to_stderr(f"bench_cnngap: {time.perf_counter() - start:.1f}s")

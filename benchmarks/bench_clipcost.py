"""What gradient clipping costs: step time and peak memory, clipped vs not, in fresh processes.

1. A 10.5M-parameter MLP (quick: 1.2M), Adam: no clipping vs clip_by_global_norm(5.0), as a
   TF2 tf.function step and as a TF1 graph-mode Session step, and tf1clip.ClippedOptimizer vs
   no clipping. Goal: the wait floor + 2% (below).
2. The same graph step: tf1clip.ClippedOptimizer vs the clip written by hand; and the clip taken
   apart against no clipping: its extra read (the norm computed in the step, nothing waiting for
   it); its wait (every update waits for all gradients, nothing scaled; the TF2 step too); the
   wait with the norm computed (the clip but its multiply; TF2 too); and its multiply pass alone
   (every gradient-sized tensor times the clip factor into a new buffer, alone in a Session
   step; the clip's own multiply writes into the gradients' buffers, gated or not, as a trace of
   the allocations shows). The clip by hand also runs on ungated gradients
   (compute_gradients(gate_gradients=GATE_NONE)); on a conv with a bias those differ from the
   gated clip's in the last bits (oneDNN merges the bias gradient into the filter gradient's kernel).

The wait floor. Without clipping, each variable's update starts as soon as its own gradient
exists, overlapping the rest of backprop. A global-norm clip cannot start any update before
the norm over all gradients is known, so every update waits for the whole backward pass: a
synchronisation no implementation of the clip can avoid. The "wait" variant measures that
alone: every update held back by a control dependency on the global norm, nothing scaled. The
norm itself is not computed there: grappler turns a stateless op that only a control edge
consumes into a NoOp, so the updates wait for the gradients and nothing reads them (the "norm
and wait" rows fetch the norm to keep it). Its ratio to no clipping, measured in the same run,
is the floor. What the clip may cost beyond it (reading the gradients for the norm, the scaling
multiply) is held to 2% of the unclipped step: goal = wait ratio + 0.02.
3. A 1M-row embedding (quick: 50k) with sparse gradients, GradientDescent: peak memory and step
   time of no clip vs the sparse clip (ClippedOptimizer keeps IndexedSlices sparse), and of the
   sparse clip vs the densified clip naive code writes (tf.convert_to_tensor first). A separate
   run checks once that the sparse and densified clips give the same weights.

Each variant runs `_clipcost_driver.py` in its own subprocess, `repeats` times, interleaved;
a row's value is the median of per-run median step times (or of per-run peak RSS).
Usage: python bench_clipcost.py [--quick]
"""
from __future__ import annotations

import json
import os
import sys
import time

import _common

SECTION = "clipping cost"
DRIVER = _common.ROOT / "benchmarks" / "_clipcost_driver.py"
BATCH = 256
VARIANTS = {  # key -> driver arguments
    "tf2-none": ["mlp-tf2", "none"], "tf2-clip": ["mlp-tf2", "global"], "tf2-wait": ["mlp-tf2", "wait"],
    "tf2-normwait": ["mlp-tf2", "normwait"],
    "graph-none": ["mlp-graph", "none"], "graph-hand": ["mlp-graph", "hand"],
    "graph-ungated": ["mlp-graph", "ungated"],
    "graph-wrapped": ["mlp-graph", "wrapped"],
    "graph-norm": ["mlp-graph", "norm"], "graph-wait": ["mlp-graph", "wait"],
    "graph-normwait": ["mlp-graph", "normwait"],
    "graph-mulpass": ["mlp-graph", "mulpass"],
    "emb-none": ["emb", "none"], "emb-sparse": ["emb", "sparse"], "emb-dense": ["emb", "dense"],
}


def _config(quick):
    c = {"inputs": 512, "width": 640, "rows": 50_000, "repeats": 1, "warmup": 3, "steps": 10, "emb_steps": 20,
         "timeout": 120} if quick else \
        {"inputs": 1024, "width": 2048, "rows": 1_000_000, "repeats": 3, "warmup": 5, "steps": 25, "emb_steps": 50,
         "timeout": 900}
    w = c["width"]
    c["mlp_params"] = c["inputs"] * w + w + 2 * (w * w + w) + w * 10 + 10
    return c


def _short(n):
    return f"{n / 1e6:.1f}M" if n >= 1e6 and n % 1_000_000 else f"{n // 1_000_000}M" if n >= 1e6 else f"{n // 1000}k"


def _driver_cmd(key, c):
    args = list(VARIANTS.get(key, [key]))
    if args[0].startswith("mlp"):
        args += ["--inputs", c["inputs"], "--width", c["width"], "--steps", c["steps"]]
    else:
        args += ["--rows", c["rows"], "--steps", c["emb_steps"]]
    return [_common.PYTHON, DRIVER, *args, "--batch", BATCH, "--warmup", c["warmup"]]


def _run_once(key, c):
    """(driver's JSON result with 'maxrss_mb' = the kernel's peak RSS, None) or (None, error)."""
    try:
        path = os.pathsep.join(filter(None, [str(_common.ROOT), os.environ.get("PYTHONPATH")]))
        # No tree sampler: the driver is one process, whose exact peak the kernel reports.
        done = _common.measure(_driver_cmd(key, c), cwd=_common.ROOT, extra_env={"PYTHONPATH": path},
                               timeout=c["timeout"], check=False, sample_tree=False)
        code, stdout, stderr, maxrss = done.returncode, done.stdout, done.stderr, done.maxrss_mb
    except Exception as exc:  # noqa: BLE001 - a broken run is reported, not raised
        return None, f"{key}: {type(exc).__name__}: {exc}"
    lines = [l for l in stdout.splitlines() if l.startswith("{")]
    if code != 0 or not lines:
        tail = [l for l in (stderr or stdout).splitlines() if l.strip()]
        return None, f"{key} exited {code}: {tail[-1].strip() if tail else 'no output'}"
    result = json.loads(lines[-1])
    result["maxrss_mb"] = maxrss
    return result, None


def _collect(c, log):
    """Every variant `repeats` times, interleaved; a variant stops after its first failure."""
    runs = {k: [] for k in VARIANTS}
    errors = {}
    for rep in range(c["repeats"]):
        for key in VARIANTS:
            if key in errors:
                continue
            result, err = _run_once(key, c)
            if err:
                errors[key] = err
                log(f"  clipcost {key} run {rep + 1}: FAILED {err}")
                continue
            runs[key].append(result)
            log(f"  clipcost {key} run {rep + 1}/{c['repeats']}: {result['median_ms']:.3f} ms/step, "
                f"peak RSS {result['maxrss_mb']:.0f} MB")
    return runs, errors


def _check(c, log):
    """The sparse-vs-densified numerical check, once, in its own process: (ok, note)."""
    result, err = _run_once("emb-check", c)
    if err:
        log(f"  clipcost emb-check: FAILED {err}")
        return False, f"sparse/dense check failed to run: {err}"
    ok = result["ok"] and result["max_abs_diff"] < 1e-6
    note = (f"check {'OK' if ok else 'FAILED'}: one step from identical weights, sparse vs densified clip "
            f"max |dw| = {result['max_abs_diff']:.1e} (need < 1e-6; largest update {result['max_update']:.3f}), "
            f"pre-clip norm {result['sparse_norm']:.1f} vs {result['dense_norm']:.1f} (> 5: clip active), "
            f"sparse graph scatters (ResourceScatterAdd, no UnsortedSegmentSum): {result['sparse_kept']}")
    log(f"  clipcost emb-check: {note}")
    return ok, note


def _side(runs, errors, key, field):
    if key in errors:
        return None, [], errors[key]
    values = [r[field] for r in runs[key]]
    return _common.median(values), values, ""


def _row(runs, errors, name, metric, field, base_key, base_label, ours_key, ours_label, note, samples,
         target=None, void="", goal=""):
    base, base_runs, base_err = _side(runs, errors, base_key, field)
    ours, ours_runs, ours_err = _side(runs, errors, ours_key, field)
    if void:  # the two sides cannot be compared: report neither
        base = ours = None
    note = "; ".join(filter(None, [void, base_err, ours_err, note]))
    norms = {k: [(r["grad_norm_first"], r["grad_norm_last"]) for r in runs[k]] for k in (base_key, ours_key)}
    samples = dict(samples, baseline_runs=base_runs, ours_runs=ours_runs,
                   grad_norm_first_last={"baseline": norms[base_key], "ours": norms[ours_key]})
    return _common.row(SECTION, name, metric, base_label, base, ours_label, ours, better="lower",
                       target=target, note=note, samples=samples, goal=goal)


WAIT_MARGIN = 0.02  # what the clip may cost beyond its wait floor, as a share of the unclipped step


def _wait_goal(wait_row: dict) -> dict:
    """Target and goal label of a clip row judged against `wait_row`'s ratio (the floor)."""
    if wait_row["ratio"] is None:
        return {}
    floor = wait_row["ratio"]
    return {"target": floor + WAIT_MARGIN, "goal": f"≤ wait floor ({floor:.2f}×) + {WAIT_MARGIN:g}"}


def run(quick: bool, log, repeats: int | None = None) -> list[dict]:
    c = _config(quick)
    c["repeats"] = repeats or c["repeats"]
    log(f"clipping cost: {len(VARIANTS)} variants x {c['repeats']} run(s) + 1 check"
        f"{' (quick: small model and table)' if quick else ''}")
    runs, errors = _collect(c, log)
    check_ok, check_note = _check(c, log)

    p, rows = _short(c["mlp_params"]), _short(c["rows"])
    ms = "ms/step (median)"

    def how(steps):
        return (f"median of {c['repeats']} fresh-process run(s), each the median of {steps} steps after "
                f"{c['warmup']} warm-up")
    quick_note = f"QUICK: {p}-param MLP, not the 10.5M model; " if quick else ""
    mlp_note = (quick_note + how(c["steps"]) + f"; batch {BATCH}, 8 random batches in turn; "
                "loss x1000 so the pre-clip global norm stays > 5 (clip active)")
    mlp = {"params": c["mlp_params"], "layers": [c["inputs"], c["width"], c["width"], c["width"], 10],
           "batch": BATCH, "warmup": c["warmup"], "steps": c["steps"], "dtype": "float32"}
    emb_note = (("QUICK: 50k-row table, not 1M; " if quick else "")
                + f"GradientDescent(0.1): its sparse apply is a true scatter (Adam's would rewrite two full-size "
                  f"slots each step); {BATCH} distinct ids per step, 64-128-10 head; "
                + how(c["emb_steps"]) + "; 8 random id batches in turn")
    emb = {"rows": c["rows"], "dim": 64, "params": c["rows"] * 64 + 64 * 128 + 128 + 128 * 10 + 10,
           "batch_ids": BATCH, "warmup": c["warmup"], "steps": c["emb_steps"]}
    void = "" if check_ok else "sparse and densified clips disagree or were not checked: not compared"
    no_clip_sparse = "no clipping (GradientDescentOptimizer.minimize, sparse scatter update)"
    sparse = "ClippedOptimizer(GradientDescent, 'global_norm', 5.0): IndexedSlices stay sparse"
    dense = "naive: tf.convert_to_tensor(IndexedSlices) -> clip_by_global_norm(5.0) -> apply (dense)"
    no_clip_tf2 = "no clipping (GradientTape + Keras Adam, tf.function)"
    no_clip_graph = "no clipping (AdamOptimizer.minimize)"
    by_hand = "compute_gradients -> clip_by_global_norm(5.0) -> apply_gradients"
    wait = ("every update waits for all gradients (a control dependency on their global norm, which grappler "
            "prunes: nothing computed, nothing scaled)")
    normwait = "the global norm computed (fetched) and every update waiting for it; nothing scaled"
    normwait_note = ("; the clip without its multiply: ratio minus the wait floor's = the norm's read, the clip "
                     "row's minus this one's = the multiply")
    wrapped = "tf1clip.ClippedOptimizer(AdamOptimizer, 'global_norm', 5.0).minimize"
    tf2_wait = _row(runs, errors, f"{p}-param MLP, TF2: the clip's wait alone (wait floor)", ms, "median_ms",
                    "tf2-none", no_clip_tf2, "tf2-wait", wait, mlp_note + "; the floor of the TF2 clip row", mlp)
    graph_wait = _row(runs, errors, f"{p}-param MLP, TF1 graph: the clip's wait alone (wait floor)", ms,
                      "median_ms", "graph-none", no_clip_graph, "graph-wait", wait,
                      mlp_note + "; the floor of the TF1 graph clip rows; minimize starts each variable's update as "
                      "soon as its gradient exists, overlapping the rest of backprop", mlp)
    same_none = "; the no-clipping runs are the ones of the wait-floor row above"
    mulpass = _row(runs, errors, f"{p}-param MLP, TF1 graph: the clip's multiply pass alone", ms, "median_ms",
                   "graph-none", no_clip_graph, "graph-mulpass",
                   f"one tensor the size of each gradient ({p} values) times the clip factor into a new buffer, alone in a "
                   "Session step",
                   mlp_note + "; ratio = the pass's share of the unclipped step, an upper bound of what the clip's "
                   "multiply costs (the clip's writes into the gradients' own buffers)", mlp)
    return [
        tf2_wait,
        _row(runs, errors, f"{p}-param MLP, TF2: the clip's norm and wait", ms, "median_ms", "tf2-none", no_clip_tf2,
             "tf2-normwait", normwait, mlp_note + same_none + normwait_note, mlp),
        _row(runs, errors, f"{p}-param MLP, TF2 tf.function: global-norm clip", ms, "median_ms",
             "tf2-none", no_clip_tf2,
             "tf2-clip", "tf.clip_by_global_norm(grads, 5.0) before apply_gradients", mlp_note + same_none, mlp,
             **_wait_goal(tf2_wait)),
        graph_wait,
        _row(runs, errors, f"{p}-param MLP, TF1 graph: the clip's norm and wait", ms, "median_ms", "graph-none",
             no_clip_graph, "graph-normwait", normwait, mlp_note + same_none + normwait_note, mlp),
        _row(runs, errors, f"{p}-param MLP, TF1 graph Session: global-norm clip", ms, "median_ms",
             "graph-none", no_clip_graph,
             "graph-hand", by_hand, mlp_note + same_none, mlp, **_wait_goal(graph_wait)),
        _row(runs, errors, f"{p}-param MLP, TF1 graph Session: global-norm clip, gradients ungated", ms,
             "median_ms", "graph-none", no_clip_graph, "graph-ungated",
             "compute_gradients(gate_gradients=GATE_NONE) -> clip_by_global_norm(5.0) -> apply_gradients",
             mlp_note + same_none + "; on this MLP the same values as the clip by hand (gating orders ops; on a "
             "conv with a bias it also keeps oneDNN from merging the bias gradient into the filter's, which changes "
             "the last bits)",
             mlp, **_wait_goal(graph_wait)),
        _row(runs, errors, f"{p}-param MLP, TF1 graph Session: ClippedOptimizer", ms, "median_ms",
             "graph-none", no_clip_graph,
             "graph-wrapped", wrapped, mlp_note + same_none + "; it computes gradients as asked (GATE_OP by "
             "default), as TF 1.x's contrib wrappers did", mlp, **_wait_goal(graph_wait)),
        _row(runs, errors, f"{p}-param MLP, TF1 graph: ClippedOptimizer vs clip by hand", ms, "median_ms",
             "graph-hand", "by hand: " + by_hand,
             "graph-wrapped", wrapped, mlp_note + "; the runs of the two rows above", mlp, 1.05),
        _row(runs, errors, f"{p}-param MLP, TF1 graph: the clip's norm pass alone", ms, "median_ms",
             "graph-none", no_clip_graph,
             "graph-norm", "global norm of the gradients computed in the step (fetched); updates unclipped, not waiting",
             mlp_note + "; the no-clipping runs are the ones of the TF1 graph rows", mlp),
        mulpass,
        _row(runs, errors, f"{rows}-row embedding: peak memory, sparse clip vs no clip", "peak RSS MB", "maxrss_mb",
             "emb-none", no_clip_sparse, "emb-sparse", sparse, emb_note + "; peak RSS = kernel ru_maxrss of the run",
             emb, 1.1),
        _row(runs, errors, f"{rows}-row embedding: step time, sparse clip vs no clip", ms, "median_ms",
             "emb-none", no_clip_sparse, "emb-sparse", sparse, emb_note, emb),
        _row(runs, errors, f"{rows}-row embedding: step time, sparse vs densified clip", ms, "median_ms",
             "emb-dense", dense, "emb-sparse", sparse, check_note + "; " + emb_note, emb, void=void),
        _row(runs, errors, f"{rows}-row embedding: peak memory, sparse vs densified clip", "peak RSS MB", "maxrss_mb",
             "emb-dense", dense, "emb-sparse", sparse, check_note + "; " + emb_note, emb, void=void),
    ]


if __name__ == "__main__":
    start = time.perf_counter()
    out = run("--quick" in sys.argv[1:], _common.log_to_stderr)
    print(json.dumps(out, indent=1))
    _common.log_to_stderr(f"bench_clipcost: {time.perf_counter() - start:.1f}s")

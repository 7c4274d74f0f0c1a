"""Compare two parity records: per-step losses and gradient norms, final weights."""
from __future__ import annotations

import json
import math
import os

import numpy as np

from tf1clip.parity import fetched, initializers, printed, start_values

# Defaults, justified in the README ("Parity tolerances"): float32 carries ~7 significant
# digits; graph and eager execution sum in different orders, so single-step values differ
# in the last 1-2 digits (relative 1e-7..1e-6) and the difference grows slowly with steps.
# rtol 1e-4 leaves two decades of headroom over that and is still far below what a changed
# clip, epsilon or learning rate produces (1e-3 and up in the deliberate-mistake tests).
# atol only keeps values that are (nearly) zero comparable: it is tiny so that problems
# whose losses and gradients are tiny (1e-8, where Adam's epsilon matters) are still judged.
# Weights are compared per variable against the variable's scale (max |OLD - NEW| <=
# atol + rtol * scale), so an element that happens to sit near zero is not judged on its
# own relative error. The scale of an updated variable is the largest |value| it had on either
# side, before any step or at the end: float32 rounds each update to the magnitude it passed
# through, so a bias whose steps of 0.05 cancel to 1.5e-4 carries the rounding of 0.05.
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-12


def load_record(folder: str) -> dict:
    with open(os.path.join(folder, "record.json")) as handle:
        record = json.load(handle)
    for label in ("initial", "final", "steps"):
        path = os.path.join(folder, f"{label}.npz")
        record[label] = None
        if os.path.exists(path):
            with np.load(path, allow_pickle=False) as data:
                record[label] = {k: data[k] for k in data.files if k != "__meta__"}
    record["fetched"] = fetched.load(folder)
    return record


def _value(x):
    if x is None:
        return None
    if isinstance(x, str):
        return float(x)  # 'inf' / 'nan' written as text
    return float(x)


def _close(a, b, rtol, atol):
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= atol + rtol * abs(b)


def compare(old: dict, new: dict, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
            initial: bool = False) -> dict:
    """Everything the report shows, as plain data (this is what --json writes).

    `problems` are differences (FAIL, exit 1); `errors` are things recorded on one side only,
    which cannot be compared (exit 2): each names the variable. `initial=True` (--no-transfer)
    also compares the updated variables' start values.
    """
    result = {"rtol": rtol, "atol": atol, "optimizers": [], "problems": [], "errors": [], "state": [],
              "initial": [], "passed": True}
    old_opts, new_opts = _stepped(old["optimizers"], new["optimizers"], result)
    if len(old_opts) != len(new_opts):
        result["problems"].append(f"OLD updated {len(old_opts)} optimizer(s), NEW {len(new_opts)}")
    if not old_opts:
        result["problems"].append("OLD made no optimizer update: nothing to compare")
    for o_opt, n_opt in _pairs(old_opts, new_opts):
        rows, first_bad = [], None
        o_steps, n_steps = o_opt["steps"], n_opt["steps"]
        if len(o_steps) != len(n_steps):
            result["problems"].append(
                f"optimizer {o_opt['index']}: OLD made {len(o_steps)} updates, NEW {len(n_steps)}")
        for o, n in zip(o_steps, n_steps):
            row = {"step": o["step"]}
            ok = True
            for field in ("loss", "grad_norm_pre", "grad_norm_post"):
                a, b = _value(o.get(field)), _value(n.get(field))
                row[f"{field}_old"], row[f"{field}_new"] = a, b
                if a is not None and b is not None:
                    row[f"{field}_abs"] = abs(a - b) if not (math.isnan(a) or math.isnan(b)) else math.nan
                    row[f"{field}_rel"] = row[f"{field}_abs"] / abs(b) if b not in (0.0,) else row[f"{field}_abs"]
                # a quantity only one side could identify is reported, not judged
                if a is not None and b is not None and not _close(a, b, rtol, atol):
                    ok = False
            if o_opt.get("writes"):
                ok = _step_weights(row, o_opt, n_opt, old.get("steps"), new.get("steps"), rtol, atol,
                                   result["errors"]) and ok
            row["ok"] = ok
            if not ok and first_bad is None:
                first_bad = o["step"]
            rows.append(row)
        result["optimizers"].append({
            "index": o_opt["index"], "old_name": o_opt["name"], "new_name": n_opt["name"],
            "writes": bool(o_opt.get("writes")),
            "rows": rows, "first_divergent_step": first_bad,
            "weights": _weights(o_opt, n_opt, old.get("final"), new.get("final"), rtol, atol),
        })
    for opt in result["optimizers"]:
        if opt["first_divergent_step"] is not None:
            result["problems"].append(
                f"optimizer {opt['index']}: step {opt['first_divergent_step']} leaves tolerance")
        for w in opt["weights"]:
            if w.get("missing"):
                result["errors"].append(f"variable {w['name']} ({w['key']}) was recorded on "
                                        f"{'NEW' if w['missing'] == 'OLD' else 'OLD'} only: "
                                        f"no final value on {w['missing']}")
        bad = [w["name"] for w in opt["weights"] if not w["ok"] and not w.get("missing")]
        if bad:
            result["problems"].append(f"optimizer {opt['index']}: final weights differ: {', '.join(bad)}")
    _compare_state(result, old, new, rtol, atol)
    result["fetched"] = fetched.compare(old.get("fetched"), new.get("fetched"), rtol, atol)
    if result["fetched"]["status"] == "different":
        result["problems"].append(f"fetched values differ: {result['fetched']['note']}")
    start_values.compare(result, new)
    if initial:
        _compare_initial(result, old, new, rtol, atol)
    result["passed"] = not result["problems"] and not result["errors"]
    return result


def _stepped(old_opts, new_opts, result):
    """The optimizers that made at least one update, on each side. One built and never applied
    (an alternative left in the script, a phase cut off by --steps before it began) has nothing
    to compare: it is named in `unstepped` and the report, not compared."""
    result["unstepped"] = [{"side": side, "index": o["index"], "name": o["name"]}
                           for side, opts in (("OLD", old_opts), ("NEW", new_opts)) for o in opts if not o["steps"]]
    return [o for o in old_opts if o["steps"]], [o for o in new_opts if o["steps"]]


def _pairs(old_opts, new_opts):
    """OLD's and NEW's optimizers side by side: by number when both sides number them alike
    (NEW's take OLD's numbers at their first update, recorder.check_match), else in order."""
    if sorted(o["index"] for o in old_opts) == sorted(o["index"] for o in new_opts):
        by_index = {o["index"]: o for o in new_opts}
        return [(o, by_index[o["index"]]) for o in old_opts]
    return list(zip(old_opts, new_opts))


def _close_arrays(a, b, rtol, atol, seen=0.0):
    """(ok, max |a - b|, note) for two arrays: max |OLD - NEW| <= atol + rtol * scale, the scale
    being max |NEW| or `seen` (the largest |value| the variable had on the way), the larger."""
    if a.shape != b.shape:
        return False, None, f"shape {a.shape} vs {b.shape}"
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if not diff_ok_nan(a64, b64):
        return False, None, "NaN on one side only"
    diff = np.abs(np.nan_to_num(a64) - np.nan_to_num(b64))
    max_diff = float(diff.max()) if diff.size else 0.0
    scale = max(float(np.abs(np.nan_to_num(b64)).max()) if b64.size else 0.0, seen)
    return max_diff <= atol + rtol * scale, max_diff, None


def _weights(o_opt, n_opt, old_final, new_final, rtol, atol):
    out = []
    new_by_key = {v["key"]: v for v in n_opt["variables"]}
    for var in o_opt["variables"]:
        seen = max(var.get("scale") or 0.0, new_by_key.get(var["key"], {}).get("scale") or 0.0)
        key = var["key"]
        entry = {"key": key, "name": var["name"], "new_name": new_by_key.get(key, {}).get("name"), "seen": seen}
        a = None if old_final is None else old_final.get(key)
        b = None if new_final is None else new_final.get(key)
        if a is None or b is None:
            side = "OLD" if a is None else "NEW"
            entry.update(ok=False, max_abs_diff=None, missing=side, note=f"no final value on {side}")
        else:
            ok, max_diff, note = _close_arrays(a, b, rtol, atol, seen)
            entry.update(ok=ok, max_abs_diff=max_diff, note=note)
        out.append(entry)
    return out


def _step_weights(row, o_opt, n_opt, old_steps, new_steps, rtol, atol, errors):
    """A step of variable writes (no optimizer): every written variable's value after it."""
    ok, worst = True, 0.0
    for var in o_opt["variables"]:
        name = f"{var['key']}@{row['step']}"
        a = None if old_steps is None else old_steps.get(name)
        b = None if new_steps is None else new_steps.get(name)
        if a is None or b is None:
            message = (f"variable {var['name']} ({var['key']}) was written on "
                       f"{'NEW' if a is None else 'OLD'} only at step {row['step']}")
            if message not in errors:
                errors.append(message)
            ok = False
            continue
        close, max_diff, _ = _close_arrays(a, b, rtol, atol)
        ok = ok and close
        worst = max(worst, max_diff if max_diff is not None else math.inf)
    row["weights_abs"] = worst
    return ok


def _compare_state(result, old, new, rtol, atol):
    """Other model state the steps wrote (batch norm's moving statistics, ...), by final value.

    OLD's and NEW's state variables are matched as start values are: in creation order within
    each shape. One left over on either side is an error naming it."""
    old_state, new_state = old.get("state") or [], new.get("state") or []
    if old_state and not new.get("state_observed", True):
        result["state_note"] = (f"{len(old_state)} state variable(s) of OLD not compared: NEW runs eagerly, "
                                "where parity does not see which variables a step writes")
        return
    remaining = list(new_state)
    for entry in old_state:
        match = next((n for n in remaining if n["shape"] == entry["shape"]), None)
        if match is None:
            result["errors"].append(f"state variable {entry['name']} {tuple(entry['shape'])} is written by OLD's "
                                    "steps only")
            continue
        remaining.remove(match)
        a = (old.get("final") or {}).get(entry["key"])
        b = (new.get("final") or {}).get(match["key"])
        item = {"name": entry["name"], "new_name": match["name"]}
        if a is None or b is None:
            result["errors"].append(f"state variable {entry['name']} has no final value on "
                                    f"{'OLD' if a is None else 'NEW'}")
            item.update(ok=False, max_abs_diff=None)
        else:
            ok, max_diff, note = _close_arrays(a, b, rtol, atol)
            item.update(ok=ok, max_abs_diff=max_diff, note=note)
            if not ok:
                result["problems"].append(f"state variable {entry['name']} differs at the end")
        result["state"].append(item)
    for entry in remaining:
        result["errors"].append(f"state variable {entry['name']} {tuple(entry['shape'])} is written by NEW's "
                                "steps only")


def _compare_initial(result, old, new, rtol, atol):
    """--no-transfer: each updated variable's start value, OLD's against NEW's own. Drawn from the
    same initializer (initializers.py), NEW loaded OLD's draw and the values must be equal; from
    another, a problem naming both; not known on a side, the values are compared as they are."""
    old_initial, new_initial = old.get("initial") or {}, new.get("initial") or {}
    result["draws"] = new.get("draws") or []
    draws = {entry["key"]: entry for entry in result["draws"]}
    for opt in old["optimizers"]:
        for var in opt["variables"]:
            a, b = old_initial.get(var["key"]), new_initial.get(var["key"])
            if a is None or b is None:
                result["errors"].append(f"variable {var['name']} ({var['key']}) has no start value on "
                                        f"{'OLD' if a is None else 'NEW'}")
                continue
            draw = draws.get(var["key"]) or {}
            item = {"key": var["key"], "name": var["name"], "initializer": initializers.verdict(draw)}
            result["initial"].append(item)
            if draw.get("old") and draw.get("new") and not draw.get("loaded"):
                item.update(ok=False, max_abs_diff=None, note=None)
                old_draw, new_draw = initializers.describe(draw["old"]), initializers.describe(draw["new"])
                result["problems"].append(f"start value of {var['name']}: OLD draws {old_draw}, NEW draws {new_draw}")
                continue
            ok, max_diff, note = _close_arrays(a, b, rtol, atol)
            item.update(ok=ok, max_abs_diff=max_diff, note=note)
            if not ok:
                result["problems"].append(f"start value of {var['name']} differs (initializers)")


def diff_ok_nan(a, b):
    """NaNs must sit in the same places on both sides."""
    return bool(np.array_equal(np.isnan(a), np.isnan(b)))


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.6g}"


def format_report(result: dict, old_name: str = "OLD", new_name: str = "NEW", max_rows: int = 40,
                  color: bool = False) -> str:
    """The per-step table (a `rich` table), first divergent step, weight differences and the
    verdict. Plain text unless `color` (ANSI colours, for a terminal)."""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = io.StringIO()
    console = Console(file=out, width=200, color_system="standard" if color else None, force_terminal=color,
                      highlight=False, soft_wrap=True)

    def say(text: str, style=None) -> None:
        console.print(Text(text, style=style) if style else text, markup=False)

    new_runtime = result.get("new_runtime", "TF2")
    old_runtime = result.get("old_runtime", "TF1 graph, compat runtime")
    say(f"parity: {old_name} ({old_runtime}) vs {new_name} ({new_runtime})"
        f"  rtol={result['rtol']:g} atol={result['atol']:g}")
    if result.get("randomness"):
        say(f"randomness: {result['randomness']}")
    if "transfer" in result:
        say("start values: " + ("OLD's loaded into NEW" if result["transfer"] else
                                "--no-transfer: each side's own, compared (OLD's draw loaded into NEW where "
                                "NEW's initializer is the same)"))
    if result.get("kept"):
        say(f"working copies kept: OLD {result['kept']['old']}  NEW {result['kept']['new']}")
    for text in _unstepped_lines(result.get("unstepped") or []):
        say(f"note: {text}")
    for opt in result["optimizers"]:
        say(f"optimizer {opt['index']}: {opt['old_name']} -> {opt['new_name']}")
        writes = opt.get("writes")
        table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold" if color else None)
        table.add_column("  step", justify="right", min_width=6)
        for header in ("loss OLD", "loss NEW", "abs diff", "rel diff", "gnorm(pre) d",
                       "max|W diff|" if writes else "gnorm(post) d"):
            table.add_column(header, justify="right", min_width=11)
        table.add_column("")
        rows = opt["rows"]
        shown = rows if len(rows) <= max_rows else _around(rows, opt["first_divergent_step"], max_rows)
        last = 0
        for row in shown:
            if row["step"] != last + 1 and last:
                table.add_row("...")
            last = row["step"]
            post = row.get("weights_abs") if writes else row.get("grad_norm_post_abs")
            table.add_row(str(row["step"]), _fmt(row["loss_old"]), _fmt(row["loss_new"]), _fmt(row.get("loss_abs")),
                          _fmt(row.get("loss_rel")), _fmt(row.get("grad_norm_pre_abs")), _fmt(post),
                          "" if row["ok"] else "<-- out of tolerance", style=None if row["ok"] else "red")
        console.print(table)
        first = opt["first_divergent_step"]
        say(f"  first step out of tolerance: {first if first is not None else 'none'}")
        say("  final weights (largest |OLD - NEW| per variable):")
        for w in opt["weights"]:
            note = w.get("note") or ("ok" if w["ok"] else "DIFFERENT")
            names = w["name"] if not w.get("new_name") or w["new_name"] == w["name"] else f"{w['name']} ~ {w['new_name']}"
            say(f"    {names}: {_fmt(w.get('max_abs_diff'))}  {note}", None if w["ok"] else "red")
    if result.get("state"):
        say("other state written by the steps (largest |OLD - NEW| at the end):")
        for w in result["state"]:
            note = w.get("note") or ("ok" if w["ok"] else "DIFFERENT")
            names = w["name"] if w["new_name"] == w["name"] else f"{w['name']} ~ {w['new_name']}"
            say(f"    {names}: {_fmt(w.get('max_abs_diff'))}  {note}", None if w["ok"] else "red")
    if result.get("state_note"):
        say(f"note: {result['state_note']}")
    if result.get("initial"):
        say("start values (--no-transfer; largest |OLD - NEW|):")
        for w in result["initial"]:
            how = f" ({w['initializer']})" if w.get("initializer") else ""
            status = w.get("note") or ("ok" if w["ok"] else "DIFFERENT")
            say(f"    {w['name']}: {_fmt(w.get('max_abs_diff'))}  {status}{how}", None if w["ok"] else "red")
    if result.get("fetched"):
        say(f"fetched values (every Session.run / step function result, in order): {result['fetched']['note']}",
            "red" if result["fetched"]["status"] == "different" else None)
    if result.get("printed"):
        say(printed.summary(result["printed"]))
    for problem in result["problems"]:
        say(f"problem: {problem}")
    for error in result.get("errors", []):
        say(f"error: {error}", "red")
    verdict = "PASS" if result["passed"] else ("ERROR" if result.get("errors") else "FAIL")
    say(verdict, "bold green" if result["passed"] else "bold red")
    return "\n".join(line.rstrip() for line in out.getvalue().rstrip("\n").split("\n"))


def _unstepped_lines(unstepped):
    """One line per optimizer built and never applied: on both sides, or on one."""
    grouped = {}
    for entry in unstepped:
        grouped.setdefault((entry["index"], entry["name"]), []).append(entry["side"])
    return [f"optimizer {index} ({name}) was built and never stepped on {' and '.join(sides)}: not compared"
            for (index, name), sides in sorted(grouped.items())]


def _around(rows, first_bad, max_rows):
    head = rows[: max_rows // 2]
    if first_bad is None:
        return head + rows[-(max_rows // 2):]
    center = [r for r in rows if abs(r["step"] - first_bad) <= max_rows // 4]
    tail = rows[-3:]
    seen, out = set(), []
    for row in head[:10] + center + tail:
        if row["step"] not in seen:
            seen.add(row["step"])
            out.append(row)
    return sorted(out, key=lambda r: r["step"])


def plot(result: dict, path: str) -> None:
    """PNG of both loss curves (per optimizer) and their absolute difference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for opt in result["optimizers"]:
        steps = [r["step"] for r in opt["rows"]]
        top.plot(steps, [r["loss_old"] for r in opt["rows"]], label=f"OLD opt{opt['index']}", lw=2)
        top.plot(steps, [r["loss_new"] for r in opt["rows"]], "--", label=f"NEW opt{opt['index']}", lw=1.5)
        diffs = [max(r.get("loss_abs") or 0.0, 1e-12) for r in opt["rows"]]
        bottom.semilogy(steps, diffs, label=f"|OLD - NEW| opt{opt['index']}")
    top.set_ylabel("loss")
    top.legend()
    top.set_title("PASS" if result["passed"] else "FAIL")
    bottom.set_ylabel("abs diff")
    bottom.set_xlabel("step")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)

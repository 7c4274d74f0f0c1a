"""Where NEW's variables would have started: its own initializers, against OLD's, as distributions.

Parity loads OLD's start values into NEW (so that random initial draws do not hide the updates),
which also hides an initializer that draws from another distribution: a migration that starts a
kernel from a normal of stddev 0.05 instead of TF 1.x's 1.0 passes every step, then trains
differently for every user who runs it from scratch. So, before loading OLD's value, the recorder
keeps NEW's own start value's statistics, and the report compares them with OLD's:

- variables of fewer than MIN_SIZE values are not judged (their statistics say too little);
- constant start values (zeros, ones) must be the same constant;
- random ones must have standard deviations within a factor of 4/3 and means within 0.3 of the
  larger standard deviation: two honest draws of 256 values or more are far inside both bounds
  (the standard error of a mean is std/16 there), a wrong default (0.05 against 1.0, [-0.05,
  0.05] against [0, 1)) is far outside them.

That is the fallback. When both sides' start values are known draws (initializers.py: a random
op or initializer of a known distribution, returned as the variable's initial value), they are
compared exactly instead, whatever the size: the same distribution family and the same resolved
parameters, shape and dtype, or a problem naming both (a truncated normal of stddev 0.1 against
a normal of 0.1, which the statistics cannot tell apart, fails).
"""
from __future__ import annotations

import numpy as np

from tf1clip.parity.initializers import describe, same_draw

MIN_SIZE = 256


def stats(array) -> dict:
    a = np.asarray(array, dtype=np.float64)
    return {"size": int(a.size), "mean": float(a.mean()) if a.size else 0.0, "std": float(a.std()) if a.size else 0.0}


def same_distribution(old: dict, new: dict) -> bool:
    if min(old["size"], new["size"]) < MIN_SIZE:
        return True
    so, sn = old["std"], new["std"]
    if max(so, sn) == 0.0:
        return abs(old["mean"] - new["mean"]) <= 1e-6 * max(1.0, abs(old["mean"]))
    if min(so, sn) == 0.0:
        return False
    return 0.75 <= sn / so <= 4 / 3 and abs(old["mean"] - new["mean"]) <= 0.3 * max(so, sn)


def compare(result: dict, new: dict) -> None:
    """A problem for each variable NEW's own initializer would have started elsewhere."""
    entries = new.get("start_distribution") or []
    result["start_distribution"] = entries
    for e in entries:
        old_draw, new_draw = e.get("old_draw"), e.get("new_draw")
        if old_draw is not None and new_draw is not None:
            if not same_draw(old_draw, new_draw):
                result["problems"].append(
                    f"start values of {e['name']}: NEW's own initializer draws from another distribution than "
                    f"OLD's: OLD draws {describe(old_draw)}, NEW draws {describe(new_draw)} (OLD's values were "
                    "loaded for the steps, so only this shows it)")
            continue
        if not same_distribution(e["old"], e["new"]):
            o, n = e["old"], e["new"]
            result["problems"].append(
                f"start values of {e['name']}: NEW's own initializer draws from another distribution than OLD's "
                f"(mean {n['mean']:.4g}, std {n['std']:.4g} against {o['mean']:.4g}, {o['std']:.4g}; OLD's values "
                "were loaded for the steps, so only this shows it)")

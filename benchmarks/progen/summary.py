"""The benchmark's figures from the per-seed outcomes: how many programs reached the TF2 tier,
how many of those parity found converted wrongly, the refusal reasons grouped (normalised as
the proving ground normalises its TF2-tier reasons: `realworld.report.normalise(loose=True)`,
names, numbers and line numbers taken out), and for each reason the dimension values its seeds
have in common (what to vary to reproduce it).
"""
from __future__ import annotations

from collections import Counter, defaultdict

from progen.choices import DIMENSIONS
from realworld.report import normalise


def figures(rows: list[dict]) -> dict:
    n = len(rows)
    ran = [r for r in rows if r["run"] == "ok"]
    tf2 = [r for r in rows if r["tier"] == "tf2"]
    parity = Counter(r["parity"] for r in tf2 if r["parity"])
    return {"programs": n, "run_ok": len(ran), "generator_bugs": n - len(ran),
            "tf2_tier": len(tf2), "compat_tier": sum(r["tier"] == "compat" for r in rows),
            "migrate_errors": sum(r["tier"] == "error" for r in rows),
            "parity_run": sum(parity.values()), "PASS": parity.get("PASS", 0), "FAIL": parity.get("FAIL", 0),
            "ERROR": parity.get("ERROR", 0)}


def _marks(group: list[dict], rows: list[dict]) -> list[str]:
    """Dimension values nearly all of the group's seeds have and the other seeds mostly lack."""
    marks = []
    for dim in [*DIMENSIONS, "layout"]:
        for value, k in Counter(r["dims"][dim] for r in group).items():
            inside = k / len(group)
            overall = sum(r["dims"][dim] == value for r in rows) / len(rows)
            if inside >= 0.8 and inside >= 1.5 * overall and len(group) > 1:
                marks.append((inside, f"{dim}={value} ({k}/{len(group)})"))
    return [text for _, text in sorted(marks, key=lambda m: -m[0])[:4]]


def refusals(rows: list[dict]) -> list[dict]:
    """[{reason, count, seeds, example, marks}] for the compat-tier programs, most frequent first."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if row["tier"] == "compat":
            groups[normalise(row["reason"], loose=True)].append(row)
    out = [{"reason": reason, "count": len(group), "seeds": [r["seed"] for r in group][:20],
            "example": group[0]["reason"], "marks": _marks(group, rows)} for reason, group in groups.items()]
    return sorted(out, key=lambda g: (-g["count"], g["reason"]))


def build(rows: list[dict], meta: dict) -> dict:
    rows = sorted(rows, key=lambda r: r["seed"])
    return {**meta, "figures": figures(rows), "refusals": refusals(rows),
            "wrong_conversions": [r for r in rows if r["parity"] == "FAIL"],
            "parity_errors": [r for r in rows if r["parity"] == "ERROR"],
            "generator_bugs": [r for r in rows if r["run"] != "ok"],
            "migrate_errors": [r for r in rows if r["tier"] == "error"], "rows": rows}


def compact(result: dict) -> dict:
    """The report as written to --json: each row's choices as a list in the order of
    `result["dimensions"]`, the seed lists of FAIL, ERROR and generator bugs instead of copies."""
    names = [*DIMENSIONS, "layout"]

    def row(r):
        out = {k: v for k, v in r.items() if v not in ("", [], {}) and k not in ("dims", "reasons")}
        out["dims"] = [r["dims"].get(n, "") for n in names]
        if len(r.get("reasons", [])) > 1:
            out["more_reasons"] = len(r["reasons"]) - 1
        return out

    keys = ("wrong_conversions", "parity_errors", "generator_bugs", "migrate_errors")
    return {**{k: v for k, v in result.items() if k not in ("rows", *keys)}, "dimensions": names,
            **{k: [r["seed"] for r in result[k]] for k in keys}, "rows": [row(r) for r in result["rows"]]}


def _dims(row: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in row["dims"].items())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(result: dict, top: int = 15) -> str:
    f = result["figures"]
    where = f", --where {result['where']}" if result.get("where") else ""
    lines = [f"# progen: {f['programs']} generated TF 1.x programs (seeds {result['seeds']}{where})", "",
             f"tf1clip {result['tf1clip']}, {result['date']}, {result['done']} seeds done, steps: {result['steps']}, "
             f"-j {result['jobs']}: {result['seconds']} s in all, {result['seconds_per_program']} s per program "
             f"(one program's jobs: {result['program_seconds_mean']} s on average; each job: "
             f"{', '.join(f'{k} {v} s' for k, v in result['job_seconds_mean'].items())})", "",
             f"- TF2 tier reached: **{f['tf2_tier']}/{f['programs']}** (compat tier {f['compat_tier']}, "
             f"migrate errors {f['migrate_errors']})",
             f"- wrong conversions: **{f['FAIL']}** (parity on {f['parity_run']} TF2-tier outputs: "
             f"{f['PASS']} PASS, {f['FAIL']} FAIL, {f['ERROR']} ERROR)",
             f"- generator bugs (the TF 1.x program did not run under `tf1clip run`): {f['generator_bugs']}", ""]
    lines += ["## Refusal reasons (compat tier)", "", "| count | reason | seeds | shared by its seeds |",
              "|---:|---|---|---|"]
    for g in result["refusals"][:top]:
        seeds = ", ".join(map(str, g["seeds"][:8])) + (" …" if g["count"] > 8 else "")
        lines.append(f"| {g['count']} | {_cell(g['reason'])} | {seeds} | {_cell('; '.join(g['marks']))} |")
    rest = result["refusals"][top:]
    if rest:
        lines.append(f"| {sum(g['count'] for g in rest)} | ({len(rest)} other reasons) | | |")
    for title, key, field in (("Wrong conversions (parity FAIL)", "wrong_conversions", "parity_reason"),
                              ("Parity errors (could not compare)", "parity_errors", "parity_reason"),
                              ("Generator bugs (the original did not run)", "generator_bugs", "run_reason"),
                              ("Migrate errors", "migrate_errors", "reason")):
        items = result[key]
        lines += ["", f"## {title}: {len(items)}", ""]
        lines += [f"- seed {r['seed']}: {_cell(r[field])}  \n  `{_dims(r)}`" for r in items] or ["none"]
    names = [*DIMENSIONS, "layout"]
    lines += ["", "## Per seed", "", f"choices: the values of {', '.join(names)}", "",
              "| seed | run | tier | parity | reason | choices |", "|---:|---|---|---|---|---|"]
    for r in result["rows"]:
        why = r["parity_reason"] if r["parity"] in ("FAIL", "ERROR") else r["reason"] or r["run_reason"]
        why = normalise(why, loose=True) if r["tier"] == "compat" else why
        lines.append(f"| {r['seed']} | {r['run']} | {r['tier']} | {r['parity'] or '–'} | {_cell(why)[:120]} | "
                     f"{' '.join(r['dims'].get(n, '') for n in names)} |")
    return "\n".join(lines) + "\n"

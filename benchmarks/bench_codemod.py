"""Codemod throughput and start-up: `tf1clip migrate` vs TF 2.21's `tf_upgrade_v2`, same inputs.

Two trees, both made here and never committed:
- generated: each file joins three legacy fixtures (all twelve recipes appear equally often),
  with the TensorFlow alias and every module-level variable renamed per file, in nested
  packages, so no two files are alike;
- real-shaped (only with `--snapshots DIR`): the development corpus's Python files (the
  entries of benchmarks/realworld-manifest.toml), read from the git snapshots in DIR at their
  pinned commits and copied round-robin to ~500 files. Without a snapshot folder (CI) these
  rows are skipped.
Both tools rewrite the whole tree into a fresh output directory; wall time is start to exit of
the command (start-up included, as a user sees it), peak memory is the summed RSS of the
process tree (so `-j 2` workers count).

    python benchmarks/bench_codemod.py [--quick] [--snapshots DIR]
"""
from __future__ import annotations

import io
import keyword
import random
import shutil
import sys
import tempfile
import tokenize
from pathlib import Path

import _common as c

SECTION_TREE = "codemod throughput"
SECTION_START = "start-up"
LEGACY = sorted((c.FIXTURES / "legacy").glob("r*.py"))
ALIASES = ("tf", "tf1", "tfv1", "tensorflow_v1", "T")
MANIFEST = Path(__file__).resolve().parent / "realworld-manifest.toml"


def _tool(name: str) -> list[str]:
    script = Path(c.PYTHON).with_name(name)
    if script.exists():
        return [str(script)]
    module = {"tf1clip": "tf1clip", "tf_upgrade_v2": "tensorflow.tools.compatibility.tf_upgrade_v2_main"}[name]
    return [c.PYTHON, "-m", module]


def _module_level_names(source: str) -> set[str]:
    import ast

    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def vary(source: str, alias: str, suffix: str) -> str:
    """`source` with `tf` → `alias` and each variable/function name → name_suffix (tokens, not text)."""
    rename = {n: f"{n}_{suffix}" for n in _module_level_names(source) if not keyword.iskeyword(n)}
    rename["tf"] = alias
    edits, prev, depth = [], None, 0
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP:
            depth += tok.string in "([{"
            depth -= tok.string in ")]}"
        if tok.type == tokenize.NAME and tok.string in rename and not (prev and prev.string == "."):
            following = tokens[i + 1].string if i + 1 < len(tokens) else ""
            if not (depth and following == "="):  # a keyword argument's name stays
                edits.append((tok.start, tok.end, rename[tok.string]))
        prev = tok
    lines = source.splitlines(keepends=True)
    for (row, col), (_, end), new in reversed(edits):  # right to left: earlier columns stay valid
        lines[row - 1] = lines[row - 1][:col] + new + lines[row - 1][end:]
    return "".join(lines)


def make_tree(dest: Path, files: int, seed: int = 0) -> tuple[int, int]:
    """Write `files` generated TF1 modules under `dest`; returns (files, lines)."""
    rng = random.Random(seed)
    sources = [p.read_text() for p in LEGACY]
    lines = 0
    for i in range(files):
        parts = [sources[(3 * i + k) % len(sources)] for k in range(3)]
        alias = ALIASES[i % len(ALIASES)]
        text = "\n\n".join(vary(part, alias, f"{i}_{k}") for k, part in enumerate(parts))
        compile(text, f"gen_{i}.py", "exec")  # a generator bug must not be measured as a tool's
        package = dest / f"project_{i % 7}" / f"pkg_{rng.randrange(12)}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"train_{alias}_{i}.py").write_text(text)
        lines += text.count("\n")
    return files, lines


def corpus_files(snapshots: Path, manifest: Path = MANIFEST) -> list[tuple[str, bytes]]:
    """(repo/path, bytes) of every Python file the manifest lists, read from the snapshots."""
    import subprocess

    from realworld import manifest as manifest_mod, snapshots as snapshots_mod

    out = []
    for entry in manifest_mod.load(manifest).entries:
        if not entry.path.endswith(".py"):
            continue
        gdir = snapshots_mod.git_dir(snapshots, entry.repo)
        blob = subprocess.run(["git", "--git-dir", str(gdir), "show", f"{entry.commit}:{entry.path}"],
                              capture_output=True, check=True).stdout
        out.append((f"{entry.repo.replace('/', '+')}/{entry.path}", blob))
    return out


def make_real_tree(dest: Path, snapshots: Path, files: int, manifest: Path = MANIFEST) -> tuple[int, int, int]:
    """The corpus's Python files copied round-robin into `dest` until there are `files` of
    them (copy_0/, copy_1/, ...); returns (files, lines, distinct files)."""
    sources = corpus_files(snapshots, manifest)
    lines = 0
    for i in range(files):
        name, blob = sources[i % len(sources)]
        path = dest / f"copy_{i // len(sources)}" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
        lines += blob.count(b"\n")
    return files, lines, len(sources)


def _run_tree(cmd_for, tree: Path, work: Path, repeats: int, extra_env: dict | None = None) -> tuple[list, list]:
    """Walls and peaks of `repeats` runs. Exit status 2 is a finished run too: `tf1clip migrate`
    says so when some file could not be migrated (a real tree has Python 2 files)."""
    walls, peaks = [], []
    for r in range(repeats):
        out = work / f"out_{r}"
        shutil.rmtree(out, ignore_errors=True)
        cmd = cmd_for(tree, out)
        result = c.measure(cmd, cwd=work, extra_env=extra_env, check=False)
        if result.returncode not in (0, 2):
            tail = "\n".join((result.stderr or result.stdout).splitlines()[-15:])
            raise RuntimeError(f"{' '.join(map(str, cmd))} exited {result.returncode}:\n{tail}")
        walls.append(result.wall)
        peaks.append(result.tree_rss_mb)
        shutil.rmtree(out, ignore_errors=True)
    return walls, peaks


def run(quick: bool, log, repeats: int | None = None, snapshots: str | None = None) -> list[dict]:
    repeats = repeats or (1 if quick else 3)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tf1clip-bench-") as tmp:
        work = Path(tmp)
        files, lines = make_tree(work / "tree", 8 if quick else 504)
        log(f"codemod: generated {files} files, {lines} lines")
        rows += _tree_rows(work, work / "tree", "generated", files, lines, repeats, quick, log,
                           "every file joins three legacy fixtures, names varied per file")
        if snapshots:
            real = work / "real"
            files, lines, distinct = make_real_tree(real, Path(snapshots), 16 if quick else 500)
            log(f"codemod: real-shaped tree: {distinct} corpus files copied to {files} files, {lines} lines")
            rows += _tree_rows(work, real, "real-shaped", files, lines, repeats, quick, log,
                               f"the development corpus's {distinct} Python files (benchmarks/realworld-manifest.toml) "
                               f"copied round-robin")
        else:
            log("codemod: real-shaped tree skipped (no --snapshots folder)")
        rows += _startup(work, 1 if quick else 7)
    return rows


# goals, as ours ÷ tf_upgrade_v2 in files/s: the compat tier's (DESIGN.md) and the TF2 tier's (issue 28)
TARGETS = {("compat", 2): 3.0, ("tf2", 2): 1.0}


def _tree_rows(work: Path, tree: Path, kind: str, files: int, lines: int, repeats: int, quick: bool, log,
               what: str) -> list[dict]:
    upgrade = _tool("tf_upgrade_v2")
    ours = _tool("tf1clip")
    base_walls, base_peaks = _run_tree(
        lambda t, o: [*upgrade, "--intree", t, "--outtree", o, "--reportfile", work / "upgrade_report.txt"],
        tree, work, repeats)
    base_wall, base_peak = c.median(base_walls), c.median(base_peaks)
    log(f"codemod: {kind}: tf_upgrade_v2 {base_wall:.2f} s")
    size = f"{kind} tree, {files} files, {lines} lines"
    rows = []
    for to, jobs in (("compat", 1), ("compat", 2), ("tf2", 1), ("tf2", 2)):
        label = f"{kind}: tf1clip migrate --to {to} -j {jobs}"
        walls, peaks = _run_tree(lambda t, o: [*ours, "migrate", t, "--to", to, "--outtree", o, "-j", str(jobs)],
                                 tree, work, _runs(repeats, quick, to))
        wall, peak = c.median(walls), c.median(peaks)
        log(f"codemod: {label} {wall:.2f} s")
        note = (f"{size} ({what}); wall {wall:.1f} s vs {base_wall:.1f} s; lines/s {lines / wall:,.0f} vs "
                f"{lines / base_wall:,.0f}")
        if to == "compat":
            note += "; all compat rules in one pass a file (codemods/engine.py)"
        else:
            note += "; the TF2 tier converts whole train steps, then falls back to compat per file"
        samples = {"files": files, "lines": lines, "walls": walls, "baseline_walls": base_walls,
                   "peaks_mb": peaks, "baseline_peaks_mb": base_peaks}
        rows.append(c.row(SECTION_TREE, label, "files/s", "tf_upgrade_v2", files / base_wall, "tf1clip migrate",
                          files / wall, better="higher", target=TARGETS.get((to, jobs)),
                          note=note, samples=samples))
        rows.append(c.row(SECTION_TREE, label, "peak memory MB (tree RSS)", "tf_upgrade_v2", base_peak,
                          "tf1clip migrate", peak, samples={"peaks_mb": peaks, "baseline_peaks_mb": base_peaks}))
    return rows


def _runs(repeats: int, quick: bool, to: str) -> int:
    """The compat rows take seconds: at least 3 runs; the TF2 tier's take longer."""
    return repeats if quick or to == "tf2" else max(repeats, 3)


def _startup(work: Path, repeats: int) -> list[dict]:
    one = work / "one_line.py"
    one.write_text("import tensorflow as tf\nx = tf.placeholder(tf.float32)\n")
    upgrade, ours = _tool("tf_upgrade_v2"), _tool("tf1clip")
    pairs = [
        ("--help", [*upgrade, "--help"], [*ours, "migrate", "--help"]),
        ("one-line file", [*upgrade, "--infile", one, "--outfile", work / "one_upgraded.py",
                           "--reportfile", work / "one_report.txt"],
         [*ours, "migrate", one, "--outtree", work / "one_migrated"]),
    ]
    rows = []
    for name, base_cmd, our_cmd in pairs:
        base, mine = [], []
        for _ in range(repeats):  # interleaved, so both sides see the same machine
            base.append(c.measure(base_cmd, cwd=work).wall)
            shutil.rmtree(work / "one_migrated", ignore_errors=True)
            mine.append(c.measure(our_cmd, cwd=work).wall)
        rows.append(c.row(SECTION_START, name, "s (median)", "tf_upgrade_v2", c.median(base), "tf1clip migrate",
                          c.median(mine), limit=0.5, note="the migrate path never imports TensorFlow",
                          samples={"baseline": base, "ours": mine}))
    return rows


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--snapshots", metavar="DIR", help="git snapshots of the development corpus' repositories")
    opts = parser.parse_args()
    for item in run(opts.quick, c.log_to_stderr, snapshots=opts.snapshots):
        print(json.dumps(item))

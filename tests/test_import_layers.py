"""No import cycle in `codemods/` or `tf1clip/`, counting every import; the TF2 tier's layers kept.

Every module is parsed with `ast` (nothing is imported): every `import` and `from ... import`
counts, at module level, inside a function (a deferred import is still a dependency) and under
`if TYPE_CHECKING:` (an annotation is one too). Relative imports are resolved. A strongly connected
component of more than one module is a cycle, and the test lists it with the imports that close it.

`codemods/tf2` is built in layers (docs/migrate-tf2.md, "Module layers"): a module imports only
from its own layer or lower ones. A new module of the TF2 tier must be given its layer here.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("codemods", "tf1clip")
TF2 = "codemods.tf2"

# The TF2 tier's layers, lowest first (docs/migrate-tf2.md, "Module layers").
LAYERS = (
    ("tables and utilities", {
        "_base", "lines", "symbols", "names", "syntax", "emit", "call_args", "scopes", "api_spec", "api_decisions", "api_transforms",
        "api_names", "api_arguments", "api_changes", "optimizer_table", "optimizer_twins", "mnist_reader", "failures",
        "twins", "twins.*"}),
    ("typed model", {"model", "shapes"}),
    ("analysis", {"callees", "module_kinds", "user_modules", "imported_functions", "fixed_values", "host_shapes", "constants", "unroll", "versions", "hoist", "named_lambdas", "list_growth", "effects", "reaching", "value_snapshots", "random_draws", "step_reads", "step_locals", "elements", "item_uses", "item_checks", "known_gaps",
                  "distribute_analysis"}),
    ("the program as converters see it", {"interfaces", "program", "call_site"}),
    ("construct converters", {
        "placeholders", "feed_dicts", "fetch_structures", "variables", "initializers", "layers", "batch_norm", "keras_layers", "twin_classes", "rnn_cells", "rnn", "optimizers",
        "training", "contrib_training", "losses", "regularization", "static_shapes", "data", "summaries", "flags", "tf_logging", "checkpoints", "ops", "session", "assign_ops",
        "runtime_feeds", "loop_fills", "builds", "build_time", "arguments"}),
    ("interpreter", {
        "constructs", "expressions", "steps", "inline", "classes", "helpers", "helper_results", "assign_statements",
        "compound_statements", "interpret", "eager_training", "eager"}),
    ("driver and output checks", {"output_checks", "translator", "distribute", "distribute_examples", "coverage",
                                  ""}),
)


def modules(root: Path, packages=PACKAGES) -> dict:
    """Dotted module name -> path, for every .py file of `packages` under `root`."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(module: str, path: Path, known: dict) -> list:
    """(line, imported module, how) for every import of `path` that names a module of `known`;
    how is 'module level', 'in a function' or 'under TYPE_CHECKING'."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []

    def target(dotted: str):
        """The module `dotted` names, or the innermost package of `known` holding it."""
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    def visit(node, how: str):
        for child in ast.iter_child_nodes(node):
            inner = how
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and how == "module level":
                inner = "in a function"
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for part in child.body:
                    record(part, "under TYPE_CHECKING")
                    visit(part, "under TYPE_CHECKING")
                for part in child.orelse:
                    record(part, how)
                    visit(part, how)
                continue
            record(child, inner)
            visit(child, inner)

    def record(node, how: str):
        if isinstance(node, ast.Import):
            for alias in node.names:
                hit = target(alias.name)
                if hit:
                    out.append((node.lineno, hit, how))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                hit = full if full in known else target(base)
                if hit:
                    out.append((node.lineno, hit, how))

    visit(tree, "module level")
    return out


def graph(found: dict) -> dict:
    """module -> {imported module: [(line, how)]}. `from pkg import mod` is an edge to `pkg.mod`; an
    edge to a package is one to its `__init__` (`from pkg import name` of a name it defines)."""
    edges = {m: {} for m in found}
    for module, path in found.items():
        for line, hit, how in imports(module, path, found):
            where = edges[module].setdefault(hit, []) if hit != module else []
            if (line, how) not in where:
                where.append((line, how))
    return edges


def cycles(edges: dict) -> list:
    """Strongly connected components of more than one module, each sorted (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def describe(component: list, edges: dict, found: dict) -> str:
    members = set(component)
    lines = [f"import cycle of {len(component)} modules: {', '.join(component)}"]
    for m in component:
        for hit, where in sorted(edges[m].items()):
            if hit in members:
                for line, how in where:
                    lines.append(f"  {found[m].relative_to(ROOT)}:{line} imports {hit} ({how})")
    return "\n".join(lines)


def layer_of(module: str):
    """(index, name) of the layer of a module of `codemods.tf2`, or None if it has none."""
    local = module[len(TF2) + 1:] if module != TF2 else ""
    for i, (name, members) in enumerate(LAYERS):
        if local in members or any(m.endswith(".*") and local.startswith(m[:-1]) for m in members):
            return i, name
    return None


FOUND = modules(ROOT)
EDGES = graph(FOUND)


def test_no_import_cycles_counting_every_import():
    found = cycles(EDGES)
    assert not found, "\n\n".join(describe(c, EDGES, FOUND) for c in found)


def test_every_tf2_module_has_a_layer():
    missing = [m for m in FOUND if (m == TF2 or m.startswith(TF2 + ".")) and layer_of(m) is None]
    assert missing == [], f"give these modules their layer in LAYERS (and docs/migrate-tf2.md): {missing}"


def test_tf2_modules_import_only_their_own_layer_or_lower():
    wrong = []
    for module, targets in EDGES.items():
        if not (module == TF2 or module.startswith(TF2 + ".")) or layer_of(module) is None:
            continue
        mine = layer_of(module)
        for hit, where in targets.items():
            theirs = layer_of(hit) if hit.startswith(TF2 + ".") else None
            if theirs is not None and theirs[0] > mine[0]:
                for line, how in where:
                    wrong.append(f"{FOUND[module].relative_to(ROOT)}:{line} ({mine[1]}) imports {hit} "
                                 f"({theirs[1]}, {how})")
    assert wrong == []


def test_the_graph_counts_deferred_type_checking_and_relative_imports(tmp_path):
    """A made-up package whose only cycle goes through a deferred, a TYPE_CHECKING and a relative
    import: all three are edges, and the cycle is found and described."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.a import run\n")
    (pkg / "a.py").write_text("def run():\n    from pkg import b\n    return b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.c import C\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from .. import a\nfrom . import d\n")
    (pkg / "sub" / "d.py").write_text("import os\n")
    found = modules(tmp_path, ("pkg",))
    edges = graph(found)
    assert edges["pkg.a"] == {"pkg.b": [(2, "in a function")]}
    assert edges["pkg.b"] == {"pkg.sub.c": [(3, "under TYPE_CHECKING")]}
    assert edges["pkg.sub.c"] == {"pkg.a": [(1, "module level")], "pkg.sub.d": [(2, "module level")]}
    assert edges["pkg.sub.d"] == {}
    assert cycles(edges) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert cycles({"x": {"y": []}, "y": {}}) == []


def test_layer_of_knows_every_layer_and_nothing_else():
    assert layer_of("codemods.tf2.syntax") == (0, "tables and utilities")
    assert layer_of("codemods.tf2.twins.dynamic_rnn") == (0, "tables and utilities")
    assert layer_of("codemods.tf2.variables")[1] == "construct converters"
    assert layer_of("codemods.tf2")[1] == "driver and output checks"
    assert layer_of("codemods.tf2.no_such_module") is None

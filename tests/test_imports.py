"""The packages' imports: no private names taken from another module.

Read with `ast` (nothing is imported, TensorFlow least of all). Every import counts, also one
inside a function, except under `if TYPE_CHECKING:`. A private name (`_x`) is private to its module: `from m import _x` and `m._x` from another
module fail; a private module (`pkg/_m.py`) is private to its package `pkg` (its subpackages
may use it). Import cycles (every import, `TYPE_CHECKING` ones too) and the TF2 tier's layers:
`tests/test_import_layers.py`.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tf1clip", "codemods")


def _modules() -> dict:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            name = name[: -len(".__init__")] if name.endswith(".__init__") else name
            found[name] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path):
    """(line, imported module, name or None) for every import outside `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for child in node.body for n in ast.walk(child)}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None, alias.asname or alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                yield node.lineno, base, alias.name, alias.asname or alias.name


# Import cycles, counting every import: tests/test_import_layers.py.


def _private(module: str, target: str, name) -> str | None:
    """Why importing `name` from `target` in `module` breaks privacy, or None."""
    full = f"{target}.{name}" if name else target
    parts = full.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = ".".join(parts[:i])  # the package or module that owns the private name
            if ".".join(parts[: i + 1]) in MODULES:  # a private module: its package and below may use it
                if not (module == owner or module.startswith(owner + ".")):
                    return f"private module {'.'.join(parts[:i + 1])}"
            elif owner != module:
                return f"private name {part} of {owner}"
    return None


def test_no_private_names_across_modules():
    found = []
    for module, path in MODULES.items():
        aliases = {}
        for line, target, name, bound in _imports(module, path):
            if not (target.split(".")[0] in PACKAGES):
                continue
            why = _private(module, target, name)
            if why:
                found.append(f"{path.relative_to(ROOT)}:{line}: {why}")
            full = f"{target}.{name}" if name else (target if bound == target else target.split(".")[0])
            if full in MODULES:
                aliases[bound] = full
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: private name {node.attr} of "
                             f"{aliases[node.value.id]}")
    assert found == []


def test_the_checks_find_what_they_look_for():
    """The check on made-up imports: each privacy breach."""
    assert _private("tf1clip.migrate.engine", "codemods._base", "Note") == "private module codemods._base"
    assert _private("codemods.tf2.symbols", "codemods._base", "Note") is None  # a subpackage may
    assert _private("tf1clip.parity.record", "tf1clip.runner", "_print_user_traceback") == \
        "private name _print_user_traceback of tf1clip.runner"
    assert _private("tf1clip.migrate.sources", "tf1clip._source", "check_source") is None

"""The TF2 tier's kinds are enum members, never strings (issue 28, "a typed model").

`codemods/tf2/model.py` types what the model's objects are (`StateKind`, `OpKind`, `OtherKind`,
`SeqKind`, and `AVKind` for what `kind_of` gives the rest); `interfaces.FetchKind`,
`session.Structure` and `distribute_analysis.Reduction` type the fetches and the loss. A kind
compared with a string literal would be silently false once the kinds are members, and a
misspelt string would always have been: every module of `codemods/tf2` is parsed with `ast`
(nothing is imported) and must

* compare no `.kind`, no variable `kind` and no `getattr(x, "kind", ...)` with a string literal;
* make no `State`, `GraphOp`, `Other`, `Seq`, `Leaf` or `Fetch` with a string literal kind;
* key no (kind, method) table (`METHODS`) by a string kind;
* name only members that exist (`StateKind.VARIABEL` fails here, not when its line first runs),
  and every member somewhere (no dead kind).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TF2 = ROOT / "codemods" / "tf2"

# Comparisons of kinds that are not the tier's own: (module, function) -> why they stay strings.
NOT_OURS = {
    ("api_arguments.py", "apply_transformer"): "tf_upgrade_v2's transform kinds, strings of the generated table "
                                               "api_spec.TRANSFORMERS (an unknown one raises)",
}
# What makes an object of the model, and which argument is its kind.
MAKERS = {"State": 0, "GraphOp": 0, "Other": 0, "Seq": 1, "Leaf": 0, "Fetch": 0}
# Members compared somewhere but made nowhere: a branch no input can reach. Each is a known gap.
NEVER_MADE = {
    "OpKind.GROUP": "session._fetch takes a group op as an update, but tf.group is refused (ops.UNMAPPED)",
}


def _trees() -> dict:
    return {path.relative_to(TF2).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(TF2.rglob("*.py"))}


TREES = _trees()
PARENTS = {module: {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
           for module, tree in TREES.items()}


def _nodes(*types):
    """(module, node) for every node of `types` in codemods/tf2."""
    for module, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, types):
                yield module, node


def _function(node: ast.AST, parents: dict):
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node.name
    return None


def _is_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    if isinstance(node, ast.Name):
        return node.id == "kind"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
        len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "kind"


def _has_string(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(node))


def _where(module: str, node: ast.AST) -> str:
    return f"codemods/tf2/{module}:{node.lineno}: {ast.unparse(node)[:100]}"


def _compares_kind_with_string(module: str, node: ast.Compare) -> bool:
    operands = [node.left, *node.comparators]
    return any(_is_kind(o) for o in operands) and (module, _function(node, PARENTS[module])) not in NOT_OURS and \
        any(isinstance(o, (ast.Constant, ast.Tuple, ast.List, ast.Set)) and _has_string(o) for o in operands)


def test_no_kind_is_compared_with_a_string():
    found = [_where(m, node) for m, node in _nodes(ast.Compare) if _compares_kind_with_string(m, node)]
    assert found == [], "compare kinds with enum members, not strings:\n" + "\n".join(found)


def _string_kind(node: ast.Call) -> bool:
    index = MAKERS.get(getattr(node.func, "id", None) or getattr(node.func, "attr", None))
    if index is None:
        return False
    kind = node.args[index] if len(node.args) > index else \
        next((k.value for k in node.keywords if k.arg == "kind"), None)
    return kind is not None and _has_string(kind)


def test_no_model_object_is_made_with_a_string_kind():
    found = [_where(m, node) for m, node in _nodes(ast.Call) if _string_kind(node)]
    assert found == [], "make the model's objects with enum kinds:\n" + "\n".join(found)


def test_no_method_table_is_keyed_by_a_string_kind():
    found = [_where(m, key) for m, node in _nodes(ast.Assign)
             if any(getattr(t, "id", None) == "METHODS" for t in node.targets) for key in ast.walk(node.value)
             if isinstance(key, ast.Tuple) and len(key.elts) == 2 and isinstance(key.elts[0], ast.Constant)
             and isinstance(key.elts[0].value, str)]
    assert found == [], "key the (kind, method) tables by enum members:\n" + "\n".join(found)


def _enums() -> dict:
    """`Class.MEMBER` -> module, for every enum of codemods/tf2."""
    return {f"{node.name}.{t.id}": module for module, node in _nodes(ast.ClassDef)
            if any(ast.unparse(b) in ("enum.Enum", "Enum") for b in node.bases)
            for item in node.body if isinstance(item, ast.Assign) for t in item.targets}


ENUMS = _enums()
KIND_CLASSES = {m.split(".")[0] for m in ENUMS}


def test_the_kinds_are_plain_enums():
    assert {"StateKind", "OpKind", "OtherKind", "SeqKind", "AVKind", "FetchKind"} <= KIND_CLASSES
    for module, node in _nodes(ast.ClassDef):
        if node.name in KIND_CLASSES:  # not StrEnum, not (str, Enum): a member must never equal a string
            assert [ast.unparse(b) for b in node.bases] == ["enum.Enum"], (module, node.name)


def _uses() -> dict:
    """`Class.MEMBER` -> [(module, line, tested)] for every use of a kind member; `tested` when the use
    is in a comparison or a table's key (a test of a kind, not the making of one)."""
    uses = {}
    for module, node in _nodes(ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id in KIND_CLASSES and node.attr not in ("value", "name"):
            uses.setdefault(f"{node.value.id}.{node.attr}", []).append((module, node.lineno, _tested(module, node)))
    return uses


def _tested(module: str, node: ast.AST) -> bool:
    """`node` is in a comparison or a table's key."""
    parents = PARENTS[module]
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.Compare) or isinstance(parent, ast.Dict) and node in parent.keys or \
                isinstance(parent, ast.DictComp) and node is parent.key:
            return True
        node = parent
    return False


USES = _uses()


def test_every_named_member_exists():
    unknown = [f"codemods/tf2/{m}:{line}: {name}" for name, where in USES.items() if name not in ENUMS
               for m, line, _ in where]
    assert unknown == [], "no such kind:\n" + "\n".join(unknown)


def test_every_member_is_used():
    dead = sorted(set(ENUMS) - set(USES))
    assert dead == [], f"kinds nothing makes or reads (remove them): {dead}"


def test_every_member_compared_is_made_somewhere():
    only_tested = {name for name, where in USES.items() if all(tested for _, _, tested in where)}
    assert only_tested == set(NEVER_MADE), (
        "kinds that are tested but never made (a branch no input reaches): "
        f"{sorted(only_tested - set(NEVER_MADE))}; made now (remove from NEVER_MADE): "
        f"{sorted(set(NEVER_MADE) - only_tested)}")

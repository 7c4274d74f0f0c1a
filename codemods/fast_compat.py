"""The compat tier for the common shape of a TF 1.x script, on Python's `ast` instead of libcst.

`tf1clip migrate --to compat` runs six libcst codemods (`COMPAT_TIER`); each one that changes a
file makes the next resolve libcst's scope metadata again, ~0.7 s a 130-line file in all. Most
legacy scripts are one shape: `import tensorflow as tf` at module level (perhaps again further
down), uses through `tf.X...` chains, maybe `import tensorflow.contrib.slim as slim`, the MNIST
`input_data` import and `tf.contrib.*` calls. For exactly that shape this module computes the
same output, byte for byte, and the same report notes, as the libcst rules, on `ast` plus line
edits (a few ms a file).

It accepts a file only when every name the rules resolve is certain without scope analysis:
each alias it follows is bound by one module-level import line and nothing else in the file
binds, assigns, deletes or declares that name. Anything else (other import forms, a name
reused, `tf.compat.*`, `tf.estimator.*`, TF 2 or eager API, a contrib name without a row, a
rule that would leave a place for a human, ...) returns None and the libcst rules run as before.
`tests/test_migrate_fast.py` checks equality with the libcst rules on every corpus the project
has (fixtures, migrate tree, the codemods' examples, the benchmark's generated tree) and on
variations meant to be declined. Never imports TensorFlow.
"""
from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import Optional

from codemods._base import TF_IMPORTING, Note
from codemods._tfapi import V1_ONLY
from codemods._usage import NEUTRAL_V1, TF, V1, Usage, _has_prefix, classify_qname
from codemods.contrib_table import CONTRIB_ROWS, MNIST_ROWS, SLIM, lookup
from codemods.contrib_slim import _RUNTIME as SLIM_RUNTIME_ROW, _TF_SLIM as TF_SLIM_ROW, slim_name_safe
from codemods.legacy_keras import needs_legacy_keras
from codemods.numpy2 import Numpy2Command

MNIST_MODULE = "tensorflow.examples.tutorials.mnist"
# Text that makes a rule do something this path does not model: the file goes to libcst.
_DECLINE_TEXT = ("TF_USE_LEGACY_KERAS", "disable_v2_behavior", "enable_eager_execution", "enable_v2_behavior",
                 "\r", ".device(")  # (.device(: device pins are soft_placement's, a libcst rule)


class _Decline(Exception):
    """The file is outside the shape this path models exactly."""


@dataclass
class _Stmt:
    lead: list                 # raw lines before it (blank or comment), each with its newline
    lines: list                # its own lines, each with its newline
    line: int = 0              # its first line in the input (0: added here)
    imports: tuple = ()        # modules a single-import line imports (import_module_names)
    simple_import: bool = False
    imports_os: bool = False   # `import os` (also among other names), nothing else on the line
    node: Optional[ast.stmt] = None


@dataclass
class _Chain:
    root: str                  # the alias the chain starts at
    parts: list                # attribute names after the root
    node: ast.expr             # the outermost node
    links: list                # links[k]: the node for root + parts[:k+1]
    line: int
    final: Optional[str] = None  # the chain's text after the contrib and compat rules


@dataclass
class _File:
    tree: ast.Module
    lines: list
    stmts: list = field(default_factory=list)
    footer: list = field(default_factory=list)
    tf_aliases: dict = field(default_factory=dict)   # alias -> [its `import tensorflow as` lines]
    slim: Optional[tuple] = None                     # (alias, its import line)
    mnist: Optional[_Stmt] = None                    # the input_data import line
    chains: list = field(default_factory=list)


def fast_compat(text: str, filename: str = "<string>") -> Optional[tuple[str, list[Note]]]:
    """(new text, notes on input lines in the engine's order) or None: not this path's shape."""
    try:
        return _run(text, filename)
    except (_Decline, SyntaxError, ValueError, UnicodeError, tokenize.TokenError, RecursionError):
        return None


def _run(text: str, filename: str):
    if any(t in text for t in _DECLINE_TEXT) or Numpy2Command.applies_to(text):
        raise _Decline  # (numpy2: NumPy 2 spellings are the libcst rule's alone)
    tree = ast.parse(text, filename)
    parts = text.split("\n")  # CPython's lines, not str.splitlines' (which also splits at \f, \x1c, ...)
    f = _File(tree, [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else []))
    _statements(f)
    _imports_and_bindings(f)
    _collect_chains(f)
    _check_usage(f)
    notes: list[Note] = []
    _mnist(f, notes)
    _slim(f, notes)
    _contrib(f, notes)
    _compat(f, notes)
    _disable_v2(f, notes)
    _legacy_keras(f, notes)
    out = "".join("".join(s.lead) + "".join(s.lines) for s in f.stmts) + "".join(f.footer)
    if out == text:
        raise _Decline
    compile(out, filename, "exec", dont_inherit=True)  # never hand back what does not parse
    unique: list[Note] = []
    for note in notes:
        if note not in unique:
            unique.append(note)
    unique.sort(key=lambda n: (n.line, n.kind != "change"))
    return out, unique


# -- the module as libcst sees it: statements with their leading lines ---------------------------
def _statements(f: _File) -> None:
    previous_end = 0
    for node in f.tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        if first <= previous_end or node.col_offset != 0:
            raise _Decline  # two statements on one line (`a; b`)
        lead = f.lines[previous_end:first - 1]
        if any(line.strip() and not line.lstrip().startswith("#") for line in lead):
            raise _Decline
        stmt = _Stmt(lead, f.lines[first - 1:node.end_lineno], first, node=node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            stmt.simple_import = True
            stmt.imports = tuple(_import_modules(node))
            stmt.imports_os = isinstance(node, ast.Import) and any(a.name == "os" and a.asname is None
                                                                     for a in node.names)
        f.stmts.append(stmt)
        previous_end = node.end_lineno
    f.footer = f.lines[previous_end:]
    if not f.stmts:
        raise _Decline


def _import_modules(node) -> list:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return [node.module]
    return []


def _tfish(module: str) -> bool:
    """Any module that is, or may be, TensorFlow's (`tensorflow_hub` too: declined, not guessed)."""
    return module.startswith(TF_IMPORTING)


def _imports_and_bindings(f: _File) -> None:
    top = {id(s.node): i for i, s in enumerate(f.stmts)}
    bound: set = set()
    for node in ast.walk(f.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = _import_modules(node)
            if isinstance(node, ast.ImportFrom) and node.level:
                modules = []
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                raise _Decline
            if not any(_tfish(m) for m in modules):
                for a in node.names:
                    bound.add(a.asname or a.name.split(".")[0])
                continue
            index = top.get(id(node))
            line = f.stmts[index].lines[0] if index is not None else ""
            if index is None or len(f.stmts[index].lines) != 1:
                raise _Decline
            if len(node.names) != 1:
                raise _Decline
            alias = node.names[0]
            if isinstance(node, ast.Import) and alias.name == TF and alias.asname and alias.asname != TF \
                    and _canonical(line, f"import tensorflow as {alias.asname}"):
                f.tf_aliases.setdefault(alias.asname, []).append(f.stmts[index])
            elif isinstance(node, ast.Import) and alias.name == SLIM and alias.asname and f.slim is None \
                    and _canonical(line, f"import {SLIM} as {alias.asname}"):
                f.slim = (alias.asname, f.stmts[index])
            elif isinstance(node, ast.ImportFrom) and node.module == MNIST_MODULE and alias.name == "input_data" \
                    and alias.asname is None and f.mnist is None \
                    and _canonical(line, f"from {MNIST_MODULE} import input_data"):
                f.mnist = f.stmts[index]
            else:
                raise _Decline
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.Match, ast.JoinedStr)):
            raise _Decline  # capture patterns bind; f-string expressions: keep it simple
    aliases = list(f.tf_aliases) + ([f.slim[0]] if f.slim else []) + (["input_data"] if f.mnist is not None else [])
    if not f.tf_aliases or len(set(aliases)) != len(aliases) or set(aliases) & bound:
        raise _Decline


def _canonical(line: str, statement: str) -> bool:
    """`line` is exactly `statement`, perhaps followed by spaces and a comment."""
    if not line.startswith(statement):
        return False
    rest = line[len(statement):].strip()
    return not rest or rest.startswith("#")


def _collect_chains(f: _File) -> None:
    roots = set(f.tf_aliases) | ({f.slim[0]} if f.slim else set()) | ({"input_data"} if f.mnist is not None else set())
    inner: set = set()
    for node in ast.walk(f.tree):  # breadth-first: a chain's outermost link comes before its inner ones
        if id(node) in inner or not isinstance(node, (ast.Attribute, ast.Name)):
            continue
        links, cur = [], node
        while isinstance(cur, ast.Attribute):
            links.append(cur)
            cur = cur.value
        if not isinstance(cur, ast.Name):
            continue
        inner.update(id(n) for n in links[1:])
        inner.add(id(cur))
        if cur.id not in roots:
            continue
        if not isinstance(node.ctx, ast.Load) or cur.lineno != node.end_lineno:
            raise _Decline  # a store into the module, or a chain over several lines
        links.reverse()
        f.chains.append(_Chain(cur.id, [l.attr for l in links], node, links, cur.lineno))
    f.chains.sort(key=lambda c: (c.node.lineno, c.node.col_offset))


def _qname(f: _File, chain: _Chain, k: int) -> str:
    """The imported qualified name of root + parts[:k] in the input."""
    if chain.root in f.tf_aliases:
        base = TF
    elif f.slim and chain.root == f.slim[0]:
        base = SLIM
    else:
        base = MNIST_MODULE + ".input_data"
    return ".".join([base, *chain.parts[:k]])


def _check_usage(f: _File) -> None:
    """The libcst rules' gate (`classify`) says TF 1 graph code, in every rule's input."""
    usage, stable = Usage(imports_tf=True), False
    for chain in f.chains:
        for k in range(len(chain.parts) + 1):
            source = ".".join([chain.root, *chain.parts[:k]])
            classify_qname(usage, _qname(f, chain, k), source, chain.line)
        if chain.root in f.tf_aliases and chain.parts:
            rel = ".".join(chain.parts)
            if chain.parts[0] in ("compat", "examples", "python", "estimator"):
                raise _Decline  # (tf.estimator: the estimator rule's, not modelled here)
            if chain.parts[0] != "contrib" and _has_prefix(rel, V1_ONLY) and chain.parts[0] not in NEUTRAL_V1:
                stable = True  # TF 1 in the input and after the import rewrite alike
    if usage.tf2 or usage.eager or usage.disables_v2 or not stable:
        raise _Decline


# -- the rules, in COMPAT_TIER's order ----------------------------------------------------------
def _replace_line(stmt: _Stmt, old: str, new: str) -> None:
    stmt.lines = [stmt.lines[0].replace(old, new, 1)]


def _mnist(f: _File, notes: list) -> None:
    if f.mnist is None:
        return
    stmt = f.mnist
    row, new_q = lookup(MNIST_ROWS, MNIST_MODULE + ".input_data")
    parent = new_q.rpartition(".")[0]
    _replace_line(stmt, f"from {MNIST_MODULE} import input_data", f"from {parent} import input_data")
    stmt.imports = (parent,)
    notes.append(Note(stmt.line, "mnist_input_data", "change",
                      f"from {MNIST_MODULE} import input_data → {new_q}: {row.why}", new_q if row.runtime else None))


def _slim(f: _File, notes: list) -> None:
    if f.slim is None:
        return
    alias, stmt = f.slim
    safe = True
    for chain in f.chains:
        if chain.root != alias:
            continue
        if not chain.parts or not slim_name_safe(".".join(chain.parts)):
            safe = False
    row = TF_SLIM_ROW if safe else SLIM_RUNTIME_ROW
    _replace_line(stmt, f"import {SLIM} as", f"import {row.new} as")
    stmt.imports = (row.new,)
    notes.append(Note(stmt.line, "contrib_slim", "change", f"import {SLIM} → import {row.new}: {row.why}",
                      row.new if row.runtime else None))


def _contrib(f: _File, notes: list) -> None:
    """tf.contrib chains through CONTRIB_ROWS (`_rename.TableRenameCommand`), then the imports
    the runtime names need."""
    needed: set = set()
    edits: dict = {}  # line -> [(col, end_col, text)]
    for chain in f.chains:
        if chain.root not in f.tf_aliases:
            continue
        final_parts = list(chain.parts)
        if chain.parts and chain.parts[0] == "contrib":
            if chain.parts[:2] == ["contrib", "slim"]:
                raise _Decline
            for k in range(len(chain.parts), 0, -1):
                qname = _qname(f, chain, k)
                hit = lookup(CONTRIB_ROWS, qname)
                if hit is None:
                    continue
                row, new_q = hit
                if new_q.startswith(V1 + "."):
                    head = [chain.root, *new_q[len(V1) + 1:].split(".")]  # the import rewrite then drops compat.v1
                elif new_q.startswith("tf1clip"):
                    head = new_q.split(".")
                    needed.add(row.import_module)
                else:
                    raise _Decline
                if head[0] != chain.root and head[0] in f.tf_aliases:
                    raise _Decline
                final_parts = None
                link = chain.links[k - 1]
                edits.setdefault(chain.line, []).append((_col(chain), link.end_col_offset, ".".join(head)))
                chain.final = ".".join([*head, *chain.parts[k:]])
                notes.append(Note(chain.line, "contrib_symbols", "change", f"{qname} → {new_q}: {row.why}",
                                  new_q if row.runtime else None))
                break
            else:
                raise _Decline  # no row: a place for a human
        if final_parts is not None:
            chain.final = ".".join([chain.root, *final_parts])
    for line, spans in edits.items():
        _splice(f, line, spans)
    if needed:
        _add_imports(f, needed)


def _col(chain: _Chain) -> int:
    root = chain.links[0].value if chain.links else chain.node
    return root.col_offset


def _splice(f: _File, line: int, spans: list) -> None:
    """Replace byte spans of input line `line` (ast columns are UTF-8 offsets)."""
    stmt = next(s for s in f.stmts if s.line <= line < s.line + len(s.lines))
    i = line - stmt.line
    raw = stmt.lines[i].encode("utf-8")
    for start, end, new in sorted(spans, reverse=True):
        raw = raw[:start] + new.encode("utf-8") + raw[end:]
    stmt.lines[i] = raw.decode("utf-8")


def _add_imports(f: _File, modules: set) -> None:
    """What libcst's AddImportsVisitor does for `import M` lines: after the first block of
    import lines (past a docstring), then a blank line before the next statement."""
    start = 1 if _docstring_first(f) else 0
    at = start
    while at < len(f.stmts) and f.stmts[at].simple_import:
        at += 1
    if at == start or at == len(f.stmts):
        raise _Decline
    for stmt in f.stmts[start:at]:
        if any(m in stmt.imports for m in modules):
            raise _Decline  # already imported: AddImportsVisitor would add nothing
    new = [_Stmt([], [f"import {m}\n"], 0, (m,), True) for m in sorted(modules)]
    after = f.stmts[at]
    if not after.lead or after.lead[0].strip():
        after.lead = ["\n", *after.lead]
    f.stmts[at:at] = new


def _docstring_first(f: _File) -> bool:
    node = f.stmts[0].node
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__strict__" for t in node.targets):
        raise _Decline
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, (str, bytes))):
        return False
    source = "".join(f.stmts[0].lines)
    strings = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.STRING]
    if len(strings) != 1:
        raise _Decline  # implicitly concatenated: libcst's ConcatenatedString, not a SimpleString
    return True


def _compat(f: _File, notes: list) -> None:
    owner = {id(stmt): alias for alias, stmts in f.tf_aliases.items() for stmt in stmts}
    for stmt in f.stmts:
        alias = owner.get(id(stmt))
        if alias is None:
            continue
        _replace_line(stmt, f"import tensorflow as {alias}", f"import {V1} as {alias}")
        stmt.imports = (V1,)
        notes.append(Note(stmt.line, "compat_v1_imports", "change",
                          f"import tensorflow as {alias} → import {V1} as {alias}"))


def _imports_any(stmt: _Stmt, packages) -> bool:
    return stmt.simple_import and any(m == p or m.startswith(p + ".") for m in stmt.imports for p in packages)


def _disable_v2(f: _File, notes: list) -> None:
    first = next((i for i, s in enumerate(f.stmts) if _imports_any(s, (TF,))), None)
    if first is None or not f.stmts[first].line:
        raise _Decline
    end = first
    while end + 1 < len(f.stmts) and _imports_any(f.stmts[end + 1], TF_IMPORTING):
        end += 1
    alias = None
    for stmt in f.stmts[:end + 1]:
        if stmt.imports == (V1,):
            alias = next(a for a, stmts in f.tf_aliases.items() if any(s is stmt for s in stmts))
            break
    if alias is None:
        raise _Decline
    call = f"{alias}.disable_v2_behavior()"
    f.stmts.insert(end + 1, _Stmt([], [call + "\n"]))
    notes.append(Note(f.stmts[first].line, "disable_v2_behavior", "change",
                      f"added {call} after the TensorFlow imports: TF 1 graph code needs v2 behaviour off on TF 2.21"))


def _legacy_keras(f: _File, notes: list) -> None:
    first_use = None
    for chain in f.chains:
        if chain.root not in f.tf_aliases or chain.final is None:
            continue
        root, _, rest = chain.final.partition(".")
        # its qualified name once the import is tensorflow.compat.v1 (else a runtime name)
        qname = (f"{V1}.{rest}" if rest else V1) if root == chain.root else chain.final
        if needs_legacy_keras(qname):
            first_use = chain.final
            break
    if first_use is None:
        return
    anchor = next((i for i, s in enumerate(f.stmts) if _imports_any(s, TF_IMPORTING)), None)
    if anchor is None or not f.stmts[anchor].line:
        raise _Decline
    stmt = f.stmts[anchor]
    has_os = any(s.imports_os for s in f.stmts[:anchor])
    new = [] if has_os else [_Stmt([], ["import os\n"])]
    new.append(_Stmt([], ['os.environ["TF_USE_LEGACY_KERAS"] = "1"\n']))
    new[0].lead, stmt.lead = stmt.lead, []
    f.stmts[anchor:anchor] = new
    notes.append(Note(stmt.line, "legacy_keras", "change",
                      "set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported: tf.layers, rnn cells "
                      f"and graph-mode tf.keras need legacy Keras (tf-keras) on TF 2.21 (first use: {first_use})"))

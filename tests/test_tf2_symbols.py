"""`codemods.tf2.symbols` (CPython's symbol tables) gives the answers libcst's ScopeProvider gave:
on every fixture, and on the forms where the two could part (globals, classes, comprehensions,
lambdas, decorators, builtins), and where libcst misses a binding (a `case` capture)."""
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ScopeProvider

from codemods._base import walk
from codemods.tf2 import symbols
from codemods.tf2.names import ImportTable, unbound_names

ROOT = Path(__file__).resolve().parents[1]

FORMS = '''
import os, numpy as np
from a import b as c
def f(x, *args, k=default, **kw):
    global g
    g = 1
    return x + y + len(x) + np.z + f(x)
class C(Base):
    q = 1
    def m(self):
        return q + self.q
    r = [q for _ in range(3)]
@dec
def h():
    def inner():
        nonlocal t
        t = 2
        return t + u2
    t = 1
    return inner
lam = lambda z, w2=w: z + w3
total = [k for k in u if k > cut]
try:
    pass
except ValueError as err:
    print(err, missing)
with open(path) as fh:
    fh.read()
while (n := next_n()):
    n
'''

# libcst's ScopeProvider does not see a `case` pattern's captures as bindings; CPython does
MATCH = '''
match point:
    case (px, *rest):
        px
    case {"a": av, **others}:
        av
'''


def _old_unbound(source: str) -> frozenset:
    scopes = MetadataWrapper(cst.parse_module(source)).resolve(ScopeProvider)
    return frozenset(unbound_names(scopes))


def _old_sites(source: str) -> dict:
    """name → sorted import flags of libcst's assignments (the counts the import table reads)."""
    scopes = MetadataWrapper(cst.parse_module(source)).resolve(ScopeProvider)
    nodes: dict = {}
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():
        for a in scope.assignments:
            node = getattr(a, "node", None)
            if node is not None:
                nodes.setdefault(a.name, {})[id(node)] = isinstance(node, (cst.Import, cst.ImportFrom))
    return {k: sorted(v.values()) for k, v in nodes.items()}


def _new_sites(source: str) -> dict:
    out = {}
    for name, sites in symbols.binding_sites(source).items():
        out[name] = sorted(s.is_import for s in sites)
    return out


def _sources():
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        try:
            text = path.read_text()
            compile(text, str(path), "exec")
        except (SyntaxError, UnicodeDecodeError):
            continue
        yield path.relative_to(ROOT).as_posix(), text


def test_the_forms_where_they_could_part():
    assert symbols.unbound(FORMS) == _old_unbound(FORMS)
    assert symbols.unbound(FORMS) == {"default", "y", "Base", "dec", "u2", "w", "w3", "u", "cut", "missing",
                                      "path", "next_n", "q"}  # `q`: a class body's name is not seen by its methods
    assert _new_sites(FORMS) == _old_sites(FORMS)
    assert _new_sites(FORMS)["c"] == [True] and _new_sites(FORMS)["t"] == [False, False]


def test_match_captures_are_bound():
    assert symbols.unbound(MATCH) == {"point"}
    assert {"px", "rest", "av", "others"} <= _old_unbound(MATCH)  # what libcst answered
    assert all(len(symbols.binding_sites(MATCH)[n]) == 1 for n in ("px", "rest", "av", "others"))


@pytest.mark.parametrize("rel, text", list(_sources()),
                         ids=[rel for rel, _ in _sources()])
def test_every_fixture_same_answers(rel, text):
    assert symbols.unbound(text) == _old_unbound(text), rel
    assert _new_sites(text) == _old_sites(text), rel


def test_free_names_of_a_function():
    fn = '''@tf.function
def step(x, lr=rate):
    global counter
    counter = counter + 1
    return model(x) * lr + len(x) + step.calls + [v for v in extra]
'''
    assert symbols.free_names(fn) == {"tf", "rate", "model", "extra"}
    assert symbols.free_names(fn, module_bound_too=True) == {"tf", "rate", "model", "extra", "counter", "step"}


def test_import_table_refuses_a_rebound_import_at_its_line():
    source = "import tensorflow as tf\nx = 1\n\ndef f():\n    tf = 2\n    return tf\n"
    with pytest.raises(Exception) as info:
        ImportTable.read(cst.parse_module(source))
    assert info.value.line == 5 and "`tf` names an import of TensorFlow" in info.value.reason


@pytest.mark.parametrize("rel, text", list(_sources())[::7], ids=[rel for rel, _ in list(_sources())[::7]])
def test_start_lines_are_the_providers(rel, text):
    """`lines.start_lines` (libcst's printer, counting newlines) gives every node the line libcst's
    PositionProvider starts it on."""
    from libcst.metadata import PositionProvider

    from codemods.tf2.lines import start_lines
    module = cst.parse_module(text)
    provided = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert start_lines(module) == {node: where.start.line for node, where in provided.items()}
    # its keys hold the module's names and imports in the order of a walk (the usage classifier reads them so)
    kinds = (cst.Name, cst.Attribute, cst.Import, cst.ImportFrom)
    assert [n for n in start_lines(module) if type(n) in kinds] == \
        [n for n in dict.fromkeys(walk(module)) if type(n) in kinds]


@pytest.mark.parametrize("text", ["x = 1\r\ny = (2,\r\n     3)\r\nz = y\r\n", "a = 1\rb = [\r 2]\rc = b\r",
                                  "def f():\n    '''doc\n\n    '''\n    # a comment\n    return (1 +\n            2)\n"],
                         ids=["crlf", "cr", "strings-and-comments"])
def test_start_lines_count_every_newline_spelling(text):
    """CRLF, a lone CR and newlines inside strings and comments move lines as they do for libcst."""
    from libcst.metadata import PositionProvider

    from codemods.tf2.lines import start_lines
    module = cst.parse_module(text)
    provided = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    assert start_lines(module) == {node: where.start.line for node, where in provided.items()}
    assert max(start_lines(module).values()) == len(text.splitlines())  # the last line starts a node

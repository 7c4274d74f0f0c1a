"""codemods.children.children(node) is libcst's `node.children`: the same nodes, in the same order."""
from pathlib import Path

import libcst as cst

from codemods.children import children, visit_order

ROOT = Path(__file__).resolve().parent.parent

# Python syntax the fixtures may not have: every statement and expression form libcst parses.
EVERY_FORM = '''
"""doc"""
from __future__ import annotations
import a.b as c, d
from .e import (f as g, h,)
from . import *
@dec(1, *xs, k=2, **kw)
async def fn(p, /, q: int = 1, *args, r, s=2, **kwargs) -> "T":
    global G
    nonlocal_free = lambda x, *y, z=1, **w: (x, y, z, w)
    async with m() as (n, o), p2:
        async for i, *j in k[1:2, ::3, ...]:
            await t
            yield i
            yield from j
    try:
        raise E("x") from None
    except* (A, B) as e:
        pass
    finally:
        del a[0], b.c
    while not x and y or z: break
    else: continue
    if a := b: assert a, "m"
    elif c is not d: ...
    else: return f"{a!r:>{w}} {b=} {{}}" 'c' "d"
class K(Base, metaclass=M):
    x: int = 1
    y += 2; z @= 3; w **= 4
    def m(self): return [i for i in r if i] + {k: v for k, v in d.items()} + {*s} + (g for g in h)
match cmd:
    case Point(x=0, y=1) | [1, 2, *rest] | {"k": v, **others} if v > 0:
        print(-x, ~y, +z, x if y else z, x < y <= z != w, 1j, 0.5, 0x1F)
    case _:
        pass
'''


def _check(module: cst.Module) -> int:
    count = 0
    stack = [module]
    while stack:
        node = stack.pop()
        expected = node.children
        got = children(node)
        assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), (
            type(node).__name__, [type(n).__name__ for n in expected], [type(n).__name__ for n in got])
        stack.extend(expected)
        count += 1
    return count


def test_children_equal_libcst_on_every_form():
    assert _check(cst.parse_module(EVERY_FORM)) > 500


def test_children_equal_libcst_on_every_fixture():
    total = 0
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        try:
            module = cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue  # fixtures of unparsable input
        total += _check(module)
    assert total > 100_000


def test_visit_order_read_from_libcst():
    assert visit_order(cst.BinaryOperation) == ("lpar", "left", "operator", "right", "rpar")
    assert visit_order(cst.FunctionDef)[:3] == ("leading_lines", "decorators", "lines_after_decorators")
    assert visit_order(cst.BaseExpression) is None  # abstract: no fields of its own to read


def test_walk_statements_finds_what_a_whole_walk_finds():
    """syntax.walk_statements enters only the nodes that can hold a statement: from the module and
    from every statement it gives the statements a walk over every node gives, in the same order."""
    from codemods._base import walk
    from codemods.tf2.syntax import walk_statements

    kinds = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
    sources = [EVERY_FORM] + [p.read_bytes() for p in sorted((ROOT / "fixtures").rglob("*.py"))[::5]]
    roots = 0
    for source in sources:
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError:
            continue
        for root in [module, *(n for n in walk(module) if isinstance(n, kinds))]:
            expected = [n for n in walk(root) if isinstance(n, kinds)]
            got = list(walk_statements(root))
            assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), type(root).__name__
            roots += 1
    assert roots > 1000

"""The one `ast` walk behind `codemods.model.FileModel`: statements, scopes, bindings, references.

It fills the model's tables as it goes (every statement by id, the imports and the references in
source order) and binds only the names imports bind; the other bindings are kept by name
(`unbound_stores`) for the model to make when a rule asks about that name.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from codemods.nodes import COMPOUND, ImportAlias, ImportStmt, Reference, Stmt
from codemods.scopes import Binding, Scope


def _leaf(node, stack) -> None:
    pass


def _call(node, stack) -> None:
    for kw in reversed(node.keywords):
        stack.append(kw.value)
    stack.extend(reversed(node.args))
    stack.append(node.func)


def _binop(node, stack) -> None:
    stack.append(node.right)
    stack.append(node.left)


def _elts(node, stack) -> None:
    stack.extend(reversed(node.elts))


def _subscript(node, stack) -> None:
    stack.append(node.slice)
    stack.append(node.value)


def _value(node, stack) -> None:
    stack.append(node.value)


# Direct children of the commonest expressions, in source order (the walk's fast path).
_CHILDREN = {
    ast.Constant: _leaf, ast.Call: _call, ast.BinOp: _binop, ast.Tuple: _elts, ast.List: _elts,
    ast.Subscript: _subscript, ast.Starred: _value, ast.UnaryOp: lambda n, s: s.append(n.operand),
    ast.Compare: lambda n, s: (s.extend(reversed(n.comparators)), s.append(n.left)),
    ast.BoolOp: lambda n, s: s.extend(reversed(n.values)),
    ast.Dict: lambda n, s: s.extend(reversed([c for kv in zip(n.keys, n.values) for c in kv if c is not None])),
}


def _sub_expressions(node: ast.AST) -> Iterator[ast.expr]:
    """The expressions directly under `node`, through keywords, slices and f-string parts."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            yield child
        elif isinstance(child, ast.keyword):
            yield child.value
        elif not isinstance(child, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
            yield from _sub_expressions(child)


class Walker:
    """One recursive walk: statements, scopes, bindings, references."""

    def __init__(self, tree: ast.Module, module_scope: Scope, stmts: dict, imports: list, references: list):
        """`stmts` (id(ast.stmt) → Stmt), `imports`, `references`: the model's tables, filled here."""
        self.tree, self.module_scope = tree, module_scope
        self.stmts, self.imports, self.references = stmts, imports, references
        self.pending: list = []   # (scope, Name node, stmt, links, outer) uses resolved at the end
        self.stores: list = []    # (scope, name, position) of every other binding
        self.unbound_stores: dict = {}  # name -> [(scope, pos, stmt node)]: bound when a rule asks (FileModel.lookup)

    def run(self) -> None:
        self.block(self.tree.body, None, self.module_scope)
        imported = {alias.binding.name for imp in self.imports for alias in imp.aliases if alias.binding}
        for scope, name, pos, node in self.stores:  # other bindings matter only where they shadow an import
            if name in imported:
                bind(scope, Binding(name, scope, pos, stmt=node))
            else:
                self.unbound_stores.setdefault(name, []).append((scope, pos, node))
        for scope, name, stmt, links, outer in self.pending:
            if name.id in imported:  # only names some import binds can refer to an import
                self._resolve(scope, name, stmt, links, outer)

    # statements
    def block(self, body: list, parent: Optional[Stmt], scope: Scope) -> None:
        for index, node in enumerate(body):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            stmt = Stmt(node, parent, body, index, first, node.end_lineno)
            self.stmts[id(node)] = stmt
            self.statement(node, stmt, scope)

    def statement(self, node: ast.stmt, stmt: Stmt, scope: Scope) -> None:
        end = (node.end_lineno, node.end_col_offset)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imp = ImportStmt(node, stmt, scope)
            self.imports.append(imp)
            if not (isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)):
                for i, a in enumerate(node.names):
                    alias = ImportAlias(imp, i, a.name, a.asname)
                    imp.aliases.append(alias)
                    qname = alias.qname
                    if isinstance(node, ast.ImportFrom) and node.level:
                        qname = "." * node.level + (f"{node.module}.{a.name}" if node.module else a.name)
                    binding = Binding(alias.bound, scope, end, qname, alias)
                    alias.binding = binding
                    bind(scope, binding)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                self.expr(d, scope, stmt)
            self.arguments_outside(node.args, scope, stmt)
            if node.returns is not None:
                self.expr(node.returns, scope, stmt)
            inner = Scope("function", scope)
            self.parameters(node.args, inner)
            self._bind_target(scope, node.name, end)
            self.block(node.body, stmt, inner)
            return
        if isinstance(node, ast.ClassDef):
            for d in node.decorator_list:
                self.expr(d, scope, stmt)
            for b in node.bases:
                self.expr(b, scope, stmt)
            for k in node.keywords:
                self.expr(k.value, scope, stmt)
            inner = Scope("class", scope)
            self.block(node.body, stmt, inner)
            self._bind_target(scope, node.name, end)
            return
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            (scope.globals if isinstance(node, ast.Global) else scope.nonlocals).update(node.names)
            return
        # every other statement: its expressions in order, then its blocks
        for name, value in ast.iter_fields(node):
            if name in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            self.any(value, scope, stmt, end)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith)):
            self.block(node.body, stmt, scope)
            if getattr(node, "orelse", None):
                self.block(node.orelse, stmt, scope)
        elif isinstance(node, COMPOUND) and not isinstance(node, ast.Match):  # try
            self.block(node.body, stmt, scope)
            for handler in node.handlers:
                if handler.type is not None:
                    self.expr(handler.type, scope, stmt)
                if handler.name:
                    self._bind_target(scope, handler.name, (handler.lineno, handler.col_offset))
                self.block(handler.body, stmt, scope)
            if node.orelse:
                self.block(node.orelse, stmt, scope)
            if node.finalbody:
                self.block(node.finalbody, stmt, scope)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                self.pattern(case.pattern, scope, stmt)
                if case.guard is not None:
                    self.expr(case.guard, scope, stmt)
                self.block(case.body, stmt, scope)

    def any(self, value, scope: Scope, stmt: Stmt, end: tuple) -> None:
        if isinstance(value, list):
            for item in value:
                self.any(item, scope, stmt, end)
        elif isinstance(value, ast.expr):
            self.expr(value, scope, stmt, end)
        elif isinstance(value, ast.withitem):
            self.expr(value.context_expr, scope, stmt, end)
            if value.optional_vars is not None:
                self.expr(value.optional_vars, scope, stmt, (value.optional_vars.lineno, value.optional_vars.col_offset))
        elif isinstance(value, ast.AST):
            for _, child in ast.iter_fields(value):
                self.any(child, scope, stmt, end)

    def arguments_outside(self, args: ast.arguments, scope: Scope, stmt: Stmt) -> None:
        for default in [*args.defaults, *filter(None, args.kw_defaults)]:
            self.expr(default, scope, stmt)
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, [args.vararg, args.kwarg])]:
            if a.annotation is not None:
                self.expr(a.annotation, scope, stmt)

    def parameters(self, args: ast.arguments, inner: Scope) -> None:
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, [args.vararg, args.kwarg])]:
            self._bind_target(inner, a.arg, (0, 0))

    def pattern(self, node, scope: Scope, stmt: Stmt) -> None:
        for child in ast.walk(node):
            name = getattr(child, "name", None) if isinstance(child, (ast.MatchAs, ast.MatchStar)) else \
                getattr(child, "rest", None) if isinstance(child, ast.MatchMapping) else None
            if name:
                self._bind_target(scope, name, (child.lineno, child.col_offset))
            if isinstance(child, ast.MatchValue):
                self.expr(child.value, scope, stmt)
            elif isinstance(child, ast.MatchClass):
                self.expr(child.cls, scope, stmt)

    # expressions
    def expr(self, node: ast.expr, scope: Scope, stmt: Stmt, end: tuple | None = None) -> None:
        end = end or (stmt.node.end_lineno, stmt.node.end_col_offset)
        stack = [node]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Attribute:
                links, cur = [], node
                while type(cur) is ast.Attribute:
                    links.append(cur)
                    cur = cur.value
                if type(cur) is ast.Name:
                    links.reverse()
                    self.pending.append((scope, cur, stmt, links, node))
                else:
                    stack.append(cur)
                continue
            if kind is ast.Name:
                if type(node.ctx) is ast.Load or type(node.ctx) is ast.Del:
                    self.pending.append((scope, node, stmt, [], node))
                else:
                    self._bind_target(scope, node.id, end, stmt.node)
                continue
            if kind is ast.Lambda:
                self.arguments_outside(node.args, scope, stmt)
                inner = Scope("function", scope)
                self.parameters(node.args, inner)
                self.expr(node.body, inner, stmt, end)
                continue
            if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
                gens = node.generators
                self.expr(gens[0].iter, scope, stmt, end)
                inner = Scope("comprehension", scope)
                for i, gen in enumerate(gens):
                    if i:
                        self.expr(gen.iter, inner, stmt, end)
                    self.expr(gen.target, inner, stmt, (gen.target.lineno, gen.target.col_offset))
                    for cond in gen.ifs:
                        self.expr(cond, inner, stmt, end)
                if kind is ast.DictComp:
                    self.expr(node.key, inner, stmt, end)
                    self.expr(node.value, inner, stmt, end)
                else:
                    self.expr(node.elt, inner, stmt, end)
                continue
            if kind is ast.NamedExpr:
                target = scope
                while target.kind == "comprehension" and target.parent is not None:
                    target = target.parent
                self._bind_target(target, node.target.id, end)
                stack.append(node.value)
                continue
            children = _CHILDREN.get(kind)
            if children is not None:
                children(node, stack)
            else:
                stack.extend(reversed(list(_sub_expressions(node))))

    def _bind_target(self, scope: Scope, name: str, pos: tuple, node: Optional[ast.stmt] = None) -> None:
        self.stores.append((scope, name, pos, node))  # bound at the end, if an import binds the name too

    def _resolve(self, scope: Scope, name: ast.Name, stmt: Stmt, links: list, outer: ast.expr) -> None:
        bindings = [b for b in scope.referents(name.id, (name.lineno, name.col_offset)) if b.qname is not None]
        if not bindings:
            return
        ref = Reference(name.id, tuple(link.attr for link in links), outer, links, stmt, scope, bindings)
        for binding in bindings:
            binding.uses.append(ref)
        self.references.append(ref)


def bind(scope: Scope, binding: Binding) -> None:
    """Bind in `scope`, or where `global` / `nonlocal` send the name."""
    name = binding.name
    if name in scope.globals and scope.parent is not None:
        module = scope.module()
        binding.scope = module
        module.bind(binding)
    elif name in scope.nonlocals and scope.parent is not None:
        target = scope.visible_parent(scope)
        while target is not None and name not in target.bindings and target.parent is not None:
            target = target.visible_parent(target)
        (target or scope).bind(binding)
    else:
        scope.bind(binding)

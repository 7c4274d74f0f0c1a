"""Which TensorFlow symbol a name in the script denotes, from its imports (no TensorFlow import).

The translator rewrites and copies the user's statements (helpers are inlined, locals
renamed), so a name's meaning must not depend on metadata of the original nodes. It is
resolved from the dotted name and the module's import table instead: `tf.layers.dense`,
`tf1.layers.dense` (`import tensorflow as tf1`), `layers.dense` (`from tensorflow import
layers`) and `tf.compat.v1.layers.dense` are all `tensorflow.layers.dense`. That is exact only
while every imported name means its import everywhere in the file, which `ImportTable.read`
checks with libcst's scope analysis: a module alias rebound or shadowed anywhere is a refusal.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from codemods._base import dotted_name
from codemods.tf2 import symbols
from codemods.tf2._base import Refuse
from codemods.tf2.lines import start_lines

# Every spelling of a TF 1.x name resolves to one canonical key of the tables.
_CANONICAL = (
    ("tensorflow.compat.v1.", "tensorflow."),
    ("tensorflow.contrib.slim.", "slim."),
    ("tf_slim.", "slim."),
)
TF_PACKAGES = ("tensorflow", "tf_slim")
FLAG_MODULES = ("tensorflow.app.flags", "tensorflow.flags")
# Calls that are Python-side utilities (no graph value): files, flags, logging, dtypes, seeds.
HOST_CALLS = ("tensorflow.app.", "tensorflow.flags.", "tensorflow.logging.", "tensorflow.gfile.",
              "tensorflow.io.gfile.", "tensorflow.errors.", "tensorflow.as_dtype", "tensorflow.TensorShape",
              "tensorflow.DType", "tensorflow.random.set_seed", "tensorflow.test.", "tensorflow.sysconfig.",
              "tensorflow.config.", "tensorflow.train.latest_checkpoint", "tensorflow.dtypes.as_dtype",
              "tensorflow.train.get_checkpoint_state",
              "tensorflow.keras.initializers.", "tensorflow.initializers.")
# TF's dtypes, named as values (`return tf.float32`)
DTYPES = frozenset(f"tensorflow.{d}" for d in (
    "float16", "float32", "float64", "bfloat16", "half", "double", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bool", "string", "complex64", "complex128"))


def host_utility(qname: str) -> bool:
    """`qname` (canonical) is TensorFlow's but no graph value, called or named: a file, flag, logging or
    configuration utility, a seed, a dtype. A function whose TensorFlow is only these computes on the host."""
    return qname in DTYPES or qname.startswith(HOST_CALLS) or qname == "tensorflow.set_random_seed" or any(
        qname == m or qname.startswith(m + ".") for m in FLAG_MODULES)
# TF 1.x's private spellings of public symbols (the same function object)
_SYMBOLS = {"tensorflow.python.framework.ops.reset_default_graph": "tensorflow.reset_default_graph"}


def canonical(qname: str) -> str:
    if qname in _SYMBOLS:
        return _SYMBOLS[qname]
    for old, new in _CANONICAL:
        if qname.startswith(old):
            return new + qname[len(old):]
    if qname in ("tensorflow.contrib.slim", "tf_slim"):
        return "slim"
    return qname


def unbound_names(scopes) -> dict:
    """Names read where nothing binds them → the node of their first such read (`scopes`: libcst's
    ScopeProvider values for a module)."""
    out: dict = {}
    seen = set()
    for scope in scopes.values():
        if scope is None or id(scope) in seen:
            continue
        seen.add(id(scope))
        for access in scope.accesses:
            if not access.referents and isinstance(access.node, cst.Name):
                out.setdefault(access.node.value, access.node)
    return out


def _scope_answers(scopes, table: "ImportTable") -> tuple:
    """`symbols.binding_sites` and `symbols.unbound` from libcst's scope analysis (for a text that
    libcst parses and CPython rejects)."""
    sites: dict = {}
    for scope in {id(s): s for s in scopes.values() if s is not None}.values():
        for assignment in scope.assignments:
            node = getattr(assignment, "node", None)
            if node is not None:
                sites.setdefault(assignment.name, set()).add((table.line(node), _imported(node, assignment.name),
                                                              id(node)))
    return ({k: [symbols.Site(line, bool(imp), imp) for line, imp, _ in sorted(v)] for k, v in sites.items()},
            frozenset(unbound_names(scopes)))


def same_import(a: str, b: str) -> bool:
    """Whether two imports bind the same thing for a TF 1.x program (`tensorflow` and
    `tensorflow.compat.v1` do; so do `tf_slim` and `tensorflow.contrib.slim`)."""
    return bool(a) and canonical(a + ".x") == canonical(b + ".x")


def _imported(node, name: str) -> str:
    """What the import statement `node` binds `name` to, as `symbols.Site.imported` spells it ("" for
    any other binding)."""
    if isinstance(node, cst.Import):
        for a in node.names:
            dotted = dotted_name(a.name) or ""
            if (a.asname.name.value if a.asname else dotted.split(".")[0]) == name:
                return dotted if a.asname else dotted.split(".")[0]
    elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
        module = dotted_name(node.module) if node.module is not None else None
        for a in node.names:
            if (a.asname.name.value if a.asname else dotted_name(a.name)) == name:
                return "." * len(node.relative) + ".".join(filter(None, (module, dotted_name(a.name))))
    return ""


def short(qname: str) -> str:
    """`tensorflow.nn.dropout` → `tf.nn.dropout`, as messages and the upgrade spec spell it."""
    return "tf." + qname[len("tensorflow."):] if qname.startswith("tensorflow.") else qname


@dataclass
class ImportTable:
    """Names bound by imports at module level → what they import; and the positions of nodes.

    A module-level name assigned a TensorFlow name (`T = tf`, `opt_cls = tf.train.AdamOptimizer`)
    and bound nowhere else in the file (no other assignment in any scope, no `global` rebinding) is
    an alias: it denotes that symbol everywhere, as an import would (`aliases`: name → the
    statement; the output drops it when nothing reads the name any more)."""

    bindings: dict = field(default_factory=dict)   # local name -> dotted module/symbol
    aliases: dict = field(default_factory=dict)    # alias name -> its `name = tf.X` statement
    tf_alias: Optional[str] = None                 # the module's name for `tensorflow`, if any
    positions: dict = field(default_factory=dict)  # original node -> 1-based line
    unbound: frozenset = frozenset()               # names the module reads where nothing binds them
    # imported names that every binding site in the file (a function's own import too) binds to the same import
    same_everywhere: frozenset = frozenset()
    import_targets: dict = field(default_factory=dict)  # name -> what its import sites bind it to, in any scope
    # name -> its binding sites (`symbols.binding_sites` of the text read; None when CPython rejected the text)
    sites: Optional[dict] = None

    @classmethod
    def read(cls, module: cst.Module, source: Optional[str] = None) -> tuple["ImportTable", cst.Module]:
        """The table and the module whose nodes `line()` knows. Raises Refuse when an imported
        name is rebound or shadowed somewhere (its meaning would depend on the place). Where each
        name is bound, and which names nothing binds, come from CPython's symbol tables
        (`symbols`); libcst's scope analysis answers for a text CPython rejects. `source`: the
        module's text when the caller parsed it from one (else printed here)."""
        table = cls(positions=start_lines(module))
        try:
            source = module.code if source is None else source
            sites, unbound = symbols.binding_sites(source), symbols.unbound(source)
            table.sites = sites
        except SyntaxError:
            sites, unbound = _scope_answers(MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider),
                                            table)
        for st in module.body:
            if not isinstance(st, cst.SimpleStatementLine):
                continue
            for small in st.body:
                table._add_import(small)
                table._add_alias(small, sites)
        table._add_function_imports(sites)
        table._check_not_shadowed(sites)
        table.unbound = unbound
        table.import_targets = {name: tuple(dict.fromkeys(site.imported for site in ss if site.imported))
                                for name, ss in sites.items() if any(site.imported for site in ss)}
        table.same_everywhere = frozenset(
            name for name, dotted in table.bindings.items()
            if name not in table.aliases and all(same_import(site.imported, dotted) for site in sites.get(name, ())))
        return table, module

    def _add_import(self, small) -> None:
        if isinstance(small, cst.Import):
            for a in small.names:
                dotted = dotted_name(a.name) or ""
                if a.asname is not None:
                    self.bindings[a.asname.name.value] = dotted
                else:
                    self.bindings.setdefault(dotted.split(".")[0], dotted.split(".")[0])
                if dotted in ("tensorflow", "tensorflow.compat.v1") and a.asname is not None or dotted == "tensorflow":
                    if self.tf_alias is not None:
                        continue
                    self.tf_alias = a.asname.name.value if a.asname else "tensorflow"
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
            base = dotted_name(small.module) or ""
            if isinstance(small.names, cst.ImportStar):
                if base.split(".")[0] in TF_PACKAGES:
                    raise Refuse(self.line(small), f"`from {base} import *`: which names are TensorFlow's is "
                                                   "not known without importing it")
                return
            for a in small.names:
                local = a.asname.name.value if a.asname else (dotted_name(a.name) or "")
                self.bindings[local] = f"{base}.{dotted_name(a.name)}"
                if self.bindings[local] == "tensorflow.compat.v1" and self.tf_alias is None:
                    self.tf_alias = local  # `from tensorflow.compat import v1 as tf`: becomes TF 2's

    def _add_function_imports(self, sites: dict) -> None:
        """A TensorFlow module or name the file imports only inside functions (`def main(): import
        tensorflow.examples.tutorials.mnist.input_data as input_data`), every site the same import, and binds
        nowhere else: it denotes that import wherever it is read (a scope without the import would read it
        unbound, a NameError on TF 1.x too)."""
        for name, found in sites.items():
            targets = {site.imported for site in found}
            if name in self.bindings or not found or not all(site.is_import for site in found):
                continue
            target = next(iter(targets))
            if target.split(".")[0] in TF_PACKAGES and all(same_import(t, target) for t in targets):
                self.bindings[name] = target

    def symbol_assigned(self, small) -> Optional[tuple]:
        """(name, dotted symbol as imported) when `small` is `name = tf.X` (a TensorFlow name
        referred to, not called: `T = tf`, `opt_cls = tf.train.AdamOptimizer`), else None."""
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, (cst.Name, cst.Attribute))):
            return None
        raw = self.raw(small.value)
        if raw is None or raw.split(".")[0] not in TF_PACKAGES:
            return None
        return small.targets[0].target.value, raw

    def _add_alias(self, small, sites: dict) -> None:
        """`name = tf.X` at module level, where `name` has no other binding anywhere."""
        assigned = self.symbol_assigned(small)
        if assigned is None or assigned[0] in self.bindings or canonical(assigned[1]).startswith(FLAG_MODULES):
            return  # (the flags, `FLAGS = tf.app.flags.FLAGS`, are the script's state: set and changed by it)
        name, raw = assigned
        if len(sites.get(name, ())) != 1 or name in symbols.BUILTINS:
            return  # bound again somewhere (or a builtin): its meaning depends on the place, it stays a value
        self.bindings[name] = raw
        self.aliases[name] = small

    def keeping_aliases(self, kept: set) -> "ImportTable":
        """This table for a program that still assigns only the aliases `kept` as the input did (the
        output of a translation: an alias it dropped or bound to something else denotes nothing there)."""
        gone = set(self.aliases) - set(kept)
        return ImportTable(bindings={k: v for k, v in self.bindings.items() if k not in gone},
                           aliases={k: v for k, v in self.aliases.items() if k not in gone},
                           tf_alias=self.tf_alias, positions=self.positions, unbound=self.unbound)

    def _check_not_shadowed(self, sites: dict) -> None:
        tf_names = {k for k, v in self.bindings.items() if v.split(".")[0] in TF_PACKAGES and k not in self.aliases}
        others = sorted((site.line, name) for name in tf_names for site in sites.get(name, ())
                        if not site.is_import or not same_import(site.imported, self.bindings[name]))
        if others:
            line, name = others[0]
            raise Refuse(line, f"`{name}` names an import of TensorFlow and is also bound here: "
                               "which calls are TensorFlow's depends on the place")

    # -- queries ------------------------------------------------------------------------------
    def line(self, node: Optional[cst.CSTNode]) -> int:
        return self.positions.get(node, 0) if node is not None else 0

    def qualified(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        """The canonical qualified name of a Name/Attribute chain (or a Call's func) rooted at
        an import, else None."""
        raw = self.raw(node)
        return canonical(raw) if raw is not None else None

    def raw(self, node: Optional[cst.CSTNode]) -> Optional[str]:
        """The dotted name a Name/Attribute chain rooted at an import denotes, as imported."""
        if isinstance(node, cst.Call):
            node = node.func
        dotted = dotted_name(node) if node is not None else None
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.bindings.get(head)
        if base is None:
            return None
        return f"{base}.{rest}" if rest else base

    def usage(self, module: cst.Module):
        """`codemods._usage.classify` of `module` (TF 1 / TF 2 uses) from this table's bindings."""
        from codemods._usage import classify

        def imported(node) -> set:
            raw = self.raw(node)
            return {raw} if raw is not None else set()
        # the module whose lines the table knows: its nodes are the table's keys, in source order
        return classify(module, imported, self.line, self.positions if module in self.positions else None)

    def is_tf(self, node: Optional[cst.CSTNode]) -> bool:
        q = self.qualified(node)
        return q is not None and (q.split(".")[0] in ("tensorflow", "slim"))

    def tf_name(self) -> str:
        """The name generated code uses for `tensorflow` (the script's own, else `tf`)."""
        return self.tf_alias or "tf"


def tf_expr(alias: str, qname: str) -> cst.BaseExpression:
    """The expression for a TF 2 qualified name (`tensorflow.keras.layers.Dense` or
    `tf.keras.layers.Dense`) under the module's alias: `tf.keras.layers.Dense`."""
    node: cst.BaseExpression = cst.Name(alias)
    if qname in ("tensorflow", "tf"):  # the module itself (`T = tf`): the alias, not `tf.tensorflow`
        return node
    for prefix in ("tensorflow.", "tf."):
        if qname.startswith(prefix):
            qname = qname[len(prefix):]
            break
    for part in qname.split("."):
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def tf_alias(module: cst.Module) -> str:
    """The module's name for `tensorflow` from its top-level `import tensorflow [as X]` (else `tf`)."""
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Import):
                    for a in small.names:
                        if dotted_name(a.name) == "tensorflow":
                            return a.asname.name.value if a.asname else "tensorflow"
    return "tf"

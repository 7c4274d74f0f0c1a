"""The compat tier's engine: every rule over one file model, their edits applied together.

`apply(text, rules)` parses the text once (`codemods.model.FileModel`, Python's `ast`),
classifies it once (TF 1 graph code, TF 1 eager, TF 2, mixed: `codemods._usage`), then calls
the rules in one pass, the way Fixit runs its rules: every rule's `visit_import` on each
import statement, every rule's `visit_reference` on each use of an imported name, then every
rule's `leave_module` on the module's planned layout. Edits are recorded here, checked
against each other (two rules editing the same node, or one node inside another, differently:
`Conflict`, the file is left unchanged), and applied together by `codemods.render`, which
re-parses with libcst only the statements that change, so the output keeps the file's
formatting and costs little more than the `ast` parse when few lines change.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from codemods import layout, render
from codemods._base import Note
from codemods._usage import Usage, classify_modules, classify_qname
from codemods.errors import Conflict, EngineError
from codemods.imports import AliasPlan
from codemods.model import FileModel
from codemods.nodes import ImportAlias, ImportStmt, Reference


@dataclass
class ChainEdit:
    rule: str
    ref: Reference
    parts: int                    # how many parts after the root the replaced link covers
    text: str                     # the dotted expression that replaces it
    qname: Optional[str]          # the qualified name it denotes in the output (None: unknown)


@dataclass
class NodeEdit:
    rule: str
    node: object                  # the ast expression it replaces (an ast.Call or ast.Attribute)
    stmt: object                  # the innermost statement holding it (a Stmt)
    make: object                  # libcst node (after the edits inside it) -> its replacement


@dataclass
class Result:
    text: str
    notes: list = field(default_factory=list)
    reason: str = ""              # why nothing changed, when nothing did


class Run:
    """One file's pass: the model, its classification, and the edits and notes of the rules."""

    def __init__(self, model: FileModel, usage: Usage, rule_ids: Sequence[str]):
        self.file = model
        self.usage = usage
        self.order = {rule: i for i, rule in enumerate(rule_ids)}
        self.notes: list = []                  # (rule order, sequence, Note)
        self.chain_edits: dict = {}            # id(ref) -> ChainEdit
        self.node_edits: dict = {}             # id(ast node) -> NodeEdit
        self.alias_plans: dict = {}            # id(ImportAlias) -> AliasPlan
        self.from_modules: dict = {}           # id(ImportStmt) -> (rule, module)
        self.unused_keys: dict = {}            # RemoveImportsVisitor key -> rule
        self.added: list = []                  # (rule order, module) for `import module`
        self.inserted: list = []               # filled by codemods.layout
        self.rebound: set = set()              # id(ImportAlias) whose name a rule binds anew

    # -- notes -----------------------------------------------------------------------------------
    def note(self, rule, line: int, kind: str, message: str, runtime: Optional[str]) -> None:
        note = Note(line, rule.RULE, kind, message, runtime)
        self.notes.append((self.order.get(rule.RULE, 0), len(self.notes), note))

    # -- expression edits -------------------------------------------------------------------------
    def replace(self, rule, ref: Reference, parts: int, text: str, qname: Optional[str] = None) -> None:
        """Replace `ref`'s root and first `parts` attributes (a whole link of the chain) by `text`."""
        edit = ChainEdit(rule.RULE, ref, parts, text, qname)
        old = self.chain_edits.get(id(ref))
        if old is not None and (old.parts, old.text) != (parts, text):
            what = "the same name" if old.parts == parts else "nested names"
            raise Conflict(f"rules {old.rule} and {rule.RULE} rewrite {what} in {ref.text} differently "
                           f"({old.text!r} / {text!r}); file left unchanged, please report this", ref.line)
        self.chain_edits[id(ref)] = edit

    def transform(self, rule, node, stmt, make) -> None:
        """Replace the call or attribute `node` (an ast.Call or ast.Attribute of statement `stmt`)
        by `make(libcst node)`, which sees the node with the edits inside it already made (a
        rewritten argument, ...) and returns its replacement. One rule's edit a node; a second
        one is a Conflict."""
        old = self.node_edits.get(id(node))
        if old is not None and old.rule != rule.RULE:
            raise Conflict(f"rules {old.rule} and {rule.RULE} both rewrite the call on this line; file left "
                           "unchanged, please report this", node.lineno)
        self.node_edits[id(node)] = NodeEdit(rule.RULE, node, stmt, make)

    def edit_of(self, ref: Reference) -> Optional[ChainEdit]:
        return self.chain_edits.get(id(ref))

    # -- import edits ------------------------------------------------------------------------------
    def rename_alias(self, rule, alias: ImportAlias, dotted: str, table: bool = False) -> None:
        """`import X [as Y]`: X becomes `dotted`."""
        self._plan(alias, AliasPlan(rule.RULE, "rename", dotted, table=table))

    def move_alias(self, rule, alias: ImportAlias, parent: str, last: str) -> None:
        """`from M import N [as B]`: the alias goes into a new `from parent import last [as B]`
        (`import last [as B]` when `parent` is empty)."""
        self._plan(alias, AliasPlan(rule.RULE, "move", parent, last, alias.asname or alias.name, table=True))

    def _plan(self, alias: ImportAlias, plan: AliasPlan) -> None:
        old = self.alias_plans.get(id(alias))
        if old is not None and old != plan:
            raise Conflict(f"rules {old.rule} and {plan.rule} rewrite the import of {alias.name} differently; "
                           "file left unchanged, please report this", alias.stmt.line)
        other = self.from_modules.get(id(alias.stmt))
        if other is not None and other[0] != plan.rule:
            raise Conflict(f"rules {other[0]} and {plan.rule} both rewrite the import on this line; file left "
                           "unchanged, please report this", alias.stmt.line)
        self.alias_plans[id(alias)] = plan

    def retarget_alias(self, rule, alias: ImportAlias, name: str) -> None:
        """`from M import N [as B]`: N becomes `name`, still bound to B (`from M import name as B`)."""
        self._plan(alias, AliasPlan(rule.RULE, "retarget", name, asname=alias.asname or alias.name))

    def set_from_module(self, rule, imp: ImportStmt, module: str) -> None:
        """`from M import ...` becomes `from module import ...`."""
        old = self.from_modules.get(id(imp))
        planned = {p.rule for a in imp.aliases if (p := self.alias_plans.get(id(a))) is not None}
        if (old is not None and old != (rule.RULE, module)) or planned - {rule.RULE}:
            raise Conflict(f"rules {', '.join(sorted(planned | {rule.RULE}))} both rewrite the import on this "
                           "line; file left unchanged, please report this", imp.line)
        self.from_modules[id(imp)] = (rule.RULE, module)

    def from_module(self, imp: ImportStmt) -> Optional[str]:
        """The module a rule set for `from ... import` statement `imp`, if any."""
        planned = self.from_modules.get(id(imp))
        return planned[1] if planned is not None else None

    def remove_if_unused(self, rule, alias: ImportAlias, name: Optional[str] = None) -> None:
        """Drop the import of `alias` (by RemoveImportsVisitor's key: every import of the same
        module, name and alias) wherever no use of what it binds is left after the edits.
        `name`: the alias' dotted name once renamed (`import tensorflow.contrib.x` → 'tensorflow')."""
        if alias.stmt.is_import:
            key = (name or alias.name, None, alias.asname)
        else:
            key = (alias.stmt.module, alias.name, alias.asname)
        self.unused_keys.setdefault(key, rule.RULE)

    def rebind(self, rule, alias: ImportAlias) -> None:
        """The rule binds `alias`' name itself (a statement it inserts): the import goes."""
        self.rebound.add(id(alias))
        self.remove_if_unused(rule, alias)

    def remove_unused_by_reference(self, rule, ref: Reference) -> None:
        """RemoveImportsVisitor.remove_unused_import_by_node on `ref`'s root."""
        for binding in ref.bindings:
            alias = binding.alias
            if alias is not None and ref.root == (alias.asname or alias.name):  # libcst's RemovedNodeVisitor
                self.remove_if_unused(rule, alias)

    def add_import(self, rule, module: str) -> None:
        """`import module` at the end of the module's first block of imports (AddImportsVisitor)."""
        entry = (self.order.get(rule.RULE, 0), module)
        if entry not in self.added:
            self.added.append(entry)

    # -- what names will denote --------------------------------------------------------------------
    def bound(self, binding) -> Optional[str]:
        """The qualified name `binding`'s name denotes once every import edit is applied."""
        alias = binding.alias
        if alias is None:
            return None
        plan = self.alias_plans.get(id(alias))
        if plan is None:
            if alias.stmt.is_import or id(alias.stmt) not in self.from_modules:
                return binding.qname
            return f"{self.from_modules[id(alias.stmt)][1]}.{alias.name}"
        if plan.kind == "rename":
            return plan.name if alias.asname else plan.name.split(".")[0]
        if plan.kind == "retarget":
            return f"{alias.stmt.module}.{plan.name}"
        return f"{plan.name}.{plan.last}" if plan.name else plan.last

    def final_qname(self, ref: Reference) -> Optional[str]:
        """The qualified name `ref` denotes once every edit is applied (None: unknown or several)."""
        edit = self.chain_edits.get(id(ref))
        parts = ref.parts
        if edit is not None:
            rest = ref.parts[edit.parts:]
            if edit.qname is not None:
                return ".".join((edit.qname, *rest))
            root, _, tail = edit.text.partition(".")
            if root != ref.root:  # written in full (`tensorflow.compat.v1.X`)
                return ".".join((edit.text, *rest))
            parts = (*tail.split("."), *rest) if tail else rest
        finals = {self.bound(b) for b in ref.bindings}
        if len(finals) != 1 or None in finals:
            return None
        return ".".join((finals.pop(), *parts))

    def visible_alias(self, ref: Reference, module: str) -> Optional[str]:
        """A name bound to `module` by a module-level `import module as name` (or `import module`,
        for an undotted module) after the import edits, and visible from `ref` as exactly that."""
        for imp in self.file.imports:
            if imp.stmt.parent is not None or not imp.is_import:
                continue
            for alias in imp.aliases:
                if alias.asname is not None:
                    plan = self.alias_plans.get(id(alias))
                    final = plan.name if plan is not None and plan.kind == "rename" else alias.name
                    if final != module:
                        continue
                    name = alias.asname
                elif alias.name == module and "." not in module and id(alias) not in self.alias_plans:
                    name = module
                else:
                    continue
                seen = ref.scope.lookup(name, ref.scope)
                if seen and {self.bound(b) if b.alias is not None else f"<local {name}>" for b in seen} == {module}:
                    return name
        return None

    def will_remove(self, alias: ImportAlias) -> bool:
        """True when `alias` goes: another rule asked for it to be removed once unused, and it is."""
        if alias.stmt.is_import:
            plan = self.alias_plans.get(id(alias))
            name = plan.name if plan is not None and plan.table and plan.kind == "rename" else alias.name
            key = (name, None, alias.asname)
        else:
            key = (alias.stmt.module, alias.name, alias.asname)
        return key in self.unused_keys and self.unused(alias)

    def unused(self, alias: ImportAlias) -> bool:
        """True when no use of what `alias` binds is left once the edits are applied."""
        binding = alias.binding
        if id(alias) in self.rebound:
            return True
        return binding is not None and all(id(ref) in self.chain_edits for ref in binding.uses)


def classify(model: FileModel) -> Usage:
    """`codemods._usage.classify` on the file model: TF 1 / TF 2 evidence from the modules
    import statements name and from every use of an imported name (the names inside an import
    statement are not uses: libcst's scope analysis gives them no scope either)."""
    usage = Usage()
    for imp in model.imports:
        classify_modules(usage, imp.modules, imp.line)
    for ref in model.references:
        names = ref.qnames
        if not names:
            continue
        for k in range(len(ref.parts), -1, -1):  # libcst's walk: the outermost link first
            source = ref.prefix_text(k)
            for qname in names:
                classify_qname(usage, ".".join((qname, *ref.parts[:k])), source, ref.line)
    usage.tf1.sort(key=lambda t: t[0])
    usage.tf2.sort(key=lambda t: t[0])
    return usage


def apply(text: str, rules: Sequence[type], filename: str = "<string>") -> Result:
    """Run `rules` (Rule classes, in report order) over `text` in one pass."""
    try:
        model = FileModel(text, filename)
    except SyntaxError as exc:
        raise EngineError(f"cannot parse this file: {exc.msg}", exc.lineno or 0) from None
    except (ValueError, RecursionError) as exc:
        raise EngineError(f"cannot parse this file: {exc}") from None
    usage = classify(model)
    verdict = usage.verdict
    reason, first_notes = "already migrated", []
    if verdict in ("none", "mixed") and not all(r.ANY_FILE for r in rules):
        # not TF 1.x code: only the rules that apply to any file
        rules = [r for r in rules if r.ANY_FILE]
        if verdict == "none":
            reason = "does not import TensorFlow" if not usage.imports_tf else "uses no TF 1.x-only API"
        else:
            reason = "mixes TF 2 and TF 1 code: left for a human"
            first_notes = [Note(usage.tf2[0][0], "compat_tier", "human", usage.mixed_message())]
    run = Run(model, usage, [r.RULE for r in rules])
    active = [cls(run) for cls in rules if cls.applies_to(text)]
    if not active:
        return Result(text, first_notes, reason=reason)
    try:
        for imp in model.imports:
            for rule in active:
                rule.visit_import(imp)
        for ref in model.references:
            for rule in active:
                rule.visit_reference(ref)
        for rule in active:
            rule.leave_references()
        plan = layout.Layout(run)
        for rule in active:
            rule.leave_module(plan)
    except EngineError:
        raise
    except Exception as exc:  # noqa: BLE001 - a rule bug must not lose the file, only skip it
        failing = next((r.RULE for r in active if _raised_in(exc, r)), "?")
        raise EngineError(f"rule {failing} failed: {type(exc).__name__}: {exc}") from exc
    out = render.render(run, plan)
    if out != text:
        try:  # never hand back what does not compile
            compile(out, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            raise EngineError(f"the rewritten file does not parse ({exc}); left unchanged, please report this") from exc
    notes = list(first_notes)
    for _, _, note in sorted(run.notes, key=lambda t: (t[0], t[1])):
        if note not in notes:
            notes.append(note)
    notes.sort(key=lambda n: (n.line, n.kind != "change"))
    return Result(out, notes, reason="" if out != text else reason)


def _raised_in(exc: BaseException, rule) -> bool:
    tb = exc.__traceback__
    module = type(rule).__module__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == module:
            return True
        tb = tb.tb_next
    return False

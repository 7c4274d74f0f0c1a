"""The TF2 tier's driver: a TF 1.x file → its TF 2 program, or the reason it cannot be exact.

    from codemods.tf2.translator import translate
    result = translate(text, "train.py")   # result.text is None when it cannot be done exactly

Reads the imports (`names`), reads the program into its model and writes the TF 2 form
(`interpret.Translator`; a TF 1.x eager script has its API mapped instead: `eager`), fixes the imports (`tensorflow.compat.v1` → `tensorflow`, TF 1.x-only
modules the output no longer uses removed), then checks what came out: every name it reads is
bound and no state is created inside a step (`output_checks`), no TF 1.x-only API left
(`codemods._usage.classify`), and it compiles. Any exception inside the tier is a refusal at the
input line it was working on (`failures`). Never imports TensorFlow.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from codemods._base import dotted_name
from codemods.tf2 import callees, imported_functions, output_checks, unroll
from codemods.tf2.constructs import CREATORS
from codemods.tf2._base import Note, Refuse, Result
from codemods.tf2._base import code as code_of
from codemods.tf2.eager import EagerTranslator
from codemods.tf2.failures import failure_line, failure_reason
from codemods.tf2.interpret import Translator
from codemods.tf2.names import ImportTable, canonical, short
from codemods.tf2.program import RULE
from codemods.tf2.syntax import names_of, walk_nodes as walk

# imports the output drops when it no longer reads what they bind: tf-slim, and any module or name of
# TensorFlow's (`from tensorflow import layers as L`, which TF 2 lacks, after every `L.dense` became Keras';
# `tensorflow.contrib`, `tensorflow.examples`): importing one does nothing `import tensorflow` has not done
UNUSED_DROPPED = ("tensorflow.", "tf_slim")


def translate(text: str, filename: str = "<string>") -> Result:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return Result(None, [Note(exc.raw_line, RULE, "human", f"libcst cannot parse this file: {exc.message}")])
    translator = None
    written = module
    lines = _Lines()
    read_text = text
    unrolled: list = []
    loops: list = []
    try:
        names, module = ImportTable.read(module, text)
        written = module  # the input, as written (lines of refusals are its lines)
        usage = names.usage(module)
        if usage.verdict == "none":
            return Result(text, [])
        if usage.verdict == "mixed":
            line = (usage.tf2 or usage.tf1)[0][0]
            return Result(None, [Note(line, RULE, "human", "mixes TF 2 eager code with TF 1 graph code: "
                                                          "converted by hand only")])
        if usage.verdict != "tf1-eager":  # graph code: what other modules may add to TF 1.x's graph
            # definitions imported from the user's own modules that reach TensorFlow → copied where imported
            copied = imported_functions.read(text, filename)
            if copied is not None:
                read_text, lines.copied, lines.origins = copied.text, copied.lines, copied.origins
                names, module = ImportTable.read(cst.parse_module(read_text), read_text)
                written = module  # the program with the copies: lines of refusals go through `lines.copied`
                unrolled = [Note(line, RULE, "change", message) for line, message in copied.notes]
            callees.check(read_text, filename, names.import_targets, names.unbound)
            # loops making state → their passes; graph helpers called inside expressions → statements first
            module, lines.unrolled, loops, hoisted, lambdas = unroll.module(module, read_text, names, CREATORS)
            moved = [Note(line, RULE, "change", f"a loop that makes state, over values fixed in the file → its "
                          f"{passes} passes, in order (TF 1.x ran it once, while it built the graph)")
                     for line, passes in loops]
            moved += [Note(line, RULE, "change", f"`{helper}(...)` inside an expression → its own statement "
                           f"first (Python ran it before the rest of the statement)") for line, helper in hoisted]
            moved += [Note(line, RULE, "change", f"`{name} = lambda ...` → `def {name}(...)`, the same function "
                           f"(PEP 8's spelling), read as the script's other helpers") for line, name in lambdas]
            unrolled += [dataclasses.replace(n, line=lines.input(n.line, of_written=True)) for n in moved]
            if lines.unrolled is not None:  # read as the program it is; every line said is the input's
                names, module = ImportTable.read(module)
        # a TF 1.x eager script (`enable_eager_execution()`) is TF 2-shaped: its API is mapped, no graph read
        translator = EagerTranslator(module, names) if usage.verdict == "tf1-eager" else Translator(module, names)
        out = translator.run()
        out = fix_imports(out, names)
        # the output's names: the input's, less the aliases the output no longer assigns as the input did
        out_names = names.keeping_aliases(_kept_aliases(out, names))
        check_symbols_kept(out, out_names, written)
        # every name bound, no state made per step
        out, code = output_checks.transform(out, written, out_names, getattr(translator, "dropped", None))
        left = out_names.usage(out)
        if left.tf1:
            _, source = left.tf1[0]
            refusal = Refuse(_find(read_text, source), f"`{source}` has no TF 2 mapping in tf1clip's tables")
            refusal.of_input = True  # found in the text read: already a line of `written`
            raise refusal
        compile(code, filename, "exec", dont_inherit=True)
    except Refuse as exc:
        notes = list(translator.notes) if translator is not None else []
        of_written = getattr(exc, "of_input", False)
        line = lines.input(exc.line, of_written)
        reason = _named(_said(exc.reason, lines, loops), translator) + lines.in_copy(exc.line, of_written)
        return Result(None, [*unrolled, *_input_lines(notes, lines, loops, translator),
                             Note(line, RULE, "human", f"not converted to the TF2 tier: {reason}")])
    except Exception as exc:  # noqa: BLE001 - a failure inside the tier is a refusal: compat fallback, never `error`
        notes = list(translator.notes) if translator is not None else []
        at = failure_line(exc, module)
        return Result(None, [*unrolled, *_input_lines(notes, lines, loops, translator),
                             Note(lines.input(at), RULE, "human",
                                  f"not converted to the TF2 tier: {failure_reason(exc, RULE)}{lines.in_copy(at)}")])
    notes = sorted({*unrolled, *_input_lines(translator.notes, lines, loops, translator)},
                   key=lambda n: (n.line, n.message))
    return Result(code, notes)


@dataclass
class _Lines:
    """A line of the program read → the input's line: through the loops read as their passes and the other
    moves of `unroll` (program → `written`), then through the definitions copied in (`imported_functions`:
    `written` → input; a line of a copy is the line of the import it replaces)."""
    unrolled: Optional[dict] = None
    copied: Optional[dict] = None
    origins: dict = dataclasses.field(default_factory=dict)

    @property
    def moved(self) -> bool:
        return self.unrolled is not None or self.copied is not None

    def written(self, line: int) -> int:
        return line if self.unrolled is None else self.unrolled.get(line, line)

    def input(self, line: int, of_written: bool = False) -> int:
        line = line if of_written else self.written(line)
        return line if self.copied is None else self.copied.get(line, line)

    def in_copy(self, line: int, of_written: bool = False) -> str:
        """What a message about `line` adds when the line is in a copied definition: where the code is."""
        origin = self.origins.get(line if of_written else self.written(line))
        return f" (in the definition imported, {origin})" if origin else ""


def _input_lines(notes, lines: _Lines, loops, translator=None) -> list:
    notes = [n if not lines.moved else dataclasses.replace(n, line=lines.input(n.line),
                                                           message=_said(n.message, lines, loops)) for n in notes]
    return [dataclasses.replace(n, message=_named(n.message, translator)) for n in notes]


def _named(message: str, translator) -> str:
    """A message about a helper's body read in place, in the input's names: the fresh name each of its
    locals got there (`dims_2`, never a name of the input) is written as the input wrote it (`dims`)."""
    inlined = getattr(translator, "inlined_names", None) or {}
    for fresh in sorted(inlined, key=len, reverse=True):
        if inlined[fresh] != fresh and fresh in message:
            message = re.sub(rf"(?<![\w.]){re.escape(fresh)}(?!\w)", inlined[fresh], message)
    return message


def _said(message: str, lines: _Lines, loops) -> str:
    """A message about the program read, about the input: its `line N` are the input's lines, and a
    message about a program where loops were read as their passes (`loops`) says so."""
    if not lines.moved:
        return message
    said = re.sub(r"\b(lines?) (\d+)", lambda m: f"{m.group(1)} {lines.input(int(m.group(2)))}", message)
    if said != message and loops:
        said += " (a loop that makes state was read as its passes, each one a copy of its body at the loop's lines)"
    return said


def fix_imports(module: cst.Module, names: ImportTable) -> cst.Module:
    """`import tensorflow.compat.v1 as tf` → `import tensorflow as tf`; TF 1.x-only modules the
    output does not use any more are no longer imported, and a module-level name assigned a TensorFlow
    symbol (`opt_cls = tf.train.AdamOptimizer`) that nothing reads any more is no longer assigned
    (names the output binds were checked unshadowed when the input was read, so a name not used is
    an import not used; a symbol referred to has no effect of its own)."""
    aliases = [_alias_of(st, names) for st in module.body]
    used = names_of(module.with_changes(body=[st for st, alias in zip(module.body, aliases)
                                              if not _imports_only(st) and alias is None]))
    body = []
    for st, alias in zip(module.body, aliases):
        if alias is not None and alias not in used:
            continue
        if _imports_only(st):
            kept = []
            for small in st.body:
                small = _fix_import(small, used)
                if small is not None:
                    kept.append(small)
            if not kept:
                continue
            kept = [k.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for k in kept[:-1]] + [
                kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)]
            st = st.with_changes(body=kept)
        body.append(st)
    module = module.with_changes(body=body)
    if any(isinstance(n, (cst.Import, cst.ImportFrom)) for st in module.body
           if isinstance(st, (cst.FunctionDef, cst.ClassDef)) for n in walk(st)):
        # a function's own imports (`def main(): import ...input_data as input_data`): the same rule, where
        # nothing anywhere reads the name any more
        unread = names_of(module.visit(_NestedImports(None)))
        module = module.visit(_NestedImports(unread))
    return module


class _NestedImports(cst.CSTTransformer):
    """The import statements of functions and classes: without `used` (names read anywhere), each left out
    (for reading the names of the rest); with it, less the TensorFlow imports whose names nothing reads
    (`_fix_import`), a block left empty holding `pass`."""

    def __init__(self, used: Optional[set]):
        super().__init__()
        self.used, self.depth = used, 0

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return True

    visit_ClassDef = visit_FunctionDef

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    leave_ClassDef = leave_FunctionDef

    def leave_SimpleStatementLine(self, original, updated):
        if not self.depth or not _imports_only(updated):
            return updated
        if self.used is None:
            return cst.RemovalSentinel.REMOVE
        kept = [k for k in (_fix_import(small, self.used) for small in updated.body) if k is not None]
        if not kept:
            return cst.RemovalSentinel.REMOVE
        return updated.with_changes(body=[k.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for k in kept])

    def leave_IndentedBlock(self, original, updated):
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated


def check_symbols_kept(module: cst.Module, names: ImportTable, source: cst.Module) -> None:
    """A `name = tf.X` statement the output still needs, where TF 2 has no `tf.X`: refused at it
    (at its line in `source`, the input)."""
    for st in module.body:
        name = _alias_of(st, names)
        if name is not None and names.usage(cst.Module(body=[st])).tf1:
            assigned = names.symbol_assigned(st.body[0])
            symbol = short(canonical(assigned[1]))
            line = next((names.line(small) for original in source.body if isinstance(original, cst.SimpleStatementLine)
                         for small in original.body if names.symbol_assigned(small) == assigned), 0)
            refusal = Refuse(line, f"`{code_of(st.body[0])}` stays in the TF 2 program (the name `{name}` is "
                                   f"bound or read elsewhere in it), and TF 2 has no `{symbol}`")
            refusal.of_input = True  # a line of `source`, the input
            raise refusal


def _kept_aliases(module: cst.Module, names: ImportTable) -> set:
    """The aliases of the input (`names.aliases`) that `module` still assigns the same symbol."""
    return {name for st in module.body if (name := _alias_of(st, names)) in names.aliases
            and names.symbol_assigned(st.body[0]) == names.symbol_assigned(names.aliases[name])}


def _alias_of(st, names: ImportTable):
    """The name a module-level statement `name = tf.X` binds (`ImportTable.symbol_assigned`), else None."""
    if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1):
        return None
    assigned = names.symbol_assigned(st.body[0])
    return assigned[0] if assigned is not None else None


def _imports_only(st) -> bool:
    return isinstance(st, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in st.body)


def _fix_import(small, used: set):
    if isinstance(small, cst.Import):
        aliases = []
        for a in small.names:
            mod = dotted_name(a.name) or ""
            if mod == "tensorflow.compat.v1" and a.asname is not None:
                a = a.with_changes(name=cst.Name("tensorflow"))
            local = a.asname.name.value if a.asname else mod.split(".")[0]
            if mod.startswith(UNUSED_DROPPED) and local not in used:
                continue
            aliases.append(a)
        if not aliases:
            return None
        aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return small.with_changes(names=aliases)
    if isinstance(small, cst.ImportFrom) and small.module is not None and not isinstance(small.names, cst.ImportStar):
        mod = dotted_name(small.module) or ""
        if not any(f"{mod}.{dotted_name(a.name)}".startswith(UNUSED_DROPPED) for a in small.names):
            return small
        aliases = [a for a in small.names if not f"{mod}.{dotted_name(a.name)}".startswith(UNUSED_DROPPED)
                   or (a.asname.name.value if a.asname else dotted_name(a.name)) in used]
        if len(aliases) == len(small.names):
            return small
        if not aliases:
            return None
        aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return small.with_changes(names=aliases)
    return small


def _find(text: str, source: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if source in line:
            return i
    return 0

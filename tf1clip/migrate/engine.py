"""Run the compat-tier codemods over one module's text; report changes on the original lines.

Pure text in, text out; imports libcst and `codemods`, never TensorFlow.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

from codemods import COMPAT_TIER, NUMPY_ONLY
from codemods._base import NOTES_KEY, WRAPPER_KEY, Note, compose_line_map, imported_qualified_names
from codemods._usage import Usage, classify
from codemods.fast_compat import fast_compat


class MigrationError(Exception):
    """A file could not be migrated; `line` is where (1-based, 0 when unknown)."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.line = line


@dataclass
class Outcome:
    text: str
    notes: list[Note] = field(default_factory=list)
    reason: str = ""        # why nothing changed, when nothing did
    tier: str = "compat"    # which tier produced `text`

    @property
    def runtime(self) -> list[str]:
        return sorted({n.runtime for n in self.notes if n.runtime})


def parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise MigrationError(f"libcst cannot parse this file: {exc.message}", exc.raw_line) from None


def _wrapper(module: cst.Module) -> MetadataWrapper:
    """Metadata for `module` itself (no copy: the engine owns every tree it hands around)."""
    return MetadataWrapper(module, unsafe_skip_copy=True)


def usage_of(module: cst.Module, wrapper: MetadataWrapper | None = None) -> Usage:
    wrapper = wrapper if wrapper is not None and wrapper.module is module else _wrapper(module)
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)

    def imported(node):
        return imported_qualified_names(scopes.get(node), node)

    def line_of(node):
        pos = positions.get(node)
        return pos.start.line if pos is not None else 0

    # classify walks wrapper.module (the nodes the metadata is keyed on).
    return classify(wrapper.module, imported, line_of)


def migrate_text(text: str, filename: str = "<string>", tier=COMPAT_TIER, fast: bool | None = None) -> Outcome:
    """Apply `tier` to `text`. Raises MigrationError when the text cannot be parsed or rewritten.

    For the compat tier, a file of the common shape is done by `codemods.fast_compat` (same
    output and notes, on `ast`); `fast=False`, or TF1CLIP_MIGRATE_FAST=0 in the environment,
    runs the libcst rules on every file. A file that is not TF 1.x code gets the rules that
    apply to any file (`NUMPY_ONLY`), and keeps its reason when they change nothing."""
    if fast is None:
        fast = os.environ.get("TF1CLIP_MIGRATE_FAST", "1") != "0"
    if "tensorflow" not in text and "tf_slim" not in text:
        try:
            return _apply(text, filename, NUMPY_ONLY, reason="does not use TensorFlow")
        except MigrationError:  # not TensorFlow code, and not ours to judge
            return Outcome(text, reason="does not use TensorFlow")
    if fast and tier is COMPAT_TIER:
        done = fast_compat(text, filename)
        if done is not None:
            return Outcome(done[0], done[1])
    module = parse(text)
    wrapper = _wrapper(module)
    usage = usage_of(module, wrapper)
    verdict = usage.verdict
    if verdict == "none":
        return _apply(text, filename, NUMPY_ONLY, module, wrapper,
                      reason="does not import TensorFlow" if not usage.imports_tf else "uses no TF 1.x-only API")
    if verdict == "mixed":
        line = usage.tf2[0][0]
        return _apply(text, filename, NUMPY_ONLY, module, wrapper,
                      [Note(line, "compat_tier", "human", usage.mixed_message())],
                      reason="mixes TF 2 and TF 1 code: left for a human")
    return _apply(text, filename, tier, module, wrapper, reason="already migrated")


def _apply(text: str, filename: str, tier, module: cst.Module | None = None, wrapper: MetadataWrapper | None = None,
           notes: list[Note] | None = None, reason: str = "") -> Outcome:
    """Run the commands of `tier` in order on `text`; `reason` says why, if nothing changed."""
    notes = list(notes or [])
    if not any(getattr(c, "applies_to", lambda _: True)(text) for c in tier):
        return Outcome(text, notes, reason=reason)
    if module is None:
        module = parse(text)
    if wrapper is None:
        wrapper = _wrapper(module)
    line_map = list(range(len(text.splitlines()) + 2))  # current line → original line
    current, code = module, text
    for command_cls in tier:
        applies_to = getattr(command_cls, "applies_to", None)
        if applies_to is not None and not applies_to(code):
            continue
        if wrapper.module is not current:
            wrapper = _wrapper(current)
        # The codemod reuses this tree's metadata instead of copying the tree and resolving
        # scopes again: a command that changes nothing costs the next one nothing.
        context = CodemodContext(filename=filename, scratch={WRAPPER_KEY: wrapper})
        command = command_cls(context)
        try:
            new = command.transform_module(current)
        except Exception as exc:  # noqa: BLE001 - a rule bug must not lose the file, only skip it
            raise MigrationError(f"rule {command_cls.RULE} failed: {type(exc).__name__}: {exc}") from exc
        for note in context.scratch.get(NOTES_KEY, []):
            original = line_map[note.line] if 0 < note.line < len(line_map) else note.line
            notes.append(Note(original, note.rule, note.kind, note.message, note.runtime))
        if new is not current:
            new_code = new.code
            if new_code != code:
                line_map = compose_line_map(line_map, code, new_code)
            code = new_code
        current = new
    out = code
    if out != text:
        # Never write what does not parse: libcst and CPython must both accept the result.
        try:
            cst.parse_module(out)
            compile(out, filename, "exec", dont_inherit=True)
        except (SyntaxError, cst.ParserSyntaxError, ValueError) as exc:
            raise MigrationError(f"the rewritten file does not parse ({exc}); left unchanged, please report this") from exc
    unique: list[Note] = []
    for note in notes:
        if note not in unique:
            unique.append(note)
    unique.sort(key=lambda n: (n.line, n.kind != "change"))
    return Outcome(out, unique, reason="" if out != text else reason)


def migrate(text: str, filename: str = "<string>", to: str = "compat", strategy: str | None = None) -> Outcome:
    """Migrate to `to` ('compat' or 'tf2'). The TF2 tier is tried first; a file it cannot
    convert exactly falls back to the compat tier, and the report keeps the TF2 tier's
    reasons (file line and why) as places left for a human.

    With `strategy` ('mirrored' or 'multi_worker', TF2 tier only) a converted file's train
    step is then distributed (`codemods.tf2.distribute`); a program not of the shape that
    rewrite recognizes keeps the single-device TF2 output, with the reason as a human note."""
    if to != "tf2":
        if strategy:
            raise ValueError("a strategy applies to the TF2 tier only (to='tf2')")
        return migrate_text(text, filename)
    from codemods.tf2 import Result, convert

    # NumPy 2 spellings first (they keep every line where it was, so both tiers' notes stay
    # on the input's lines); the compat fallback applies the same rule itself.
    try:
        numpy = _apply(text, filename, NUMPY_ONLY)
    except MigrationError:
        numpy = Outcome(text)
    try:
        result = convert(numpy.text, filename)
    except Exception as exc:  # noqa: BLE001 - never `error` from the TF2 tier: the compat tier takes the file
        result = Result(None, [Note(0, "tf2", "human", f"not converted to the TF2 tier: internal error "
                                                      f"({type(exc).__name__}: {exc}); kept on the compat tier")])
    if result.text is not None:
        out = result.text
        notes = sorted([*numpy.notes, *result.notes], key=lambda n: (n.line, n.kind != "change"))
        if strategy and result.text != text:
            from codemods.tf2.distribute import distribute

            try:
                dist = distribute(result.text, filename, strategy, source=text)
            except Exception as exc:  # noqa: BLE001 - as distribute's own refusal: single-device output kept
                dist = Result(None, [Note(0, "distribute", "human",
                                          f"not distributed (--strategy {strategy}): internal error "
                                          f"({type(exc).__name__}: {exc}); the single-device TF2 output is kept")])
            out = dist.text if dist.text is not None else out
            notes = sorted([*notes, *dist.notes], key=lambda n: (n.line, n.kind != "change"))
        return Outcome(out, notes,
                       reason="" if out != text else "already TF 2 (nothing to convert)", tier="tf2")
    fallback = migrate_text(text, filename)
    notes = [*fallback.notes, *(n for n in result.notes if n.kind != "change")]
    if strategy:
        notes.append(Note(0, "distribute", "human", f"not distributed (--strategy {strategy}): only TF2-tier "
                                                    "output is; this file stays single-device (compat tier)"))
    notes.sort(key=lambda n: (n.line, n.kind != "change"))
    return Outcome(fallback.text, notes, reason=fallback.reason)

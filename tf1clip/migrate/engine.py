"""Migrate one module's text: the compat tier (`codemods.engine`, all rules in one pass) or the
TF2 tier with the compat tier as its fallback; changes reported on the original lines.

Pure text in, text out; imports `codemods`, never TensorFlow.
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field

from codemods import ANY_FILE, COMPAT_RULES, Note
from codemods.engine import apply
from codemods.errors import EngineError


class MigrationError(Exception):
    """A file could not be migrated; `line` is where (1-based, 0 when unknown)."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.line = line


#: `Outcome.tier` of a file with no TensorFlow in it (only the NumPy rules can change it).
NO_TENSORFLOW = "none"


def uses_tensorflow(text: str) -> bool:
    """False when `text` certainly imports no TensorFlow (nor tf-slim): no tier applies to it."""
    return "tensorflow" in text or "tf_slim" in text


@dataclass
class Outcome:
    text: str
    notes: list[Note] = field(default_factory=list)
    reason: str = ""        # why nothing changed, when nothing did
    tier: str = "compat"    # which tier produced `text`: compat, tf2, or NO_TENSORFLOW

    @property
    def runtime(self) -> list[str]:
        return sorted({n.runtime for n in self.notes if n.runtime})


def migrate_text(text: str, filename: str = "<string>", rules=COMPAT_RULES) -> Outcome:
    """Apply the compat tier's `rules` to `text`. Raises MigrationError when the text cannot be
    parsed or rewritten (the file is then left unchanged). A file that is not TF 1.x code gets
    the rules that apply to any file (`codemods.ANY_FILE`: NumPy and Keras 2 spellings), and
    keeps its reason when they change nothing."""
    if not uses_tensorflow(text):
        anywhere = [r for r in rules if r.ANY_FILE and r.applies_to(text)]
        if anywhere:
            try:
                result = apply(text, anywhere, filename)
            except EngineError:  # not TensorFlow code, and not ours to judge
                return Outcome(text, reason="does not use TensorFlow")
            return Outcome(result.text, result.notes, reason="" if result.text != text else "does not use TensorFlow")
        return Outcome(text, reason="does not use TensorFlow")
    try:
        result = apply(text, rules, filename)
    except EngineError as exc:
        raise MigrationError(str(exc), exc.line) from exc
    return Outcome(result.text, result.notes, reason=result.reason)


def input_lines(notes: list, before: str, after: str) -> list:
    """`notes` on lines of `after` moved to the lines of `before` they came from, where `after` is
    `before` with lines changed in place and lines inserted (a note on an inserted line goes
    to the line before it)."""
    old, new = before.splitlines(), after.splitlines()
    origin = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for k in range(j2 - j1):
            origin[j1 + k + 1] = (i1 + min(k, i2 - i1 - 1) + 1) if i2 > i1 else max(i1, 1)
    return [dataclasses.replace(n, line=origin.get(n.line, n.line)) if n.line else n for n in notes]


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

    if not uses_tensorflow(text):  # NumPy spellings at most: no tier of TensorFlow's to speak of
        plain = migrate_text(text, filename)
        plain.tier = NO_TENSORFLOW
        return plain
    # The rules for any file first (NumPy 2 spellings, NumPy 1.x's ragged arrays, Keras 2's spellings
    # outside TF 1.x graph code); the compat fallback applies the same rules itself. The TF2 tier's notes name lines of the NumPy pass's output: they are
    # moved back to the input's lines.
    numpy = Outcome(text)
    if any(r.applies_to(text) for r in ANY_FILE):
        try:
            done = apply(text, ANY_FILE, filename)
            numpy = Outcome(done.text, done.notes)
        except EngineError:
            pass
    try:
        result = convert(numpy.text, filename)
    except Exception as exc:  # noqa: BLE001 - never `error` from the TF2 tier: the compat tier takes the file
        result = Result(None, [Note(0, "tf2", "human", f"not converted to the TF2 tier: internal error "
                                                      f"({type(exc).__name__}: {exc}); kept on the compat tier")])
    if numpy.text != text:
        result.notes = input_lines(result.notes, text, numpy.text)
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

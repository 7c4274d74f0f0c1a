"""Migrate one module's text: the compat tier (`codemods.engine`, all rules in one pass) or the
TF2 tier with the compat tier as its fallback; changes reported on the original lines.

Pure text in, text out; imports `codemods`, never TensorFlow.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from codemods import COMPAT_RULES, NUMPY_ONLY, Note
from codemods.engine import apply
from codemods.errors import EngineError


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


def migrate_text(text: str, filename: str = "<string>", rules=COMPAT_RULES) -> Outcome:
    """Apply the compat tier's `rules` to `text`. Raises MigrationError when the text cannot be
    parsed or rewritten (the file is then left unchanged). A file that is not TF 1.x code gets
    the rules that apply to any file (`NUMPY_ONLY`), and keeps its reason when they change
    nothing."""
    if "tensorflow" not in text and "tf_slim" not in text:
        anywhere = [r for r in rules if r in NUMPY_ONLY and r.applies_to(text)]
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
    numpy = Outcome(text)
    if any(r.applies_to(text) for r in NUMPY_ONLY):
        try:
            done = apply(text, NUMPY_ONLY, filename)
            numpy = Outcome(done.text, done.notes)
        except EngineError:
            pass
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

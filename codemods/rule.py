"""How a compat rule is written: hooks over the file model, edits handed to the engine.

A rule is one class (Fixit's shape): its id, a one-line description, its before/after
examples (`VALID`, `INVALID`), and hooks the engine calls in one pass over the file model
(`codemods.model.FileModel`):

- `visit_import(imp)` for every import statement, first (so every rule's import decisions are
  known before any use is rewritten: `self.run.bound(binding)` answers what a name will be
  bound to once every rule's import edits are applied);
- `visit_reference(ref)` for every dotted name whose root is imported (`tf.contrib.rnn.X`);
- `leave_references()` once, for import decisions that depend on what the rewrites leave;
- `leave_module(layout)` last, for rules that insert statements where the final imports are
  (`codemods.layout.Layout`).

Edits go through `self.run` (`replace` a dotted name by an expression, `transform` a call,
`rename_alias`, `move_alias`, `retarget_alias`, `set_from_module`, `remove_if_unused`,
`add_import`), are applied together, and two rules editing the same node
differently is an error for the file (`codemods.engine.Conflict`), never an order-dependent
result. Notes (a change, or a place left for a human) carry the line of the input.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Optional, Sequence

from codemods._base import Invalid, Valid  # noqa: F401 - rules take their example types from here

if TYPE_CHECKING:  # pragma: no cover
    from codemods.engine import Run
    from codemods.layout import Layout
    from codemods.nodes import ImportStmt, Reference


class Rule:
    """Base of the compat rules."""

    #: Rule id shown in reports: the module name, so a reader finds the code by it.
    RULE: ClassVar[str] = "tf1clip"
    DESCRIPTION: ClassVar[str] = ""
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()
    #: Text one of which a module must contain for this rule to change or report anything
    #: (every name it acts on is spelled out in the source); empty: always run.
    TRIGGERS: ClassVar[Sequence[str]] = ()
    #: Runs on files that are not TF 1.x code too (no TensorFlow, TF 2, mixed): `numpy2`.
    ANY_FILE: ClassVar[bool] = False

    def __init__(self, run: "Run"):
        self.run = run
        self.file = run.file
        self.usage = run.usage

    @classmethod
    def applies_to(cls, text: str) -> bool:
        """False when the rule certainly leaves `text` alone and reports nothing."""
        return not cls.TRIGGERS or any(t in text for t in cls.TRIGGERS)

    # -- hooks ----------------------------------------------------------------------------------
    def visit_import(self, imp: "ImportStmt") -> None:
        """Called for every import statement, in source order, before any reference."""

    def visit_reference(self, ref: "Reference") -> None:
        """Called for every reference to an imported name, in source order."""

    def leave_references(self) -> None:
        """Called once every reference is visited: import decisions that depend on what the
        other rules' rewrites leave (`self.run.will_remove(alias)`)."""

    def leave_module(self, layout: "Layout") -> None:
        """Called last, with the module's statements as they will be after every edit."""

    # -- notes ------------------------------------------------------------------------------------
    def note_change(self, line: int, message: str, runtime: Optional[str] = None) -> None:
        self.run.note(self, line, "change", message, runtime)

    def note_human(self, line: int, message: str) -> None:
        self.run.note(self, line, "human", message, None)

"""Each compat rule as a libcst codemod command, for `python -m libcst.tool codemod`.

    python -m libcst.tool codemod contrib_symbols.ContribSymbolsCommand path/

The command runs the one-pass engine with just its rule over the file's text: the same code
`tf1clip migrate` runs (all rules together), so a rule has one definition. Its notes go to
`context.scratch[NOTES_KEY]`; a place left for a human also goes to `context.warnings`, which
libcst prints; a file the engine cannot rewrite is skipped with the reason.

A rule's module makes its command on first use (`__getattr__ = command_attribute(Rule)`):
`libcst.codemod` takes longer to import than the rest of the migrate path, which never needs it.
"""
from __future__ import annotations


def command_for(rule: type) -> type:
    """A libcst CodemodCommand class that applies `rule` alone."""
    import libcst as cst
    from libcst.codemod import CodemodCommand, SkipFile

    from codemods._base import NOTES_KEY
    from codemods.engine import apply
    from codemods.errors import EngineError

    class Command(CodemodCommand):
        DESCRIPTION = rule.DESCRIPTION
        RULE = rule.RULE

        def transform_module_impl(self, tree: cst.Module) -> cst.Module:
            code = tree.code
            try:
                result = apply(code, [rule], self.context.filename or "<string>")
            except EngineError as exc:
                raise SkipFile(f"line {exc.line}: {exc}") from None
            notes = self.context.scratch.setdefault(NOTES_KEY, [])
            for note in result.notes:
                if note not in notes:
                    notes.append(note)
                if note.kind == "human":
                    self.warn(f"line {note.line}: {note.message}")
            return tree if result.text == code else cst.parse_module(result.text)

    Command.__name__ = Command.__qualname__ = f"{rule.__name__}Command"
    Command.__module__ = rule.__module__
    Command.__doc__ = f"`{rule.RULE}` as a libcst codemod: {rule.DESCRIPTION}"
    return Command


def command_attribute(rule: type):
    """A module `__getattr__` that gives `<Rule>Command`, made (once) when first asked for."""
    name = f"{rule.__name__}Command"
    made: dict = {}

    def __getattr__(attr: str):
        if attr != name:
            raise AttributeError(f"module {rule.__module__!r} has no attribute {attr!r}")
        if attr not in made:
            made[attr] = command_for(rule)
        return made[attr]

    return __getattr__

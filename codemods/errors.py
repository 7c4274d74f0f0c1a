"""Why the compat engine leaves a file unchanged: `EngineError` (with the line), `Conflict`."""
from __future__ import annotations


class EngineError(Exception):
    """A file the engine cannot rewrite; `line` is where (0 when unknown)."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.line = line


class Conflict(EngineError):
    """Two rules edit the same node (or one inside the other) differently."""

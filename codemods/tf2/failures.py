"""An exception inside the TF2 tier is a refusal, never an error: where it happened and why.

A bug in a step (an `AttributeError` on an argument shape nobody foresaw, a `StopIteration`
from a lookup) must not end the file as `error` with nothing written: the driver turns it
into a refusal, so the file falls back to the compat tier and the report says at which line
of the input the step was working and what went wrong.

The line is found from the traceback: the innermost frame that holds a libcst node of the
module the step was given (the statement or call it was converting) names it.
"""
from __future__ import annotations

from types import TracebackType
from typing import Optional

import libcst as cst

from codemods.tf2.lines import start_lines


def failure_line(exc: BaseException, module: cst.Module) -> int:
    """The line (of `module`) of the node the failing code was working on; 0 if none is found."""
    frames = []
    tb: Optional[TracebackType] = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    if not frames:
        return 0
    where = start_lines(module)
    for frame in reversed(frames):  # innermost first: the most specific node
        best = 0
        for value in frame.f_locals.values():
            if isinstance(value, cst.CSTNode) and not isinstance(value, cst.Module):
                start = where.get(value)
                if start is not None and (best == 0 or start < best):
                    best = start
        if best:
            return best
    return 0


def failure_reason(exc: BaseException, rule: str) -> str:
    """One line for the report: which step failed, how, and what the user can do."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return (f"the TF2 tier's `{rule}` step failed on this construct ({what}); kept on the compat tier "
            "(please report this construct)")

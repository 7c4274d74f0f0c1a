"""Tracebacks as `python SCRIPT` prints them, without tf1clip's own frames.

Shared by `tf1clip run` (runner.py) and the parity recorder, which both execute a user's
script and report its crash.
"""
from __future__ import annotations

import sys
import traceback


def print_user_traceback(exc: BaseException, hide=()) -> None:
    """Print exc's traceback to stderr, leaving out frames of the files in `hide`."""
    hidden = set(hide)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename not in hidden]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames),
             *traceback.format_exception_only(type(exc), exc)]
    sys.stderr.write("".join(lines))

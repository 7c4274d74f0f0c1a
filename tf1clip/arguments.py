"""What the commands share about their command line: `UsageError` and `make_parser`.

The commands (`runner`, `migrate`, `parity.cli`) import this module; `tf1clip.cli` imports the
commands only when one is run, so nothing imports `tf1clip.cli` back.
"""
from __future__ import annotations

import argparse


class UsageError(Exception):
    """A problem with the command line or its inputs: one line on stderr, exit 2."""


def make_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """An ArgumentParser whose errors become UsageError (one line, exit 2) instead of SystemExit."""

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str):  # type: ignore[override]
            raise UsageError(f"{prog}: {message}")

    return _Parser(prog=f"tf1clip {prog}", description=description)

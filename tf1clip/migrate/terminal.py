"""What `tf1clip migrate` shows on a terminal: a progress bar and coloured diffs, through `rich`.

`rich` is imported only when something is drawn on a terminal, so `--help`, one-file runs and
piped output never load it. Off a terminal the diff is the plain unified diff, byte for byte
(no escape codes), and there is no bar. `NO_COLOR` turns colours off (rich honours it).
"""
from __future__ import annotations

import difflib
import os
import sys


def unified_diff(old: str, new: str, name: str) -> list[str]:
    """The diff lines, each ending in a newline ("\\ No newline at end of file" where due)."""
    lines = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=f"a/{name}", tofile=f"b/{name}"):
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    return lines


def print_diff(old: str, new: str, name: str) -> None:
    """Print a unified diff on stdout: coloured on a terminal, plain bytes elsewhere."""
    lines = unified_diff(old, new, name.replace(os.sep, "/"))
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        from rich.console import Console
        from rich.text import Text

        console = Console(file=sys.stdout, highlight=False, soft_wrap=True)
        for line in lines:
            body = line.rstrip("\r\n")
            style = ("bold" if line.startswith(("+++", "---")) else "cyan" if line.startswith("@@")
                     else "green" if line.startswith("+") else "red" if line.startswith("-") else "")
            console.print(Text(body, style=style))
        return
    text = "".join(lines)
    stream = getattr(sys.stdout, "buffer", None)
    sys.stdout.flush()
    if stream is not None:
        stream.write(text.encode("utf-8", "surrogateescape"))
        stream.flush()
    else:
        sys.stdout.write(text)


class Progress:
    """A progress bar on stderr while files are migrated, only on a terminal and for 10 files or
    more. While it shows, what is printed to stdout or stderr appears above it (rich's live
    display redirects both)."""

    def __init__(self, total: int):
        self.total = total
        self._bar = None
        if total >= 10 and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn

            # No refresh thread (auto_refresh=False): worker processes are forked while it shows.
            self._bar = Bar(BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                            console=Console(file=sys.stderr, soft_wrap=True), transient=True,
                            auto_refresh=False)
            self._task = self._bar.add_task("", total=total)
            self._bar.start()

    def step(self, name: str) -> None:
        if self._bar is not None:
            label = name if len(name) <= 40 else "…" + name[-39:]
            self._bar.update(self._task, advance=1, description=label, refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

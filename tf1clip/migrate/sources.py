"""Reading and writing users' files without ever making them worse.

A source is decoded the way Python reads it (BOM, PEP 263 cookie) and must re-encode to the
very same bytes before anything is rewritten; the new text is encoded back with the same
encoding and BOM, and libcst keeps each line's own newline. Writes go to a temporary file in
the target directory, keep the original's mode, and replace the target with one rename.
"""
from __future__ import annotations

import os
import stat
import tempfile

from tf1clip._source import check_source, decode_source
from tf1clip.migrate.engine import MigrationError


def read_python(path: str, display: str, data: bytes) -> tuple[str, str]:
    """Decode `data` as Python 3 source; MigrationError (with a line) when it is not."""
    problem = check_source(display, data)
    if problem is not None:
        raise MigrationError(problem.message, problem.line)
    text, encoding = decode_source(data)
    if encode(text, encoding) != data:
        raise MigrationError(f"cannot re-encode the file byte for byte as {encoding}; left unchanged", 1)
    return text, encoding


def encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding)


def newline_style(data: bytes) -> str:
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    return "CRLF" if crlf > lf else "LF"


def atomic_write(dest: str, data: bytes, mode: int | None) -> None:
    """Write `data` to `dest` through a temp file in the same directory and one rename."""
    directory = os.path.dirname(os.path.abspath(dest)) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(dest) + ".", suffix=".tf1clip-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

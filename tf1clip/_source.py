"""Reading users' source files: decoding and telling Python 2 from broken Python 3.

Shared by `tf1clip run` and `tf1clip migrate`; imports no TensorFlow, so the migrate path
stays fast.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

# What a Python 2 line looks like when Python 3 refuses it. Checked on the offending line
# only, in order; the first hit names the construct in the error message.
_PY2_LINE_PATTERNS = [
    (re.compile(r"^\s*print\s+[^\s(=.,)\[][^=]*$|^\s*print\s*$|^\s*print\s*>>"), "print statement"),
    (re.compile(r"^\s*except\s+[\w.]+(\s*\([^)]*\))?\s*,\s*\w+\s*:"), "'except X, e:'"),
    (re.compile(r"^\s*raise\s+[\w.]+\s*,"), "'raise X, msg'"),
    (re.compile(r"^\s*exec\s+[\"'\w]"), "exec statement"),
    (re.compile(r"`[^`]*`"), "backtick repr"),
    (re.compile(r"<>"), "'<>' operator"),
    (re.compile(r"(?<![\w.])0\d+[lL]?\b|\b\d+[lL]\b"), "Python 2 integer literal"),
    (re.compile(r"(?i)\bur[\"']"), "ur'' string prefix"),
]
_PY2_MESSAGES = [
    ("Missing parentheses in call to 'print'", "print statement"),
    ("Missing parentheses in call to 'exec'", "exec statement"),
    ("leading zeros in decimal integer literals", "Python 2 octal literal"),
    ("multiple exception types must be parenthesized", "'except X, e:'"),
]


@dataclass
class SourceProblem:
    """Why a source file cannot be run or rewritten, with the 1-based line it starts at."""

    path: str
    line: int
    message: str
    python2: bool = False

    def one_line(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def decode_source(data: bytes) -> tuple[str, str]:
    """Decode bytes the way Python does (PEP 263 cookie, BOM); returns (text, encoding)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, encoding


def check_source(path: str, data: bytes) -> SourceProblem | None:
    """Return None when `data` is valid Python 3, else a SourceProblem naming file and line."""
    try:
        text, _ = decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return SourceProblem(path, 1, f"cannot decode source ({exc}); save it as UTF-8 or add a coding cookie")
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno or 1
        lines = text.splitlines()
        src_line = lines[line - 1] if 0 < line <= len(lines) else ""
        construct = _python2_construct(str(exc.msg), src_line)
        if construct:
            return SourceProblem(
                path, line,
                f"Python 2 syntax ({construct}); tf1clip reads Python 3 sources: "
                f"convert the file first (e.g. `2to3 -w {path}`), then run tf1clip again",
                python2=True,
            )
        return SourceProblem(path, line, f"syntax error: {exc.msg}; fix the file, then run tf1clip again")
    except ValueError as exc:  # e.g. source with NUL bytes
        return SourceProblem(path, 1, f"not Python source: {exc}")
    return None


def _python2_construct(msg: str, src_line: str) -> str | None:
    for needle, name in _PY2_MESSAGES:
        if needle in msg:
            return name
    for pattern, name in _PY2_LINE_PATTERNS:
        if pattern.search(src_line):
            return name
    return None

"""One step of the harness as a process: run it with a timeout, keep its output, say why it failed.

Output goes to files (real scripts print a lot; pipes would fill), and the process runs in a
session of its own so that a timeout kills everything it started, and nothing else.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# TensorFlow's and absl's start-up chatter: never the reason anything failed.
_NOISE = re.compile(
    r"^(?:[IWE]\d{4} |WARNING: All log messages before absl|To enable the following instructions|"
    r"WARNING:tensorflow:|W?ARNING:absl:|.*oneDNN custom operations|.*cuda drivers|.*cpu_feature_guard|"
    r"\s*warnings\.warn\(|.*(?:Deprecation|Future|User|Runtime)Warning:)")
# tf1clip's one-line errors: `tf1clip: error: ...`, `tf1clip parity: error: ...`, `file.py:12: ...`.
_ONE_LINE = re.compile(r"^(?:tf1clip[\w ]*: (?:error|internal error): |[^\s:][^:]*\.(?:py|ipynb):\d+: )")


@dataclass
class Finished:
    returncode: int | None     # None: killed at the timeout
    seconds: float
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run(cmd: list[str], cwd: Path, env: dict, timeout: float, log_dir: Path, label: str) -> Finished:
    """Run `cmd`; its output is kept in log_dir/label.{out,err} and returned."""
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log_dir / f"{label}.out", log_dir / f"{label}.err"
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err, open(os.devnull, "rb") as devnull:
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdin=devnull, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            code = None
    seconds = time.monotonic() - start
    return Finished(code, seconds, _read(out_path), _read(err_path))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _read(path: Path, limit: int = 400_000) -> str:
    data = path.read_bytes()
    if len(data) > limit:
        data = data[-limit:]
    return data.decode("utf-8", errors="replace")


def meaningful_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip() and not _NOISE.match(line)]


def tail(text: str, n: int = 30) -> str:
    """The last n meaningful lines (TensorFlow's start-up chatter left out): the evidence."""
    return "\n".join(meaningful_lines(text)[-n:])


def failure_line(stderr: str, stdout: str = "") -> str:
    """The one line that says why a process failed: a tf1clip one-line error, or the exception
    line the last traceback ends with, or else the last thing the process printed."""
    lines = meaningful_lines(stderr)
    last_tb = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")),
                  default=None)
    exception = None
    if last_tb is not None:
        # the exception is the first unindented line after the frames (its message may go on)
        exception = next((i for i in range(last_tb + 1, len(lines)) if not lines[i].startswith((" ", "\t"))), None)
    one_line = max((i for i, line in enumerate(lines) if _ONE_LINE.match(line)), default=None)
    if one_line is not None and (exception is None or one_line > exception):
        return lines[one_line].strip()
    if exception is not None:
        return lines[exception].strip()
    for text in (lines, meaningful_lines(stdout)):
        if text:
            return text[-1].strip()
    return "(no output)"

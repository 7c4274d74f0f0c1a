"""Each side of a parity run works in its own copy of the working directory.

Scripts find their data relative to the working directory, and write there too: checkpoints
that a script restores at its next start, logs, summaries, downloaded data. If OLD and NEW
shared a folder, NEW would restore OLD's checkpoint and train nothing. So each side runs in a
fresh mirror of the folder parity was started from, and the user's files are never written.

The mirror (`mirror(source, target)`):
- every directory is a real, new directory;
- files are copied, smallest first, while they are at most COPY_FILE_LIMIT bytes each and
  COPY_TOTAL_LIMIT bytes together (scripts, configs, small data, a checkpoint);
- a larger file, or any file past the total, is a symbolic link to the original (a large
  data set is read, not rewritten). The recorder makes each link copy-on-write for Python:
  a linked file opened for writing (open, os.open, TensorFlow's gfile) is first replaced by
  a private copy, or by nothing when it is truncated anyway; TensorFlow's checkpoint and
  summary writers create new files (a temporary file, then a rename over the link), which
  replaces the link, never its target;
- symbolic links in the source are kept as links; version-control folders, `__pycache__`
  and virtual environments are left out;
- a folder with more than ENTRY_LIMIT entries is refused: run parity from the folder your
  scripts read their data from.
A script inside the working directory runs from its side's copy (its `__file__`, imports of
its siblings and paths relative to it are the copy's). A script outside it runs where it is
(its folder may be a whole repository); files it writes next to itself are not isolated.
"""
from __future__ import annotations

import os
import shutil
import stat

COPY_FILE_LIMIT = 64 * 2**20
COPY_TOTAL_LIMIT = 256 * 2**20
ENTRY_LIMIT = 200_000
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".tox"})


class WorkdirError(Exception):
    """The working directory cannot be mirrored (too large, unreadable)."""


class Mirror:
    """What mirror() made: where, how many files copied and linked."""

    def __init__(self, source, target):
        self.source = source
        self.target = target
        self.copied = 0
        self.linked = 0


def mirror(source: str, target: str, exclude=(), file_limit: int = COPY_FILE_LIMIT,
           total_limit: int = COPY_TOTAL_LIMIT, entry_limit: int = ENTRY_LIMIT) -> Mirror:
    """Mirror the folder `source` into the new folder `target` (see the module docstring).

    `exclude` lists absolute paths inside `source` left out (parity's own scratch folder when
    it lies inside the working directory).
    """
    source = os.path.abspath(source)
    excluded = {os.path.realpath(p) for p in exclude}
    folders, files, links = [], [], []
    count = 0
    for root, dirs, names in os.walk(source):
        keep = []
        for name in sorted(dirs):
            path = os.path.join(root, name)
            if name in SKIPPED_DIRS or os.path.realpath(path) in excluded or _is_venv(path):
                continue
            if os.path.islink(path):
                links.append(path)
                continue
            keep.append(name)
            folders.append(path)
        dirs[:] = keep
        for name in names:
            path = os.path.join(root, name)
            if os.path.islink(path):
                links.append(path)
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                files.append((info.st_size, path))
        count += len(keep) + len(names)
        if count > entry_limit:
            raise WorkdirError(
                f"{source} holds more than {entry_limit:,} files and folders; parity copies the working "
                "directory for each side, so run it from the folder your scripts read their data from")
    made = Mirror(source, target)
    os.makedirs(target)
    for folder in folders:
        os.makedirs(os.path.join(target, os.path.relpath(folder, source)), exist_ok=True)
    total = 0
    for size, path in sorted(files):
        destination = os.path.join(target, os.path.relpath(path, source))
        if size <= file_limit and total + size <= total_limit:
            shutil.copy2(path, destination)
            total += size
            made.copied += 1
        else:
            os.symlink(path, destination)
            made.linked += 1
    for path in links:
        os.symlink(os.readlink(path), os.path.join(target, os.path.relpath(path, source)))
    return made


def _is_venv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def inside(path: str, folder: str) -> bool:
    """Is `path` (absolute) inside `folder`?"""
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def protect_links(original: str) -> None:
    """Make the mirror's links to files under `original` copy-on-write for this process.

    Installed by the recorder before the script runs: a Python audit hook sees every `open`
    (and `os.open`, `os.truncate`) before it happens, and TensorFlow's gfile writes go through
    `FileIO`, wrapped here. A link to an original file that is about to be written is replaced
    by a copy of it (or removed when the write truncates it anyway), so the write lands in the
    side's copy.
    """
    import sys

    original = os.path.realpath(original)
    busy = [False]

    def materialize(path, keep_content=True):
        if busy[0] or not isinstance(path, (str, bytes, os.PathLike)):
            return
        path = os.fsdecode(path)
        try:
            if not os.path.islink(path):
                return
            target = os.path.realpath(path)
        except (OSError, ValueError):
            return
        if not inside(target, original) or not os.path.isfile(target):
            return
        busy[0] = True
        try:
            os.unlink(path)
            if keep_content:
                shutil.copy2(target, path)
        finally:
            busy[0] = False

    writes = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_TRUNC

    def audit(event, args):
        if event == "open" and args:
            path, mode, flags = (list(args) + [None, None])[:3]
            if isinstance(mode, str):
                if any(c in mode for c in "wax+"):
                    materialize(path, keep_content="w" not in mode)
            elif isinstance(flags, int) and flags & writes:
                materialize(path, keep_content=not flags & os.O_TRUNC)
        elif event == "os.truncate" and args:
            materialize(args[0])

    sys.addaudithook(audit)


def protect_gfile() -> None:
    """TensorFlow's gfile opens files for writing in C++, unseen by the audit hook: route its
    write-mode opens through Python's open check first (the same copy-on-write)."""
    from tensorflow.python.lib.io import file_io

    from tf1clip.steps import wrap

    def make_prewrite(original):
        def _prewrite_check(self):
            mode, name = str(self.mode), os.fsdecode(self.name)
            if ("w" in mode or "a" in mode) and os.path.islink(name):
                # the audit hook replaces the link; the handle is closed at once
                open(name, "a" if "a" in mode else "w").close()
            return original(self)
        return _prewrite_check

    wrap(file_io.FileIO, "_prewrite_check", make_prewrite)

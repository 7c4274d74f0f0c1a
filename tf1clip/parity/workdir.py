"""Each side of a parity run works in its own copy of the folder its scripts can reach.

Scripts find their data relative to the working directory, and write there too: checkpoints
that a script restores at its next start, logs, summaries, downloaded data. If OLD and NEW
shared a folder, NEW would restore OLD's checkpoint and train nothing. And a script may read
outside the folder it runs from (`'../../MNIST_data'` from `GAN/infogan/`): a copy of the
working directory alone would not have it. So each side runs in a fresh mirror of the *root*
(`find_root`): the top level of the git work tree that holds the working directory, or a
folder the user names (`tf1clip parity --root DIR`), or, outside any work tree, the working
directory itself. The side's working directory is at the same place inside its mirror as the
real one is inside the root, and the user's files are never written.

The mirror (`survey(source)` once, then `build(plan, target)` for each side):
- every directory is a real, new directory;
- files of the folders the scripts run from (`copy_under`: the working directory's subtree and
  the scripts' folders; all of the root when not given) are copied, nearest first (the
  folder's own files, then its subfolders'), smallest first at each depth, while they are at
  most COPY_FILE_LIMIT bytes each, COPY_TOTAL_LIMIT bytes and COPY_COUNT_LIMIT files together
  (scripts, configs, small data, a checkpoint);
- every other file (a larger one, one past the totals, one elsewhere in the root) is a link
  to the original: data are read, not rewritten. Parity makes hard links where it can (a
  hard link makes no new inode: on a busy disk forty times faster than a symbolic link or a
  copy), symbolic links elsewhere (another file system). The recorder makes each link
  copy-on-write for Python: a linked file opened for writing (open, os.open, os.truncate,
  TensorFlow's gfile and TFRecordWriter), or whose mode or times are set, is first replaced by
  a private copy, or by nothing when it is truncated anyway; TensorFlow's checkpoint and
  summary writers create new files (a temporary file, then a rename over the link), which
  replaces the link, never its target. A C library that rewrites an existing file in place
  (h5py, sqlite) is not seen: such files are safe when copied, that is near the scripts;
- symbolic links in the source are kept as links; version-control folders, `__pycache__`,
  tool caches and virtual environments are left out;
- a root with more than ENTRY_LIMIT entries is refused: name a smaller one with --root.
A script inside the root runs from its side's copy (its `__file__`, imports of its siblings
and paths relative to it are the copy's). A script outside it runs where it is; files it
writes next to itself are not isolated.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat

COPY_FILE_LIMIT = 64 * 2**20
COPY_TOTAL_LIMIT = 256 * 2**20
COPY_COUNT_LIMIT = 500
ENTRY_LIMIT = 200_000
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".tox",
                          ".mypy_cache", "node_modules"})
VCS_MARKERS = (".git", ".hg", ".svn")


class WorkdirError(Exception):
    """The working directory cannot be mirrored (too large, unreadable)."""


class Mirror:
    """What build() made: where, how many files copied and linked."""

    def __init__(self, source, target):
        self.source = source
        self.target = target
        self.copied = 0
        self.linked = 0


class Plan:
    """What survey() found under `source`: folders, regular files (size, path), links."""

    def __init__(self, source, folders, files, links):
        self.source, self.folders, self.files, self.links = source, folders, files, links


def find_root(cwd: str, scripts=()) -> str:
    """The folder each side of a parity run copies: the top level of the work tree (git, hg,
    svn) holding `cwd`, widened to a script's work tree when that holds `cwd` too (a
    superproject's script run from a submodule); `cwd` itself outside any work tree."""
    cwd = os.path.abspath(cwd)
    tops = [top for top in [work_tree(cwd)] + [work_tree(os.path.dirname(os.path.abspath(s))) for s in scripts]
            if top is not None and inside(cwd, top)]
    return min(tops, key=len) if tops else cwd


def work_tree(folder: str):
    """The nearest folder at or above `folder` holding a version-control marker, or None."""
    folder = os.path.abspath(folder)
    while True:
        if any(os.path.lexists(os.path.join(folder, marker)) for marker in VCS_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def mirror(source: str, target: str, exclude=(), file_limit: int = COPY_FILE_LIMIT,
           total_limit: int = COPY_TOTAL_LIMIT, entry_limit: int = ENTRY_LIMIT, copy_under=None,
           count_limit: int = COPY_COUNT_LIMIT) -> Mirror:
    """Mirror the folder `source` into the new folder `target` (see the module docstring)."""
    return build(survey(source, exclude, entry_limit), target, file_limit, total_limit, copy_under,
                 count_limit=count_limit)


def survey(source: str, exclude=(), entry_limit: int = ENTRY_LIMIT, within=()) -> Plan:
    """Walk `source` once. `exclude` lists absolute paths inside it left out (parity's own
    scratch folder when it lies inside the root); the folders holding a path of `within` (the
    working directory) are kept whatever their names."""
    source = os.path.abspath(source)
    excluded = {os.path.realpath(p) for p in exclude}
    needed = [os.path.abspath(p) for p in within]
    folders, files, links = [], [], []
    count = 0
    for root, dirs, names in os.walk(source):
        keep = []
        for name in sorted(dirs):
            path = os.path.join(root, name)
            skipped = name in SKIPPED_DIRS or _is_venv(path)
            if os.path.realpath(path) in excluded or (skipped and not any(inside(p, path) for p in needed)):
                continue
            if os.path.islink(path):
                links.append(path)
                continue
            keep.append(name)
            folders.append(path)
        dirs[:] = keep
        for name in names:
            path = os.path.join(root, name)
            if name in VCS_MARKERS:
                continue  # a work tree's `.git` file (a worktree, a submodule)
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
                f"{source} holds more than {entry_limit:,} files and folders; parity copies it for each side: "
                "name a smaller folder that holds your scripts and the data they read with --root DIR")
    files.sort()
    return Plan(source, folders, files, links)


def build(plan: Plan, target: str, file_limit: int = COPY_FILE_LIMIT, total_limit: int = COPY_TOTAL_LIMIT,
          copy_under=None, hard_links: bool = False, count_limit: int = COPY_COUNT_LIMIT) -> Mirror:
    """Make the mirror of a surveyed folder at the new folder `target`.

    With `hard_links`, a file that is not copied is a hard link to the original where the file
    system allows one (the same file system, a file the user may link), else a symbolic link:
    a hard link is made without a new inode, forty times faster than a symbolic link on a busy
    disk (docs/parity.md, "Isolation"), and protect_links(original, copy) guards both kinds."""
    source = plan.source
    prefixes = None if copy_under is None else tuple(os.path.abspath(p).rstrip(os.sep) + os.sep for p in copy_under)
    made = Mirror(source, target)
    os.makedirs(target)
    start = len(source.rstrip(os.sep)) + 1
    for folder in plan.folders:
        os.mkdir(os.path.join(target, folder[start:]))
    copies = _copies(plan.files, prefixes or (source.rstrip(os.sep) + os.sep,), file_limit, total_limit, count_limit)
    hard = hard_links
    for size, path in plan.files:
        destination = os.path.join(target, path[start:])
        if path in copies:
            shutil.copy2(path, destination)
            made.copied += 1
            continue
        if hard:
            try:
                os.link(path, destination)
                made.linked += 1
                continue
            except OSError as exc:
                hard = exc.errno != errno.EXDEV  # another file system: symbolic links from here on
        os.symlink(path, destination)
        made.linked += 1
    for path in plan.links:
        os.symlink(os.readlink(path), os.path.join(target, path[start:]))
    return made


def _copies(files, prefixes, file_limit, total_limit, count_limit) -> set:
    """The files to copy: under one of `prefixes`, nearest to it first (the working directory's
    own files, then its subfolders'), smallest first at each depth, while each is at most
    `file_limit` bytes, all together at most `total_limit` and at most `count_limit` files."""
    ranked = []
    for size, path in files:
        depths = [path.count(os.sep) - prefix.count(os.sep) for prefix in prefixes if path.startswith(prefix)]
        if depths and size <= file_limit:
            ranked.append((min(depths), size, path))
    chosen, total = set(), 0
    for _depth, size, path in sorted(ranked):
        if len(chosen) >= count_limit:
            break
        if total + size <= total_limit:
            chosen.add(path)
            total += size
    return chosen


def show_links(mirrored: Mirror) -> int:
    """Turn the hard links of a kept mirror into symbolic links to the originals, so that the
    user sees which files are the originals (an editor saving in place through a hard link
    would change them). Returns how many were turned."""
    turned = 0
    target = os.path.abspath(mirrored.target)
    for root, _dirs, names in os.walk(target):
        for name in names:
            path = os.path.join(root, name)
            original = os.path.join(mirrored.source, os.path.relpath(path, target))
            try:
                if not os.path.islink(path) and os.path.samefile(path, original):
                    os.unlink(path)
                    os.symlink(original, path)
                    turned += 1
            except OSError:
                continue
    return turned


def _is_venv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def inside(path: str, folder: str) -> bool:
    """Is `path` (absolute) inside `folder`?"""
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def protect_links(original: str, copy: str | None = None) -> None:
    """Make the mirror's links to files under `original` copy-on-write for this process.

    Installed by the recorder before the script runs: a Python audit hook sees every `open`
    (and `os.open`, `os.truncate`, `os.chmod`, `os.utime`, `os.chown`) before it happens, and
    TensorFlow's gfile and TFRecord writers, wrapped here, go through that check too. A link to
    an original file that is about to be written is replaced by a copy of it (or removed when
    the write truncates it anyway), so the write lands in the side's copy: a symbolic link to a
    file under `original`, or, inside `copy` (this side's mirror), a hard link (a regular file
    with more than one name).
    """
    import sys

    original = os.path.realpath(original)
    copy = None if copy is None else os.path.realpath(copy)
    busy = [False]

    def shared(path):
        """How `path` shares an original file: "symbolic", "hard", or None."""
        if os.path.islink(path):
            target = os.path.realpath(path)
            return "symbolic" if inside(target, original) and os.path.isfile(target) else None
        if copy is None:
            return None
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1 and inside(os.path.realpath(path), copy):
            return "hard"
        return None

    def materialize(path, keep_content=True):
        if busy[0] or not isinstance(path, (str, bytes, os.PathLike)):
            return
        path = os.fsdecode(path)
        try:
            kind = shared(path)
        except (OSError, ValueError):
            return
        if kind is None:
            return
        busy[0] = True
        try:
            if kind == "hard" and keep_content:
                private = path + ".tf1clip-private"
                shutil.copy2(path, private)
                os.replace(private, path)  # the original keeps its inode, the copy gets its own
            else:
                target = os.path.realpath(path)
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
        elif event in ("os.truncate", "os.chmod", "os.utime", "os.chown") and args:
            materialize(args[0])

    sys.addaudithook(audit)


def shares(path: str) -> bool:
    """Might `path` share its file with the user's (a link of the mirror)? The writers wrapped
    in protect_gfile ask, and then let the audit hook decide."""
    try:
        return os.path.islink(path) or (os.path.isfile(path) and os.stat(path).st_nlink > 1)
    except (OSError, ValueError):
        return False


def protect_gfile() -> None:
    """TensorFlow's gfile and TFRecordWriter open files for writing in C++, unseen by the audit
    hook: route their write-mode opens through Python's open check first (the same
    copy-on-write)."""
    from tensorflow.python.lib.io import file_io, tf_record

    from tf1clip.steps import wrap

    def make_prewrite(original):
        def _prewrite_check(self):
            mode, name = str(self.mode), os.fsdecode(self.name)
            if ("w" in mode or "a" in mode) and shares(name):
                # the audit hook replaces the link; the handle is closed at once
                open(name, "a" if "a" in mode else "w").close()
            return original(self)
        return _prewrite_check

    wrap(file_io.FileIO, "_prewrite_check", make_prewrite)

    def make_record_writer(original):
        def __init__(self, path, *args, **kwargs):
            name = os.fsdecode(path)
            if shares(name):
                open(name, "w").close()  # TFRecordWriter truncates: the link is removed first
            return original(self, path, *args, **kwargs)
        return __init__

    wrap(tf_record.TFRecordWriter, "__init__", make_record_writer)

"""Finding the files to migrate: walk the given paths, never following a symlink out of a tree.

Every entry becomes a `Task` with the path shown to the user, the path relative to the common
base of the inputs (what `--outtree` mirrors) and its kind. Symlinks are never followed: one
that stays inside its tree is recreated as a link under `--outtree` (its target is migrated on
its own), one that leaves the tree is reported and not copied.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

# Directories nobody wants mirrored or migrated.
PRUNE = {".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache",
         ".tox", ".nox", "node_modules"}


@dataclass
class Task:
    display: str                 # path as shown to the user
    source: str                  # absolute path
    rel: str                     # path relative to the inputs' base (what --outtree mirrors)
    kind: str                    # python | notebook | other | symlink | symlink-dir | missing
    link_inside: bool = False    # for symlinks: target resolves inside the tree
    explicit: bool = False       # named on the command line
    to: str = "compat"           # target tier: compat | tf2
    strategy: Optional[str] = None  # with to=tf2: mirrored | multi_worker


def _kind(path: str) -> str:
    name = os.path.basename(path)
    if name.endswith(".py"):
        return "python"
    if name.endswith(".ipynb"):
        return "notebook"
    if "." not in name:
        try:
            with open(path, "rb") as handle:
                first = handle.readline(200)
            if first.startswith(b"#!") and b"python" in first:
                return "python"
        except OSError:
            pass
    return "other"


def _inside(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def discover(paths: list[str], exclude: Optional[str] = None) -> tuple[list[Task], str]:
    """The tasks for `paths` (sorted, no duplicates) and the base directory they are relative to."""
    roots = []
    for p in paths:
        absolute = os.path.abspath(p)
        if os.path.isdir(absolute) and not os.path.islink(absolute):
            roots.append(absolute)
        else:
            roots.append(os.path.dirname(absolute))
    base = os.path.commonpath(roots) if roots else os.getcwd()
    tasks: list[Task] = []
    seen: set[str] = set()

    def add(task: Task) -> None:
        if task.source not in seen:
            seen.add(task.source)
            tasks.append(task)

    for p in paths:
        absolute = os.path.abspath(p)
        if os.path.islink(absolute):
            add(Task(p, absolute, os.path.relpath(absolute, base), "symlink", explicit=True))
        elif os.path.isdir(absolute):
            _walk(p, absolute, base, exclude, add)
        elif os.path.isfile(absolute):
            add(Task(p, absolute, os.path.relpath(absolute, base), _kind(absolute), explicit=True))
        else:
            add(Task(p, absolute, os.path.relpath(absolute, base), "missing", explicit=True))
    tasks.sort(key=lambda t: t.rel.split(os.sep))
    return tasks, base


def _walk(shown_root: str, root: str, base: str, exclude: Optional[str], add) -> None:
    exclude_real = os.path.realpath(exclude) if exclude else None
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in PRUNE or (exclude_real and os.path.realpath(full) == exclude_real):
                continue
            if os.path.islink(full):
                add(Task(_shown(shown_root, root, full), full, os.path.relpath(full, base), "symlink-dir",
                         link_inside=_inside(full, root)))
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            full = os.path.join(dirpath, f)
            shown = _shown(shown_root, root, full)
            if os.path.islink(full):
                add(Task(shown, full, os.path.relpath(full, base), "symlink", link_inside=_inside(full, root)))
            else:
                add(Task(shown, full, os.path.relpath(full, base), _kind(full)))


def _shown(shown_root: str, root: str, full: str) -> str:
    return os.path.join(shown_root, os.path.relpath(full, root))

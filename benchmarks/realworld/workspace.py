"""Scratch trees for the harness: a fresh copy of a repository at its commit, with data in place.

Work that is the same for many scripts is done once and shared between threads: the exported
tree of each (repository, commit), each data generator's output, and each migration of a
working folder (the tools migrate a folder the way a user migrates the project they run).
Every step then gets its own fresh tree, so nothing one step writes (checkpoints, logs) is
seen by another.
"""
from __future__ import annotations

import json
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from realworld import datagen, snapshots
from realworld.manifest import Entry

_LAUNCHER = '''\
# Written by benchmarks/realworld.py: `python -m {module}` for tools that take a file.
import os, runpy, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
runpy.run_module("{module}", run_name="__main__", alter_sys=True)
'''
LAUNCHER_NAME = "_realworld_main.py"
# IPython lines that are not Python: `%magic`, `!shell`, `x = !cmd`, `obj?`.
_MAGIC_PREFIXES = ("%", "!", "?")


@dataclass
class Tree:
    root: Path      # the repository's tree
    cwd: Path       # where the script runs
    script: Path    # what is run (the file, a notebook's code as a .py, or a -m launcher)


class Workspace:
    def __init__(self, snapshot_dir: Path, scratch: Path):
        self.snapshot_dir = snapshot_dir
        self.scratch = scratch
        self.cache = scratch / "cache"
        self.cache.mkdir(parents=True, exist_ok=True)
        self._guard = threading.Lock()
        self._locks: dict = {}
        self._results: dict = {}

    def once(self, key, make):
        """make() the first time `key` is asked for (by any thread); the same result (or
        exception) every time after."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._results:
                try:
                    self._results[key] = (True, make())
                except Exception as exc:  # noqa: BLE001 - kept and raised again for every asker
                    self._results[key] = (False, exc)
        ok, value = self._results[key]
        if not ok:
            raise value
        return value

    # ---- the repository at its commit ---------------------------------------------------------
    def exported(self, entry: Entry) -> tuple[Path, list[str]]:
        """(tar of the tree, paths whose blobs the snapshot lacks)."""
        def make():
            gdir = snapshots.git_dir(self.snapshot_dir, entry.repo)
            tar = self.cache / f"{entry.repo.replace('/', '+')}-{entry.commit[:12]}.tar"
            return tar, snapshots.export_tar(gdir, entry.commit, tar)
        return self.once(("tar", entry.repo, entry.commit), make)

    def pristine(self, entry: Entry) -> Path:
        """One shared, read-only extraction: what the migration tools read."""
        tar, _ = self.exported(entry)
        return self.once(("pristine", entry.repo, entry.commit),
                         lambda: snapshots.extract(tar, self.cache / "pristine" / tar.stem))

    def tree(self, entry: Entry, dest: Path, overlay: Path | None = None) -> Tree:
        """A fresh tree at `dest`: the repository, `overlay` copied over the working folder (a
        migrated copy of it), the entry's data, and the file to run (a notebook's code cells as
        a .py beside it: the migrated notebook's when the overlay holds one)."""
        tar, _ = self.exported(entry)
        snapshots.extract(tar, dest)
        workdir = dest / entry.workdir
        if overlay is not None:
            shutil.copytree(overlay, workdir, dirs_exist_ok=True, symlinks=True)
        for gone in entry.remove:
            path = dest / gone
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        for gen, target in entry.data:
            self.place_data(gen, target, dest)
        cwd = workdir
        script = dest / entry.path
        if entry.notebook:
            notebook = script
            script = script.with_name(script.stem + "_ipynb.py")
            script.write_text(notebook_code(notebook))
        if entry.module:
            script = cwd / LAUNCHER_NAME
            script.write_text(_LAUNCHER.format(module=entry.module))
        return Tree(dest, cwd, script)

    # ---- data -------------------------------------------------------------------------------
    def place_data(self, gen: str, target: str, root: Path) -> None:
        made = self.once(("data", gen), lambda: self._generate(gen))
        path = Path(target) if PurePosixPath(target).is_absolute() else root / target
        if PurePosixPath(target).is_absolute():
            # outside the scratch tree: written once, the same bytes for every script
            self.once(("abs-data", target), lambda: _copy_if_missing(made, path))
        else:
            _copy(made, path)

    def _generate(self, gen: str) -> Path:
        folder = self.cache / "data" / gen
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        payload = folder / "payload"
        datagen.generate(gen, payload)
        return payload


def _copy(source: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, dest, dirs_exist_ok=True)
    else:
        shutil.copy2(source, dest)


def _copy_if_missing(source: Path, dest: Path) -> Path:
    if not dest.exists():
        tmp = dest.with_name(dest.name + ".realworld-part")
        shutil.rmtree(tmp, ignore_errors=True)
        _copy(source, tmp)
        tmp.rename(dest)
    return dest


def notebook_code(path: Path) -> str:
    """A notebook's code cells as one script, in order, as Jupyter would run them top to bottom.
    IPython-only lines (magics, shell escapes) become `pass`; cells run by a cell magic
    (`%%bash`, ...) are left out."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    parts = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if text.lstrip().startswith("%%"):
            continue
        lines = []
        for line in text.splitlines():
            stripped = line.lstrip()
            if stripped.startswith(_MAGIC_PREFIXES) or stripped.rstrip().endswith("?") and "#" not in stripped:
                line = line[:len(line) - len(stripped)] + "pass  # IPython: " + stripped
            lines.append(line)
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"

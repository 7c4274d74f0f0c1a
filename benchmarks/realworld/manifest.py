"""The manifest: every corpus file, runnable or not and why, and what a runnable one needs.

A TOML file (`benchmarks/realworld-manifest.toml` is the one for the development corpus):

    [defaults]
    steps = 5            # the step cut: stop after this many updates
    timeout = 300        # seconds for each step of the harness (one process)

    [repos."owner/name"]
    commit = "40 hex digits"

    [[file]]
    repo = "owner/name"
    path = "dir/train.py"          # a .py script or a .ipynb notebook (its code cells, joined)
    skip = "library"               # present: not runnable; one of SKIP_KINDS ...
    why = "imported by train.py"   # ... and why, in a line
    data = ["mnist:MNIST_data"]    # generator:path (relative to the repository root, or absolute)
    args = ["--train"]             # command-line arguments
    setup = ["data.py"]            # run first with plain python in cwd (what its README says)
    remove = ["dir/model"]         # repository files taken away first (say why in note)
    cwd = "dir"                    # where it runs, from the repository root (default: its folder)
    module = "pkg.main"            # run as `python -m pkg.main` (from cwd) instead of as a file
    steps = 2                      # its own step cut
    timeout = 600                  # its own per-step timeout
    trains = false                 # changes no variable: nothing for parity to compare
    note = "..."                   # what it needs and why, for humans

The migration tools see the script's working folder (`cwd`): that is the tree they migrate,
as a user migrating the project they run would.
"""
from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

# Why a file is not run. Each is a property of the file (or of this machine), never of tf1clip:
# a script that fails because of tf1clip is run and counted as a failure.
SKIP_KINDS = {
    "library": "a module imported by other files, not a program",
    "python2": "Python 2 source",
    "network": "needs the network (a pretrained model or a data set that cannot be made up locally)",
    "package": "needs a Python package that is not installed",
    "interactive": "waits for a human (stdin, a window)",
    "needs-output": "needs what another program writes first (a checkpoint, an exported graph)",
    "exercise": "an exercise with blanks to fill in: it fails by design",
    "broken": "fails on TF 1.x as well, for a reason that has nothing to do with TensorFlow 2",
    "not-tf1": "not TF 1.x graph code (TF 0.x API, or no TensorFlow at all)",
}

KNOWN_KEYS = {"repo", "path", "skip", "why", "data", "remove", "args", "setup", "cwd", "module", "steps",
              "timeout", "trains", "note"}


class ManifestError(Exception):
    """The manifest is malformed: one line naming the entry and the problem."""


@dataclass
class Entry:
    repo: str
    commit: str
    path: str
    skip: str | None = None
    why: str = ""
    data: list[tuple[str, str]] = field(default_factory=list)   # (generator, path)
    remove: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    cwd: str | None = None
    module: str | None = None
    steps: int | None = None
    timeout: float = 300.0
    trains: bool = True
    note: str = ""

    @property
    def name(self) -> str:
        """Short, unique: the repository owner and the path (`nlintz/03_net.py`)."""
        return f"{self.repo.split('/')[0]}/{self.path}"

    @property
    def runnable(self) -> bool:
        return self.skip is None

    @property
    def notebook(self) -> bool:
        return self.path.endswith(".ipynb")

    @property
    def workdir(self) -> str:
        """The folder it runs in, relative to the repository root ('' for the root)."""
        if self.cwd is not None:
            return self.cwd.strip("/")
        parent = str(PurePosixPath(self.path).parent)
        return "" if parent == "." else parent


@dataclass
class Manifest:
    steps: int
    entries: list[Entry]

    def select(self, patterns: list[str] | None) -> list[Entry]:
        """Entries whose name matches one of the shell patterns (all when none given)."""
        if not patterns:
            return list(self.entries)
        chosen = [e for e in self.entries if any(fnmatch.fnmatchcase(e.name, p) or e.name == p for p in patterns)]
        unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(e.name, p) or e.name == p
                                                   for e in self.entries)]
        if unmatched:
            raise ManifestError(f"--only {unmatched[0]!r} matches no manifest entry")
        return chosen


def load(path) -> Manifest:
    with open(path, "rb") as handle:
        try:
            raw = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise ManifestError(f"{path}: {exc}") from None
    defaults = raw.get("defaults", {})
    repos = raw.get("repos", {})
    entries, seen = [], set()
    for index, item in enumerate(raw.get("file", []), start=1):
        where = f"{path}: [[file]] #{index} ({item.get('path', '?')})"
        unknown = set(item) - KNOWN_KEYS
        if unknown:
            raise ManifestError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        for key in ("repo", "path"):
            if key not in item:
                raise ManifestError(f"{where}: missing {key!r}")
        commit = repos.get(item["repo"], {}).get("commit")
        if not commit:
            raise ManifestError(f"{where}: no [repos.\"{item['repo']}\"] commit")
        if "skip" in item and item["skip"] not in SKIP_KINDS:
            raise ManifestError(f"{where}: skip = {item['skip']!r} is not one of {', '.join(SKIP_KINDS)}")
        if "skip" in item and not item.get("why"):
            raise ManifestError(f"{where}: a skipped file says why (why = \"...\")")
        data = []
        for spec in item.get("data", []):
            gen, sep, target = spec.partition(":")
            if not sep or not target:
                raise ManifestError(f"{where}: data {spec!r} is not GENERATOR:PATH")
            data.append((gen, target))
        entry = Entry(repo=item["repo"], commit=commit, path=item["path"], skip=item.get("skip"),
                      why=item.get("why", ""), data=data, remove=list(item.get("remove", [])),
                      args=[str(a) for a in item.get("args", [])], setup=list(item.get("setup", [])),
                      cwd=item.get("cwd"), module=item.get("module"), steps=item.get("steps"),
                      timeout=float(item.get("timeout", defaults.get("timeout", 300))),
                      trains=bool(item.get("trains", True)), note=item.get("note", ""))
        if entry.name in seen:
            raise ManifestError(f"{where}: {entry.name} listed twice")
        seen.add(entry.name)
        entries.append(entry)
    return Manifest(steps=int(defaults.get("steps", 5)), entries=entries)

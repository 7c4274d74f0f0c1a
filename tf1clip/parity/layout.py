"""Where each side of a parity run works: the root it copies, its place inside the copy, and
how the copy's paths read in what parity tells the user.

- The root: `--root DIR` when given (it must hold the working directory), else
  workdir.find_root (the top of the work tree holding the working directory, or that folder
  itself outside any work tree).
- The side's working directory is the copy's folder at the working directory's place in the
  root, so `'../../MNIST_data'` read from `GAN/infogan/` finds the copy's `MNIST_data/`.
- What is copied rather than linked: the working directory's subtree and the scripts' own
  folders, as before the root was widened; the rest of the root is linked, copy-on-write.
- A script's error names paths of the copy, in a temporary folder that parity deletes; they
  are told as the user's paths (the copy mirrors the root), and a path outside the root,
  which no copy holds, says so and which --root would hold it.
"""
from __future__ import annotations

import os
import re

from tf1clip.parity import workdir


class LayoutError(Exception):
    """--root names no folder, or one that does not hold the working directory."""


def choose_root(cwd: str, given, scripts) -> str:
    """The root each side copies (see the module docstring); raises LayoutError."""
    if given is None:
        return workdir.find_root(cwd, scripts)
    root = os.path.abspath(given)
    if not os.path.isdir(root):
        raise LayoutError(f"--root {given}: no such folder")
    if not workdir.inside(cwd, root):
        raise LayoutError(f"--root {given}: it does not hold the working directory {cwd} (each side runs "
                          "from the same place inside its copy of the root)")
    return root


def copied(cwd: str, root: str, scripts) -> list[str]:
    """The folders whose files are copied (within the size budgets) rather than linked."""
    folders = [cwd]
    for script in scripts:
        folder = os.path.dirname(os.path.abspath(script))
        if workdir.inside(folder, root) and not any(workdir.inside(folder, f) for f in folders):
            folders.append(folder)
    return folders


def place(cwd: str, root: str, copy: str) -> str:
    """The side's working directory: `cwd`'s place in `root`, inside `copy`."""
    relative = os.path.relpath(cwd, root)
    return copy if relative == "." else os.path.join(copy, relative)


class UserPaths:
    """Tell a side's paths as the user's: the copy stands for the root, and each folder above
    the copy (inside parity's temporary folder) for the folder as far above the root."""

    def __init__(self, root: str, copy: str, cwd: str):
        self.root, self.cwd = os.path.abspath(root), os.path.abspath(cwd)
        pairs, here, there = [], os.path.abspath(copy), self.root
        scratch = os.path.dirname(os.path.dirname(here))  # the run's temporary folder: .../side/work
        while True:
            pairs.append((here, there))
            if here == scratch or os.path.dirname(there) == there:
                break
            here, there = os.path.dirname(here), os.path.dirname(there)
        self.pairs = pairs  # longest first: the copy, then each folder above it

    def told(self, text: str) -> str:
        outside = []

        def user_path(match, there):
            path = there + match.group(1)
            if not workdir.inside(os.path.normpath(path), self.root):
                outside.append((os.path.normpath(path), os.path.normpath(path)))
            return path

        for here, there in self.pairs:
            pattern = re.compile(re.escape(here) + r"((?:/[^\s'\":,;()\[\]]*)?)(?=$|[\s'\":,;()\[\]])")
            text = pattern.sub(lambda m, there=there: user_path(m, there), text)
        for relative in re.findall(r"(?<![\w/.])(\.\.(?:/[^\s'\":,;()\[\]]*)?)", text):
            path = os.path.normpath(os.path.join(self.cwd, relative))
            if not workdir.inside(path, self.root):  # a relative path, read from the working directory
                outside.append((f"{relative} (from the working directory: {path})", path))
        if outside:
            shown, path = outside[0]
            wider = os.path.commonpath([self.root, path])
            text += (f" (parity ran this side in a copy of {self.root}; {shown} is outside it, so the script "
                     f"could not see it, whatever it holds: run parity with --root {wider})")
        return text

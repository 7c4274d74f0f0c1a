"""Find a repository's snapshot on disk and write its tree at a pinned commit into a folder.

A snapshot folder holds one git directory per repository, in either layout:
`<owner>+<name>/repo` (a bare git dir, or a folder with `.git` inside), or a plain checkout
`<owner>/<name>` (with `.git` inside). Nothing is fetched: a repository that is not there is
reported as missing.

Snapshots may lack their largest blobs (a partial mirror). `git archive` stops at the first
missing blob, so the tree is written blob by blob from `git ls-tree` and `git cat-file --batch`,
and the paths whose content is absent are returned: a script that needs one of them fails
with that reason instead of the whole repository being lost.
"""
from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path


class SnapshotError(Exception):
    """The repository or commit is not in the snapshot folder."""


def git_dir(snapshots: Path, repo: str) -> Path:
    """The git directory of `repo` ("owner/name") under `snapshots`."""
    owner, name = repo.split("/", 1)
    candidates = [snapshots / f"{owner}+{name}" / "repo", snapshots / f"{owner}+{name}",
                  snapshots / owner / name]
    for base in candidates:
        for gdir in (base / ".git", base):
            if (gdir / "objects").is_dir() and (gdir / "HEAD").is_file():
                return gdir
    raise SnapshotError(f"{repo}: no snapshot under {snapshots} (looked for "
                        f"{owner}+{name}/repo and {owner}/{name})")


def _git(gdir: Path, *args: str, data: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", "--git-dir", str(gdir), *args], input=data, capture_output=True)
    if proc.returncode != 0:
        raise SnapshotError(f"git {' '.join(args[:2])} in {gdir}: "
                            f"{proc.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    return proc.stdout


def export_tar(gdir: Path, commit: str, tar_path: Path) -> list[str]:
    """Write the tree of `commit` as an uncompressed tar; return the paths whose blobs are missing."""
    listing = _git(gdir, "ls-tree", "-r", "-z", "--full-tree", commit)
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, path = record.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob":
            entries.append((mode.decode(), sha.decode(), path.decode("utf-8", "surrogateescape")))
    request = "".join(f"{sha}\n" for _, sha, _ in entries).encode()
    out = _git(gdir, "cat-file", "--batch", data=request)
    missing, pos = [], 0
    tmp = tar_path.with_suffix(".part")
    with tarfile.open(tmp, "w") as tar:
        for mode, sha, path in entries:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            pos = end + 1
            if len(header) < 3 or header[1] == b"missing":
                missing.append(path)
                continue
            size = int(header[2])
            blob = out[pos:pos + size]
            pos += size + 1
            info = tarfile.TarInfo(path)
            if mode == "120000":
                info.type, info.linkname = tarfile.SYMTYPE, blob.decode("utf-8", "surrogateescape")
                tar.addfile(info)
            else:
                info.size, info.mode = size, 0o755 if mode == "100755" else 0o644
                tar.addfile(info, _Bytes(blob))
    os.replace(tmp, tar_path)
    return missing


class _Bytes:
    """A minimal file object over bytes for tarfile.addfile."""

    def __init__(self, data: bytes):
        self._data, self._pos = data, 0

    def read(self, n: int = -1) -> bytes:
        end = len(self._data) if n < 0 else self._pos + n
        chunk, self._pos = self._data[self._pos:end], min(end, len(self._data))
        return chunk


def extract(tar_path: Path, dest: Path) -> Path:
    """Unpack an exported tree into `dest` (created); return `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tar_path) as tar:
        tar.extractall(dest, filter="tar")
    return dest

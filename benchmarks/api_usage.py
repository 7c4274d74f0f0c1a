"""How often the proving ground's real files use each TF 1.x symbol: the weights of the API coverage table.

    python benchmarks/api_usage.py /work/.mirror      # writes tools/api_usage.txt

Reads every Python file of benchmarks/realworld-manifest.toml (the development corpus's 18
repositories, at their pinned commits, from the snapshot folder) with the compat tier's `ast`
model (`codemods.model.FileModel`: imports and aliases resolved, `import tensorflow as tf`,
`from tensorflow.contrib import slim`, `tf.compat.v1`), and counts each use of a symbol of
tools/api_surface.txt: the longest dotted prefix of a reference that is a symbol (a TensorFlow name
with no such prefix is counted as `?name`). Only the counts are written (the files are not ours to
commit): `symbol<TAB>uses<TAB>files`, most used first.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "tools")]

import bench_codemod  # noqa: E402
import gen_api_surface  # noqa: E402
from codemods.model import FileModel  # noqa: E402

OUT = ROOT / "tools" / "api_usage.txt"


def spelled(qname: str) -> str:
    """A qualified name as the surface spells it: `tensorflow.compat.v1.nn.relu` → `tf.nn.relu`,
    `tensorflow.contrib.slim.conv2d` → `tf.contrib.slim.conv2d`."""
    for prefix in ("tensorflow.compat.v1", "tensorflow"):
        if qname == prefix:
            return "tf"
        if qname.startswith(prefix + "."):
            return "tf." + qname[len(prefix) + 1:]
    return qname


def uses(text: str, surface: dict) -> Counter:
    found = Counter()
    try:
        model = FileModel(text)
    except SyntaxError:
        return found
    for ref in model.references:
        for binding in ref.bindings:
            if not binding.qname:
                continue
            parts = spelled(binding.qname).split(".") + list(ref.parts)
            for end in range(len(parts), 1, -1):
                name = ".".join(parts[:end])
                if name in surface:
                    found[name] += 1
                    break
            else:
                if parts[0] == "tf" and len(parts) > 1:  # a TensorFlow name the surface lacks
                    found["?" + ".".join(parts)] += 1
            break
    return found


def count(snapshots: Path) -> tuple[Counter, Counter, int]:
    surface = gen_api_surface.read()
    total, files = Counter(), Counter()
    sources = bench_codemod.corpus_files(snapshots)
    for _, blob in sources:
        found = uses(blob.decode("utf-8", "replace"), surface)
        total.update(found)
        files.update(found.keys())
    return total, files, len(sources)


def main(argv: list) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    total, files, n = count(Path(argv[0]))
    rows = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))
    OUT.write_text(f"# uses of tools/api_surface.txt's symbols in {n} files of benchmarks/realworld-manifest.toml "
                   "(benchmarks/api_usage.py)\n" + "".join(f"{name}\t{uses_}\t{files[name]}\n" for name, uses_ in rows),
                   encoding="utf-8")
    print(f"{OUT}: {len(rows)} symbols used, {sum(total.values())} uses, {n} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

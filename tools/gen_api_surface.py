"""TF 1.x's public API surface, as the TF2 tier's coverage table counts it: generated from TensorFlow.

    python tools/gen_api_surface.py            # writes tools/api_surface.txt
    python tools/gen_api_surface.py --check    # exit 1 if the file is not what TensorFlow gives now

TF 1.15 is not installable on Python 3.11, so the surface is read from what TF 2.21 keeps of it:
every public symbol under `tf.compat.v1` (TF 1.x's API, kept by TF 2 for exactly this use),
with `tf.layers`, `tf.nn.rnn_cell` and `tf.keras` read through tf-keras (`TF_USE_LEGACY_KERAS=1`,
the Keras of TF 1.x's API), plus the `tf.contrib.*` and `tf.estimator.*` names that TF 2.21 no
longer ships, as TensorFlow's own upgrade spec (`codemods/tf2/api_spec.py`) and tf1clip's contrib
table name them. One line a symbol: `name<TAB>kind<TAB>source`; kind is function, class,
constant or unknown (a name TF 2.21 does not ship); source is `tf.compat.v1` or `named`.
tests/test_api_coverage.py runs `--check`, so the file follows TensorFlow.
"""
from __future__ import annotations

import os
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().with_name("api_surface.txt")
SKIP = {"tf.compat"}  # tf.compat.v1.compat holds the v1 and v2 trees again


# TF 1.x's flags module is TensorFlow's wrapper of absl.flags, outside the generated API tree.
API_MODULES = ("tensorflow.python.platform.flags",)


def _api_module(obj) -> bool:
    """A module of TensorFlow's (or tf-keras's) public API tree, not an implementation module."""
    name = getattr(obj, "__name__", "") or ""
    if name in API_MODULES:
        return True
    if name.startswith("tensorflow.python.") or name.startswith("tensorflow.core."):
        return False
    return name.startswith("tensorflow.") or "_api." in name or "._v1." in name or name.endswith("._v1") \
        or ".api." in name


def surface_from_tensorflow() -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    found: dict = {}
    path: list = []  # the modules being walked: an alias of an enclosing module is not walked again

    def walk(module, prefix: str) -> None:
        if id(module) in path:
            return
        path.append(id(module))
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            qname = f"{prefix}.{name}"
            try:
                obj = getattr(module, name)
            except Exception:  # a lazy member that cannot load here: not part of what TF 2.21 keeps
                continue
            if isinstance(obj, types.ModuleType):
                if qname not in SKIP and _api_module(obj):
                    walk(obj, qname)
                continue
            kind = "class" if isinstance(obj, type) else "function" if callable(obj) else "constant"
            found[qname] = (kind, "tf.compat.v1")
        path.pop()

    walk(tf.compat.v1, "tf")
    return found


def named_elsewhere() -> dict:
    """tf.contrib and tf.estimator names TF 2.21 does not ship, as the upgrade spec and tf1clip's
    contrib table name them (the spec's method entries `*.x` are not symbols)."""
    sys.path.insert(0, str(ROOT))
    from codemods import contrib_table
    from codemods.tf2 import api_spec as spec

    names = set()
    for table in (spec.RENAMES, spec.KEYWORD_RENAMES, spec.REORDERS, spec.TRANSFORMERS, spec.WARNINGS,
                  spec.ARG_WARNINGS, spec.MODULE_DEPRECATIONS):
        names.update(k for k in table if k.startswith(("tf.contrib.", "tf.estimator.")))
    for table in (contrib_table.CONTRIB_ROWS, contrib_table.ESTIMATOR_ROWS):
        for row in table.values():
            if row.old.startswith(("tensorflow.contrib.", "tensorflow.estimator.")) and not row.module:
                names.add("tf." + row.old[len("tensorflow."):])
    return {n: ("unknown", "named") for n in sorted(names)}


def surface() -> dict:
    found = surface_from_tensorflow()
    for name, row in named_elsewhere().items():
        found.setdefault(name, row)
    return dict(sorted(found.items()))


def render(found: dict) -> str:
    return "".join(f"{name}\t{kind}\t{source}\n" for name, (kind, source) in found.items())


def read(path: Path = OUT) -> dict:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, kind, source = line.split("\t")
        out[name] = (kind, source)
    return out


def main(argv: list) -> int:
    text = render(surface())
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is not what TensorFlow gives now: run python tools/gen_api_surface.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"{OUT}: {text.count(chr(10))} symbols")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

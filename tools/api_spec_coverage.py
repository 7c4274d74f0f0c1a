"""How much of TensorFlow's upgrade spec `codemods.tf2.api_changes` applies as data, and how much it refuses.

    python tools/api_spec_coverage.py            # the table docs/tf2-safety.md shows

Counts the generated table (`codemods/tf2/api_spec.py`) by kind of entry and by what the
applier does with each: applied (as data, or as a named exact transform) or refused (the TF 2
spelling would mean something else, or TF 2 has nothing). Never imports TensorFlow.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codemods.tf2 import api_spec as spec  # noqa: E402
from codemods.tf2.api_changes import partitioned  # noqa: E402
from codemods.tf2.api_decisions import ACCEPTED_ARGS, ACCEPTED_WARNINGS, KERAS_PROVEN, OVERRIDES, REMOVABLE  # noqa: E402


def rows() -> list[tuple[str, int, int, int, str]]:
    """(kind of entry, entries, applied, refused, how) per kind."""
    out = []
    renames = spec.RENAMES
    to_v1 = [k for k, v in renames.items() if v.startswith("tf.compat.v1.")]
    keras = [k for k in renames if k.startswith("tf.keras.") and k not in KERAS_PROVEN]
    missing = [k for k, v in renames.items() if v in spec.UNAVAILABLE]
    contrib = [k for k in renames if k.startswith("tf.contrib.") and not renames[k].startswith("tf.compat.v1.")]
    refused = set(to_v1) - set(OVERRIDES) | set(keras) | set(missing)
    out.append(("symbol renames (renames_v2 + manual)", len(renames), len(renames) - len(refused), len(refused),
                f"{len(to_v1)} to tf.compat.v1 refused (TF 2 has nothing with that meaning) except "
                f"{len(OVERRIDES)} tf1clip overrides; {len(keras)} tf.keras (Keras 2-era) refused, {len(KERAS_PROVEN)} kept "
                f"(proven by parity); "
                f"{len(missing)} targets missing in TF {spec.TF_VERSION}; {len(contrib)} tf.contrib renames applied"))
    pairs = [(f, old, new) for f, table in spec.KEYWORD_RENAMES.items() for old, new in table.items()]
    removed = [p for p in pairs if p[2] is None]
    safe = [p for p in removed if p[1] in REMOVABLE]
    out.append(("keyword renames (function, keyword)", len(pairs), len(pairs) - len(removed) + len(safe),
                len(removed) - len(safe),
                f"{len(pairs) - len(removed)} renamed; {len(removed)} removed arguments, of which {len(safe)} dropped "
                "as proven harmless (any value or TF 2's value) and the rest refused"))
    out.append(("reorders (positional → keyword)", len(spec.REORDERS), len(spec.REORDERS), 0, "all applied as data"))
    kinds = {}
    for row in spec.TRANSFORMERS.values():
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
    applied = kinds.get("transform", 0) + kinds.get("arg_must_be", 0) + kinds.get("add_argument", 0)
    out.append(("function transformers (tf_upgrade_v2 code)", len(spec.TRANSFORMERS), applied, kinds.get("refuse", 0),
                f"{kinds.get('transform', 0)} exact named transforms, {kinds.get('arg_must_be', 0)} argument-value "
                f"rules and {kinds.get('add_argument', 0)} added arguments as data; {kinds.get('refuse', 0)} refused "
                "(meaning differs), including tf1clip's own findings"))
    levels = {}
    for level, _ in spec.WARNINGS.values():
        levels[level] = levels.get(level, 0) + 1
    accepted = sum(1 for k, (level, _) in spec.WARNINGS.items() if level == "WARNING" and k in ACCEPTED_WARNINGS)
    strategy = sum(1 for k, (level, _) in spec.WARNINGS.items() if level == "WARNING" and partitioned(k))
    passing = accepted + strategy
    out.append(("function warnings", len(spec.WARNINGS), levels.get("INFO", 0) + passing,
                levels.get("ERROR", 0) + levels.get("WARNING", 0) - passing,
                f"{levels.get('ERROR', 0)} ERROR and {levels.get('WARNING', 0) - passing} WARNING refused; "
                f"{levels.get('INFO', 0)} INFO and {accepted} accepted WARNINGs pass (the call's own rename decides); "
                f"{strategy} partition_strategy WARNINGs pass where the call says 'div' or the translator knows "
                "the parameter is one variable or tensor, else refused"))
    args = [(f, a) for f, table in spec.ARG_WARNINGS.items() for a in table]
    ok = [p for p in args if p[1] in ACCEPTED_ARGS]
    out.append(("argument warnings (function, argument)", len(args), len(ok), len(args) - len(ok),
                "refused when the argument is given, except device/kernel-only ones (and tf.cond's strict=True)"))
    out.append(("module deprecations", len(spec.MODULE_DEPRECATIONS), 0, len(spec.MODULE_DEPRECATIONS),
                "every call under them refused (unless renamed out of the module)"))
    out.append(("signature changes (from TensorFlow)", len(spec.SIGNATURE_CHANGES), len(spec.SIGNATURE_CHANGES), 0,
                "positional arguments bound by TF 1 name; an argument TF 2 lacks refuses the call"))
    defaults = [(f, p) for f, table in spec.DEFAULT_CHANGES.items() for p in table]
    out.append(("default changes (from TensorFlow)", len(defaults), len(defaults), 0,
                "TF 1's literal default written out when omitted, or the call refused"))
    return out


def markdown() -> str:
    lines = ["| spec entries | count | applied | refused | how |", "|---|---:|---:|---:|---|"]
    for kind, total, applied, refused, how in rows():
        lines.append(f"| {kind} | {total} | {applied} | {refused} | {how} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())

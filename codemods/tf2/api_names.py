"""TF 1.x names as TensorFlow's upgrade spec knows them, and their TF 2 names (`api_changes`).

A name comes as `tf.X`, `tensorflow.X`, `tensorflow.compat.v1.X`, a slim name or `*.method` (a
method of any object): `spec_name` gives the spec's spelling, `spec_rename` its rename (or its
longest renamed prefix's), `rename` the TF 2 name or `NoTF2Mapping` (a rename to
`tf.compat.v1.X` means TF 2 has nothing with that meaning, except tf1clip's `OVERRIDES`), and
`respell` the TF 2 name back in the caller's spelling. `check_module` refuses names of modules
TF 2 removed (tf.contrib, slim), `check_in_tf2` names only TF 1 has, `keras_name` the `tf.keras`
renames Keras 3 does not compute alike.
"""
from __future__ import annotations

from typing import Optional

from codemods._tfapi import V1_ONLY
from codemods.tf2 import api_spec as spec
from codemods.tf2.api_decisions import KERAS_PROVEN, OVERRIDES


class NoTF2Mapping(Exception):
    """The call has no TF 2 form with the same meaning; `reason` says why, in one line."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def keras_name(name: str) -> str:
    """`tf.keras` in TF 2.21 is Keras 3; the spec's Keras entries were written for Keras 2 (they
    send TF 1's optimizers to `tf.keras.optimizers.legacy`, which Keras 3 refuses, and its
    initializers to `tf.compat.v1`). A Keras name the spec does not touch stays; one it
    renames is kept only where tf1clip proved Keras 3 computes the same (KERAS_PROVEN)."""
    refused = spec.TRANSFORMERS.get(name)
    if refused is not None and refused["kind"] == "refuse":
        raise NoTF2Mapping(f"{name}: {refused['reason']}")
    renamed = spec_rename(name)
    if renamed is None or name in KERAS_PROVEN:
        return name
    raise NoTF2Mapping(f"{name}: TF 2.21's tf.keras is Keras 3, and TensorFlow's upgrade spec (written for "
                       f"Keras 2) maps it to {renamed}")


def spec_name(qualified: str) -> tuple[str, Optional[str]]:
    """(spelling style, the name as the spec spells it) or (style, None) when the spec has nothing."""
    if qualified.startswith("*."):
        return "*", qualified
    for prefix, style in (("tensorflow.compat.v1.", "tensorflow"), ("tensorflow.", "tensorflow"),
                          ("tf.compat.v1.", "tf"), ("tf.", "tf")):
        if qualified.startswith(prefix):
            rest = qualified[len(prefix):]
            if rest.startswith("compat.v2.") or rest == "compat.v2":
                return style, None
            return style, "tf." + rest
    for prefix in ("slim.", "tf_slim.", "tensorflow.contrib.slim."):
        if qualified.startswith(prefix):
            return "slim", "slim." + qualified[len(prefix):]
    return "", None


def spec_rename(name: str) -> Optional[str]:
    """The spec's rename of `name`, or of its longest renamed prefix (`tf.GraphKeys.X`), else None."""
    if name in spec.RENAMES:
        return spec.RENAMES[name]
    parts = name.split(".")
    for i in range(len(parts) - 1, 1, -1):
        prefix = ".".join(parts[:i])
        if prefix in spec.RENAMES:
            return spec.RENAMES[prefix] + "." + ".".join(parts[i:])
    return None


def respell(name: str, style: str) -> str:
    if style == "tensorflow" and name.startswith("tf."):
        return "tensorflow." + name[3:]
    return name


def show(name: str) -> str:
    return name[2:] if name.startswith("*.") else name


def message(name: str, index: int) -> str:
    text = " ".join(spec.MESSAGES[index].split()).replace("<function name>", show(name))
    return text if len(text) <= 220 else text[:217].rsplit(" ", 1)[0] + " ..."


def spec_knows(name: str, short: str) -> bool:
    return any(key in table for table in (spec.RENAMES, spec.KEYWORD_RENAMES, spec.REORDERS, spec.TRANSFORMERS,
                                          spec.SIGNATURE_CHANGES, spec.ARG_WARNINGS) for key in (name, short))


def check_module(name: str, renamed: Optional[str]) -> None:
    if renamed is not None and not renamed.startswith("tf.compat.v1."):
        return  # tf_upgrade_v2 renames it before it would warn about its module
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        found = spec.MODULE_DEPRECATIONS.get(".".join(parts[:i]))
        if found is not None:
            raise NoTF2Mapping(f"{name}: {message(name, found[1])}")
    if name.startswith("slim."):
        raise NoTF2Mapping(f"{name}: tf-slim is TF 1 graph code (tf.contrib.slim); TF 2 has no {name}")


def rename(name: str, renamed: Optional[str]) -> str:
    if name in OVERRIDES:
        return OVERRIDES[name].target
    if renamed is None:
        return name
    if renamed.startswith("tf.compat.v1."):
        raise NoTF2Mapping(f"{show(name)} has no TF 2 equivalent with the same meaning (TensorFlow's upgrade "
                           f"spec maps it to {renamed})")
    if renamed.startswith("tf.compat.v2."):
        return "tf." + renamed[len("tf.compat.v2."):]
    if not renamed.startswith("tf."):
        raise NoTF2Mapping(f"{show(name)} moved out of TensorFlow ({renamed}): not available to TF 2 code here")
    if renamed in spec.UNAVAILABLE:
        raise NoTF2Mapping(f"{show(name)}: the spec's TF 2 name {renamed} does not exist in TensorFlow "
                           f"{spec.TF_VERSION}")
    return renamed


def check_in_tf2(name: str) -> None:
    if not name.startswith("tf."):
        return
    parts = name[3:].split(".")
    if any(".".join(parts[:i]) in V1_ONLY for i in range(1, len(parts) + 1)):
        raise NoTF2Mapping(f"{name} does not exist in TF 2")

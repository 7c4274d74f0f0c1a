"""Initializers (TF 1.x) → their TF 2 classes, with TF 1.x's distribution.

`tf.truncated_normal_initializer` → `tf.keras.initializers.TruncatedNormal` (the same distribution,
2 standard deviations); where TF 2's class defaults differ, TF 1.x's are written out; the others
through TensorFlow's upgrade spec and tf1clip's decisions over it (`api_decisions.OVERRIDES`). A
float32 `dtype=` is dropped (TF 2's initializers take the dtype when called), another refused.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2.api_changes import NoTF2Mapping, to_tf2
from codemods.tf2.api_decisions import OVERRIDES
from codemods.tf2.call_args import FLOAT32, is_false
from codemods.tf2.model import Other, OtherKind

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

# TF 1.x initializer → (TF 2 class, TF 1.x arguments by position, arguments TF 2 drops if float32)
INITIALIZERS = {
    "tensorflow.random_normal_initializer": ("tensorflow.random_normal_initializer", ("mean", "stddev", "seed")),
    "tensorflow.random_uniform_initializer": ("tensorflow.random_uniform_initializer", ("minval", "maxval", "seed")),
    "tensorflow.truncated_normal_initializer": ("tensorflow.keras.initializers.TruncatedNormal",
                                                ("mean", "stddev", "seed")),
    "tensorflow.zeros_initializer": ("tensorflow.zeros_initializer", ()),
    "tensorflow.ones_initializer": ("tensorflow.ones_initializer", ()),
    "tensorflow.constant_initializer": ("tensorflow.constant_initializer", ("value",)),
    "tensorflow.glorot_uniform_initializer": ("tensorflow.keras.initializers.GlorotUniform", ("seed",)),
    "tensorflow.contrib.layers.xavier_initializer": ("tensorflow.keras.initializers.GlorotUniform", ("uniform", "seed")),
    "slim.xavier_initializer": ("tensorflow.keras.initializers.GlorotUniform", ("uniform", "seed")),
    "tensorflow.initializers.random_normal": ("tensorflow.random_normal_initializer", ("mean", "stddev", "seed")),
    "tensorflow.initializers.truncated_normal": ("tensorflow.keras.initializers.TruncatedNormal",
                                                 ("mean", "stddev", "seed")),
    "tensorflow.initializers.zeros": ("tensorflow.zeros_initializer", ()),
    "tensorflow.initializers.constant": ("tensorflow.constant_initializer", ("value",)),
}
# TF 1.x's defaults where TF 2's class defaults differ (TF 2: stddev 0.05, uniform in [-0.05, 0.05]; both
# have mean 0):
# written out when the script left them out, so the variables start from TF 1.x's distribution.
TF1_DEFAULTS = {
    "tensorflow.random_normal_initializer": (("stddev", "1.0"),),
    "tensorflow.initializers.random_normal": (("stddev", "1.0"),),
    "tensorflow.random_uniform_initializer": (("minval", "0.0"), ("maxval", "1.0")),
    "tensorflow.truncated_normal_initializer": (("stddev", "1.0"),),
    "tensorflow.initializers.truncated_normal": (("stddev", "1.0"),),
}
# The other initializers TF 2 has with TF 1.x's meaning: tf1clip's decisions over the upgrade spec
# (api_decisions.OVERRIDES, proven by tests/test_api_changes.py), applied by `to_tf2`.
SPEC_INITIALIZERS = frozenset(
    "tensorflow." + name[len("tf."):] for name, row in OVERRIDES.items()
    if ".initializers." in row.target or row.target.endswith("_initializer")) - set(INITIALIZERS)


def initializer(site: "CallSite"):
    if site.qname in SPEC_INITIALIZERS:
        return _spec_initializer(site)
    tf2, params = INITIALIZERS[site.qname]
    kept = []
    for i, a in enumerate(site.node.args):
        kw = a.keyword.value if a.keyword is not None else (params[i] if i < len(params) else None)
        if kw == "dtype":
            if emit.code(a.value) not in FLOAT32:
                site.refuse(f"{site.qname.replace('tensorflow.', 'tf.')} with dtype {emit.code(a.value)}")
            continue
        if kw == "uniform":
            if not (isinstance(a.value, cst.Name) and a.value.value == "True"):
                site.refuse("xavier_initializer(uniform=False): TF 1.x's normal variant has no exact Keras twin")
            continue
        if kw == "verify_shape" and is_false(a.value):
            continue
        if kw not in params:
            site.refuse(f"{site.qname.replace('tensorflow.', 'tf.')} argument `{kw}` is not mapped")
        moved = a.keyword is None and params[:len(kept) + 1][-1:] != [kw] or (a.keyword is None and
                                                                                "uniform" in params)
        kept.append(emit.keyword(kw, a.value) if moved else a)
    given = {params[i] if a.keyword is None and i < len(params) else (a.keyword.value if a.keyword else None)
             for i, a in enumerate(site.node.args)}
    missing = [(p, v) for p, v in TF1_DEFAULTS.get(site.qname, ()) if p not in given]
    if missing:
        kept = kept + [emit.keyword(p, cst.Float(v)) for p, v in missing]
        site.tr.note(f"{site.qname.replace('tensorflow.', 'tf.')}: TF 1.x's defaults written out "
                     f"({', '.join(f'{p}={v}' for p, v in missing)}): TF 2's class defaults differ")
    node = emit.with_args(site.node.with_changes(func=site.tr.tf(tf2)), kept)
    return Other(OtherKind.INITIALIZER), node


def _spec_initializer(site: "CallSite"):
    """An initializer of SPEC_INITIALIZERS: its TF 2 class, through the upgrade spec and tf1clip's
    decisions; a float32 `dtype=` is dropped (TF 2's take the dtype when called), another refused."""
    args = []
    for a in site.node.args:
        if a.keyword is not None and a.keyword.value == "dtype":
            if emit.code(a.value) not in FLOAT32:
                site.refuse(f"{site.qname.replace('tensorflow.', 'tf.')} with dtype {emit.code(a.value)}")
            continue
        args.append(a)
    try:
        name, call = to_tf2(site.qname.replace("tensorflow.", "tf.", 1), emit.with_args(site.node, args))
    except NoTF2Mapping as exc:
        site.refuse(exc.reason)
    return Other(OtherKind.INITIALIZER), call.with_changes(func=site.tr.tf(name.replace("tf.", "tensorflow.", 1)))


CALLS = {q: initializer for q in (*INITIALIZERS, *SPEC_INITIALIZERS)}

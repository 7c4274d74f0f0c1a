"""tf1clip's own decisions on top of TensorFlow's upgrade spec, each with its reason.

The spec (`api_spec`) says what changed between TF 1 and TF 2; these tables say what tf1clip
does where the spec alone is not enough for TF 2.21: a `tf.compat.v1` rename that a TF 2 call
can replace exactly (`OVERRIDES`), a removed argument that can be dropped (`REMOVABLE`), a
warning that does not change the numbers (`ACCEPTED_WARNINGS`, `ACCEPTED_ARGS`), Keras 3
optimizers proven by parity (`KERAS_PROVEN`), a TF 1 default of None that TF 1.15 documents as
a value (`NONE_DEFAULTS`). tests/test_api_changes.py proves the rows with numbers.
"""
from __future__ import annotations

from typing import NamedTuple

from codemods._usage import KEPT_V1_OPS


class Override(NamedTuple):
    """tf1clip's decision where the spec says `tf.compat.v1` but a TF 2 call keeps the meaning."""

    target: str
    why: str
    params: tuple = ()        # the TF 1 parameters the TF 2 call takes alike (empty: check by signature)
    defaults: tuple = ()      # (parameter, TF 1 default) to write out when omitted (TF 2's differs)


OVERRIDES = {o_name: o for o_name, o in (
    ("tf.set_random_seed", Override("tf.random.set_seed", "the program's global seed: TF 2 derives op seeds from it "
                                    "by another rule, so random draws differ in any case (parity transfers the "
                                    "initial weights)")),
    # TF 1 initializers took a dtype in the constructor (why the spec sends them to tf.compat.v1);
    # without one, TF 2's initializer of the same name draws from the same distribution once the
    # TF 1 defaults are written out (DEFAULT_CHANGES: random_normal's stddev 1.0, not 0.05).
    ("tf.zeros_initializer", Override("tf.zeros_initializer", "zeros, as in TF 1")),
    ("tf.ones_initializer", Override("tf.ones_initializer", "ones, as in TF 1")),
    ("tf.constant_initializer", Override("tf.constant_initializer", "the same constant, as in TF 1")),
    ("tf.random_normal_initializer", Override("tf.random_normal_initializer", "the same normal distribution")),
    ("tf.random_uniform_initializer", Override("tf.random_uniform_initializer", "the same uniform distribution",
                                               defaults=(("maxval", "1.0"),))),  # TF 1: None = 1 for floats
    ("tf.truncated_normal_initializer", Override("tf.keras.initializers.TruncatedNormal", "the same truncated normal",
                                                 params=("mean", "stddev", "seed"),
                                                 defaults=(("mean", "0.0"), ("stddev", "1.0")))),
    ("tf.glorot_uniform_initializer", Override("tf.keras.initializers.GlorotUniform", "the same Glorot uniform",
                                               params=("seed",))),
    # TF 1.15's init_ops.VarianceScaling and Keras 3's compute the same fans (a kernel's receptive
    # field times its last two dimensions), divide the scale by the same max(1, fan), and draw
    # from the same distributions ("normal" is the truncated normal in both, with the same 0.8796
    # correction); the named ones are VarianceScaling with TF 1's scale, mode and distribution.
    ("tf.variance_scaling_initializer", Override("tf.keras.initializers.VarianceScaling",
                                                 "the same variance scaling (fans, scale, distribution)",
                                                 params=("scale", "mode", "distribution", "seed"))),
    ("tf.initializers.variance_scaling", Override("tf.keras.initializers.VarianceScaling",
                                                  "the same variance scaling (fans, scale, distribution)",
                                                  params=("scale", "mode", "distribution", "seed"))),
    ("tf.glorot_normal_initializer", Override("tf.keras.initializers.GlorotNormal",
                                              "the same Glorot normal (truncated, fan_avg)", params=("seed",))),
    ("tf.initializers.glorot_normal", Override("tf.keras.initializers.GlorotNormal",
                                               "the same Glorot normal (truncated, fan_avg)", params=("seed",))),
    ("tf.initializers.glorot_uniform", Override("tf.keras.initializers.GlorotUniform", "the same Glorot uniform",
                                                params=("seed",))),
    ("tf.initializers.he_normal", Override("tf.keras.initializers.HeNormal", "the same He normal (2, fan_in, truncated)",
                                           params=("seed",))),
    ("tf.initializers.he_uniform", Override("tf.keras.initializers.HeUniform", "the same He uniform (2, fan_in)",
                                            params=("seed",))),
    ("tf.initializers.lecun_normal", Override("tf.keras.initializers.LecunNormal",
                                              "the same LeCun normal (1, fan_in, truncated)", params=("seed",))),
    ("tf.initializers.lecun_uniform", Override("tf.keras.initializers.LecunUniform", "the same LeCun uniform (1, fan_in)",
                                               params=("seed",))),
    # TF 1.15's Orthogonal and Keras 3's: a normal draw of (max(rows, cols), min(rows, cols)) with rows
    # the product of all but the last dimension, its QR, Q's columns signed by R's diagonal, gain times it.
    ("tf.orthogonal_initializer", Override("tf.keras.initializers.Orthogonal", "the same orthogonal matrices",
                                           params=("gain", "seed"))),
    ("tf.initializers.orthogonal", Override("tf.keras.initializers.Orthogonal", "the same orthogonal matrices",
                                            params=("gain", "seed"))),
    ("tf.initializers.identity", Override("tf.keras.initializers.Identity", "gain times the identity matrix, as in TF 1",
                                          params=("gain",))),
    ("tf.initializers.ones", Override("tf.ones_initializer", "ones, as in TF 1")),
)} | {f"tf.{name}": Override(f"tf.compat.v1.{name}", "TF 1.x's own op, kept in its tf.compat.v1 spelling: "
                             "stateless, it computes the same in TF 2, eagerly and in tf.function")
      for name in KEPT_V1_OPS}
# TF 1 defaults of None that TF 1.15 documents as a value (DEFAULT_CHANGES compares them with TF 2's).
NONE_DEFAULTS = {
    ("tf.nn.conv1d", "data_format"): "'NWC'",
}
# tf.keras names the spec renames (for Keras 2) that Keras 3 keeps with TF 1.x's update rule:
# proven by parity (codemods/tf2/optimizer_table.py, fixtures/legacy/r05_keras_clipvalue.py).
KERAS_PROVEN = {
    "tf.keras.optimizers.Adam": "tf-keras' Adam update is Keras 3's (fixtures/legacy/r05_keras_clipvalue.py)",
    "tf.keras.optimizers.SGD": "tf-keras' SGD update is Keras 3's (fixtures/tf2_golden/optimizers/keras_lr.py)",
}
# Arguments TF 2 removed (KEYWORD_RENAMES → None), and when dropping one keeps the numbers:
# "any" value, or the one literal for which TF 1 behaved as TF 2 does. Others refuse.
REMOVABLE = {
    "colocate_gradients_with_ops": ("any", "device placement only"),
    "use_cudnn_on_gpu": ("any", "kernel choice only"),
    "validate_indices": ("any", "index validation only"),
    "checkpoint_v2": ("any", "graph-def comparison option"),
    "hash_table_shared_name": ("any", "graph-def comparison option"),
    "arg_types": ("any", "autograph display option"),
    "arg_values": ("any", "autograph display option"),
    "indentation": ("any", "autograph display option"),
    "strict": ("True", "TF 2's tf.cond behaves as strict=True"),
}
# Function warnings (level WARNING) that do not change what the call computes, with the check.
ACCEPTED_WARNINGS = {
    "*.save": "where and in which format a model is saved, not what it computes",
}
# Arguments a warning is about that do not change the numbers (any value / the literal).
ACCEPTED_ARGS = {"colocate_gradients_with_ops": "any", "use_cudnn_on_gpu": "any", "strict": "True"}

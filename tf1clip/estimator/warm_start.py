"""`tf.estimator.WarmStartSettings` (TF 1.15): start a new model from another's checkpoint.

The warm start itself is TensorFlow's `tf.compat.v1.train.warm_start`, called by the Estimator
after `model_fn` when `model_dir` has no checkpoint of its own.
"""
from __future__ import annotations

import collections
import os

import tensorflow as tf

VocabInfo = tf.compat.v1.train.VocabInfo


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info", "var_name_to_prev_var_name"])):
    """What to warm-start from: a checkpoint (or its folder), which variables, renames, vocabularies."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start, var_name_to_vocab_info or {},
                               var_name_to_prev_var_name or {})


def default_settings(warm_start_from):
    """The settings for Estimator's `warm_start_from`: a path (checkpoint or SavedModel) or settings."""
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        variables = os.path.join(path, "variables", "variables")
        if tf.io.gfile.exists(variables + ".index"):  # a SavedModel: its variables checkpoint
            tf.compat.v1.logging.info("Warm-starting from a SavedModel")
            return WarmStartSettings(ckpt_to_initialize_from=variables)
        return WarmStartSettings(ckpt_to_initialize_from=path)
    raise ValueError(f"warm_start_from must be a string or a WarmStartSettings, instead got {type(warm_start_from)}")

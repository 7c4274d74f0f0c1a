"""A TF 1.x call → the TF 2 call that means the same, or a refusal: TensorFlow's upgrade spec applied.

    from codemods.tf2.api_changes import NoTF2Mapping, to_tf2
    name, call = to_tf2("tf.nn.dropout", call)      # tf.nn.dropout(x, keep_prob)
    # → "tf.nn.dropout", tf.nn.dropout(x, rate=1 - keep_prob)

The same spelling can mean something else in TF 2 (`tf.nn.dropout`'s second argument is the
drop rate; `reduction_indices=` is gone; `softmax_cross_entropy_with_logits` lets gradients
into the labels). What changed is TensorFlow's own knowledge, generated into
`codemods/tf2/api_spec.py` by `tools/gen_api_spec.py`; this module applies it in
tf_upgrade_v2's order, to one libcst Call:

1. positional arguments whose parameter moved become keywords (the spec's REORDERS, and
   SIGNATURE_CHANGES, read from TensorFlow: a TF 1 positional argument stays positional only
   where TF 2 has the same parameter at the same place);
2. keywords are renamed, or dropped where TF 2 removed the argument and that is proven not to
   change the numbers (`api_decisions.REMOVABLE`); any other removed argument refuses;
3. tf_upgrade_v2's code transformers: the exact ones are named functions in
   `api_transforms` (keep_prob → rate, to_float → cast, ...), the data ones add an argument or
   require one value; the others refuse (their meaning differs);
4. the symbol is renamed. A rename to `tf.compat.v1.X` means TF 2 has nothing with that
   meaning: refused (except the few `OVERRIDES`, tf1clip's own decisions with their reason);
5. what is left must be TF 2 API taking these arguments (SIGNATURE_CHANGES, `_tfapi.V1_ONLY`),
   and every default that TF 2 changed must not be relied on (DEFAULT_CHANGES).

`NoTF2Mapping(reason)` is raised whenever the meaning cannot be kept. Never imports TensorFlow.
The names are read in `api_names`, the arguments in `api_arguments`; this module applies both.
Names may be given as `tf.X`, `tensorflow.X`, `tensorflow.compat.v1.X` or `*.method` (a method
of any object); the TF 2 name comes back in the caller's spelling (`tf.` or `tensorflow.`).
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from codemods.tf2 import api_spec as spec
from codemods.tf2._base import arg
from codemods.tf2.api_arguments import (apply_override, apply_transformer, check_arguments, check_warnings,
                                        keywords_for_moved_positions, partitioned, rename_keywords)
from codemods.tf2.api_decisions import OVERRIDES
from codemods.tf2.api_names import (NoTF2Mapping, check_in_tf2, check_module, keras_name, message, rename,
                                    respell, show, spec_knows, spec_name, spec_rename)
from codemods.tf2.call_args import with_commas


def to_tf2(qualified_name: str, call: cst.Call, *, alias: str = "tf",
           one_tensor: Optional[Callable[[cst.BaseExpression], bool]] = None) -> tuple[str, cst.Call]:
    """The TF 2 qualified name and call for TF 1.x's `qualified_name(call.args)`.

    Raises NoTF2Mapping when TF 2 has no call with the same meaning. `alias` is the module's
    name for `tensorflow`, used in arguments a transform writes (`dtype=tf.float32`).
    `one_tensor(argument)` is the caller's knowledge of a value: true when the argument is
    known to be one tensor or variable (not a list of shards, not a partitioned variable); the
    calls whose TF 1 `partition_strategy` TF 2 removed need it (`api_arguments.check_warnings`)."""
    style, name = spec_name(qualified_name)
    if name is None:
        return qualified_name, call  # not TensorFlow (or TF 2 already): nothing the spec knows
    if name.startswith("tf.keras."):
        return respell(keras_name(name), style), call
    short = "*." + name.rsplit(".", 1)[-1]
    transformer = spec.TRANSFORMERS.get(name) or spec.TRANSFORMERS.get(short)
    known = spec_knows(name, short)
    if known and any(a.star for a in call.args):
        raise NoTF2Mapping(f"{show(name)} is called with *args/**kwargs: its arguments cannot be checked "
                           "against TF 2's")
    renamed = spec_rename(name)
    if not name.startswith("*.") and not (transformer and transformer["kind"] == "transform"):
        check_module(name, renamed)
    check_warnings(name, short, call, one_tensor)
    call = keywords_for_moved_positions(name, call)
    call = rename_keywords(name, short, call)
    if partitioned(name) is not None and arg(call, None, "partition_strategy") is not None:
        # accepted above: 'div', which is what TF 2 does, or not read (one tensor); TF 2 has no such argument
        call = call.with_changes(args=with_commas([a for a in call.args if not (
            a.keyword is not None and a.keyword.value == "partition_strategy")]))
    new_name = None
    if transformer is not None:
        new_name, call = apply_transformer(name, transformer, call, alias)
    transformed = new_name is not None  # the transform chose the TF 2 function (and its arguments)
    if new_name is None:
        new_name = rename(name, renamed)
    if new_name == name and not name.startswith("*."):
        check_in_tf2(name)
    if name in OVERRIDES:
        call = apply_override(name, OVERRIDES[name], call)
    if not transformed:
        call = check_arguments(name, new_name, call)
    return respell(new_name, style), call


def reference_to_tf2(qualified_name: str) -> str:
    """A TF 1.x symbol used without a call (`activation=tf.nn.relu`, `tf.float32`) → its TF 2 name."""
    style, name = spec_name(qualified_name)
    if name is None:
        return qualified_name
    transformer = spec.TRANSFORMERS.get(name)
    if transformer is not None:
        raise NoTF2Mapping(f"{show(name)} is passed on uncalled, and TF 2's {show(name)} takes its arguments "
                           "differently (the call it will get cannot be rewritten)")
    if name.startswith("tf.keras."):
        return respell(keras_name(name), style)
    renamed = spec_rename(name)
    check_module(name, renamed)
    warning = spec.WARNINGS.get(name)
    if warning is not None and warning[0] == "ERROR":
        raise NoTF2Mapping(message(name, warning[1]))
    new_name = rename(name, renamed)
    if new_name == name:
        check_in_tf2(name)
    return respell(new_name, style)


__all__ = ["NoTF2Mapping", "partitioned", "reference_to_tf2", "to_tf2"]

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
Names may be given as `tf.X`, `tensorflow.X`, `tensorflow.compat.v1.X` or `*.method` (a method
of any object); the TF 2 name comes back in the caller's spelling (`tf.` or `tensorflow.`).
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from codemods._tfapi import V1_ONLY
from codemods.tf2 import api_spec as spec
from codemods.tf2 import api_transforms
from codemods.tf2.api_decisions import (ACCEPTED_ARGS, ACCEPTED_WARNINGS, KERAS_PROVEN, NONE_DEFAULTS, OVERRIDES,
                                        REMOVABLE, Override)
from codemods.tf2._base import arg, code
from codemods.tf2.call_args import is_literal, keyword_arg, literal_kind, same_number, with_commas


class NoTF2Mapping(Exception):
    """The call has no TF 2 form with the same meaning; `reason` says why, in one line."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def to_tf2(qualified_name: str, call: cst.Call, *, alias: str = "tf",
           one_tensor: Optional[Callable[[cst.BaseExpression], bool]] = None) -> tuple[str, cst.Call]:
    """The TF 2 qualified name and call for TF 1.x's `qualified_name(call.args)`.

    Raises NoTF2Mapping when TF 2 has no call with the same meaning. `alias` is the module's
    name for `tensorflow`, used in arguments a transform writes (`dtype=tf.float32`).
    `one_tensor(argument)` is the caller's knowledge of a value: true when the argument is
    known to be one tensor or variable (not a list of shards, not a partitioned variable); the
    calls whose TF 1 `partition_strategy` TF 2 removed need it (`_check_partition_strategy`)."""
    style, name = _spec_name(qualified_name)
    if name is None:
        return qualified_name, call  # not TensorFlow (or TF 2 already): nothing the spec knows
    if name.startswith("tf.keras."):
        return _respell(_keras(name), style), call
    short = "*." + name.rsplit(".", 1)[-1]
    transformer = spec.TRANSFORMERS.get(name) or spec.TRANSFORMERS.get(short)
    known = _spec_knows(name, short)
    if known and any(a.star for a in call.args):
        raise NoTF2Mapping(f"{_show(name)} is called with *args/**kwargs: its arguments cannot be checked "
                           "against TF 2's")
    renamed = _renamed(name)
    if not name.startswith("*.") and not (transformer and transformer["kind"] == "transform"):
        _check_module(name, renamed)
    _check_warnings(name, short, call, one_tensor)
    call = _keywords_for_moved_positions(name, call)
    call = _rename_keywords(name, short, call)
    if partitioned(name) is not None and arg(call, None, "partition_strategy") is not None:
        # accepted above: 'div', which is what TF 2 does, or not read (one tensor); TF 2 has no such argument
        call = call.with_changes(args=with_commas([a for a in call.args if not (
            a.keyword is not None and a.keyword.value == "partition_strategy")]))
    new_name = None
    if transformer is not None:
        new_name, call = _apply_transformer(name, transformer, call, alias)
    transformed = new_name is not None  # the transform chose the TF 2 function (and its arguments)
    if new_name is None:
        new_name = _rename(name, renamed)
    if new_name == name and not name.startswith("*."):
        _check_in_tf2(name)
    if name in OVERRIDES:
        call = _apply_override(name, OVERRIDES[name], call)
    if not transformed:
        call = _check_arguments(name, new_name, call)
    return _respell(new_name, style), call


def reference_to_tf2(qualified_name: str) -> str:
    """A TF 1.x symbol used without a call (`activation=tf.nn.relu`, `tf.float32`) → its TF 2 name."""
    style, name = _spec_name(qualified_name)
    if name is None:
        return qualified_name
    transformer = spec.TRANSFORMERS.get(name)
    if transformer is not None:
        raise NoTF2Mapping(f"{_show(name)} is passed on uncalled, and TF 2's {_show(name)} takes its arguments "
                           "differently (the call it will get cannot be rewritten)")
    if name.startswith("tf.keras."):
        return _respell(_keras(name), style)
    renamed = _renamed(name)
    _check_module(name, renamed)
    warning = spec.WARNINGS.get(name)
    if warning is not None and warning[0] == "ERROR":
        raise NoTF2Mapping(_message(name, warning[1]))
    new_name = _rename(name, renamed)
    if new_name == name:
        _check_in_tf2(name)
    return _respell(new_name, style)


def _keras(name: str) -> str:
    """`tf.keras` in TF 2.21 is Keras 3; the spec's Keras entries were written for Keras 2 (they
    send TF 1's optimizers to `tf.keras.optimizers.legacy`, which Keras 3 refuses, and its
    initializers to `tf.compat.v1`). A Keras name the spec does not touch stays; one it
    renames is kept only where tf1clip proved Keras 3 computes the same (KERAS_PROVEN)."""
    refused = spec.TRANSFORMERS.get(name)
    if refused is not None and refused["kind"] == "refuse":
        raise NoTF2Mapping(f"{name}: {refused['reason']}")
    renamed = _renamed(name)
    if renamed is None or name in KERAS_PROVEN:
        return name
    raise NoTF2Mapping(f"{name}: TF 2.21's tf.keras is Keras 3, and TensorFlow's upgrade spec (written for "
                       f"Keras 2) maps it to {renamed}")


# -- names ----------------------------------------------------------------------------------
def _spec_name(qualified: str) -> tuple[str, Optional[str]]:
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


def _renamed(name: str) -> Optional[str]:
    """The spec's rename of `name`, or of its longest renamed prefix (`tf.GraphKeys.X`), else None."""
    if name in spec.RENAMES:
        return spec.RENAMES[name]
    parts = name.split(".")
    for i in range(len(parts) - 1, 1, -1):
        prefix = ".".join(parts[:i])
        if prefix in spec.RENAMES:
            return spec.RENAMES[prefix] + "." + ".".join(parts[i:])
    return None


def _respell(name: str, style: str) -> str:
    if style == "tensorflow" and name.startswith("tf."):
        return "tensorflow." + name[3:]
    return name


def _show(name: str) -> str:
    return name[2:] if name.startswith("*.") else name


def _message(name: str, index: int) -> str:
    text = " ".join(spec.MESSAGES[index].split()).replace("<function name>", _show(name))
    return text if len(text) <= 220 else text[:217].rsplit(" ", 1)[0] + " ..."


def _spec_knows(name: str, short: str) -> bool:
    return any(key in table for table in (spec.RENAMES, spec.KEYWORD_RENAMES, spec.REORDERS, spec.TRANSFORMERS,
                                          spec.SIGNATURE_CHANGES, spec.ARG_WARNINGS) for key in (name, short))


def _check_module(name: str, renamed: Optional[str]) -> None:
    if renamed is not None and not renamed.startswith("tf.compat.v1."):
        return  # tf_upgrade_v2 renames it before it would warn about its module
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        found = spec.MODULE_DEPRECATIONS.get(".".join(parts[:i]))
        if found is not None:
            raise NoTF2Mapping(f"{name}: {_message(name, found[1])}")
    if name.startswith("slim."):
        raise NoTF2Mapping(f"{name}: tf-slim is TF 1 graph code (tf.contrib.slim); TF 2 has no {name}")


def _check_warnings(name: str, short: str, call: cst.Call, one_tensor) -> None:
    for key in (name, short):
        warning = spec.WARNINGS.get(key)
        if warning is None:
            continue
        level, index = warning
        if partitioned(key) is not None:
            _check_partition_strategy(key, call, one_tensor)
        elif level == "ERROR" or (level == "WARNING" and key not in ACCEPTED_WARNINGS):
            raise NoTF2Mapping(_message(key, index))
    for key in (name, short):
        for arg_name, (position, level, index) in spec.ARG_WARNINGS.get(key, {}).items():
            value = arg(call, position, arg_name)
            if value is None:
                continue
            accepted = ACCEPTED_ARGS.get(arg_name)
            if accepted == "any" or (accepted is not None and is_literal(value, accepted)):
                continue
            raise NoTF2Mapping(_message(key, index))


def partitioned(name: str) -> Optional[tuple]:
    """(parameter, its position, partition_strategy's position) of a TF 1 call that splits its
    first parameter's rows over shards by `partition_strategy` (TF 2 removed the argument), else None."""
    sig = _signature(name)
    if sig is None or "partition_strategy" not in sig[0]["positional"]:
        return None
    return sig[0]["positional"][0], 0, sig[0]["positional"].index("partition_strategy")


def _check_partition_strategy(name: str, call: cst.Call, one_tensor) -> None:
    """TF 1 defaults to partition_strategy='mod', TF 2 always uses 'div'. The strategy decides which
    shard holds which row of a list of parameter shards or of a PartitionedVariable; of one tensor
    or variable (TF 1's `embedding_lookup` gathers from it directly) it is never read. So the call
    keeps its meaning when it says 'div', or when the caller's model knows the parameter is one tensor."""
    param, position, strategy_at = partitioned(name)
    strategy = arg(call, strategy_at, "partition_strategy")
    if strategy is not None and is_literal(strategy, "'div'"):
        return
    params = arg(call, position, param)
    if params is not None and one_tensor is not None and one_tensor(params):
        if strategy is None or any(is_literal(strategy, v) for v in ("'mod'", "None")):
            return
        raise NoTF2Mapping(f"{name}(partition_strategy={code(strategy)}): TF 1 took only 'mod' or 'div'")
    what = "'mod' (its default)" if strategy is None else code(strategy)
    raise NoTF2Mapping(f"{name}: TF 1 splits the rows of `{param}` over its shards by partition_strategy={what}, "
                       f"TF 2 by 'div', and `{code(params) if params is not None else param}` is not known to be one "
                       "variable or tensor (a list of shards or a partitioned variable would read other rows)")


# -- arguments ------------------------------------------------------------------------------
def _signature(name: str) -> Optional[tuple]:
    found = spec.SIGNATURE_CHANGES.get(name)
    return None if found is None else (_parse(found[0]), _parse(found[1]))


def _parse(spelled: str) -> dict:
    words = spelled.split()
    varargs = bool(words) and words[-1] == "**"
    if varargs:
        words = words[:-1]
    cut = words.index("*") if "*" in words else len(words)
    return {"positional": words[:cut], "keyword_only": words[cut + 1:], "varargs": varargs}


def _keywords_for_moved_positions(name: str, call: cst.Call) -> cst.Call:
    """Positional arguments whose TF 1 parameter is not at the same place in TF 2 → keywords."""
    order = spec.REORDERS.get(name)
    sig = _signature(name)
    if order is None and sig is None:
        return call
    positional = [a for a in call.args if a.keyword is None and not a.star]
    v1 = sig[0]["positional"] if sig else None
    v2 = sig[1]["positional"] if sig else None
    limit = len(v1) if v1 is not None and not sig[0]["varargs"] else (len(order) if order is not None else None)
    if limit is not None and len(positional) > limit:
        raise NoTF2Mapping(f"{_show(name)} is given {len(positional)} positional arguments; TF 1 takes {limit}")
    moved = {}
    for i, a in enumerate(positional):
        keyword = order[i] if order is not None and i < len(order) else None
        if keyword is None and v1 is not None and i < len(v1):
            if v2 is None or i >= len(v2) or v2[i] != _renamed_keyword(name, v1[i]):
                keyword = v1[i]
        if keyword is not None:
            moved[id(a)] = keyword
    if not moved:
        return call
    first = min(i for i, a in enumerate(positional) if id(a) in moved)
    if any(id(a) not in moved for a in positional[first:]):
        # a later positional argument would slide into the moved one's place: name them all
        moved.update({id(a): v1[i] if v1 is not None else None for i, a in enumerate(positional)
                      if i >= first and id(a) not in moved})
        if None in moved.values():
            raise NoTF2Mapping(f"{_show(name)}: positional arguments whose TF 2 position differs cannot be named")
    args = []
    for a in call.args:
        if id(a) in moved:
            a = keyword_arg(moved[id(a)], a.value)
        args.append(a)
    keywords = [a for a in args if a.keyword is not None]
    plain = [a for a in args if a.keyword is None]
    return call.with_changes(args=with_commas(plain + keywords))


def _renamed_keyword(name: str, keyword: str) -> Optional[str]:
    table = {**spec.KEYWORD_RENAMES.get(name, {})}
    return table.get(keyword, keyword)


def _rename_keywords(name: str, short: str, call: cst.Call) -> cst.Call:
    table = {**spec.KEYWORD_RENAMES.get(short, {}), **spec.KEYWORD_RENAMES.get(name, {})}
    if not table:
        return call
    args, given = [], {a.keyword.value for a in call.args if a.keyword is not None}
    if not given & set(table):
        return call
    for a in call.args:
        old = a.keyword.value if a.keyword is not None else None
        if old not in table:
            args.append(a)
            continue
        new = table[old]
        if new is None:
            rule = REMOVABLE.get(old)
            if rule is None or (rule[0] != "any" and not is_literal(a.value, rule[0])):
                raise NoTF2Mapping(f"TF 2's {_show(name)} has no `{old}` argument, and `{old}="
                                   f"{code(a.value)}` changes what it computes")
            continue
        if new in given:
            raise NoTF2Mapping(f"{_show(name)} is given both `{old}` and `{new}` (TF 1 raised)")
        args.append(a.with_changes(keyword=cst.Name(new)))
    return call.with_changes(args=with_commas(args))


def _apply_transformer(name: str, transformer: dict, call: cst.Call, alias: str) -> tuple[Optional[str], cst.Call]:
    kind = transformer["kind"]
    if kind == "refuse":
        raise NoTF2Mapping(f"{_show(name)}: {transformer['reason']}")
    if kind == "transform":
        function = api_transforms.FUNCTIONS[transformer["function"]]
        try:
            return function(name, call, alias)
        except api_transforms.Unmappable as exc:
            raise NoTF2Mapping(f"{_show(name)}: {exc}") from None
    if kind == "add_argument":
        if arg(call, None, transformer["arg"]) is None:
            new = keyword_arg(transformer["arg"], cst.parse_expression(transformer["value"]))
            call = call.with_changes(args=with_commas([*call.args, new]))
        return None, call
    if kind == "arg_must_be":
        value = arg(call, None, transformer["arg"])
        if value is None:
            return None, call
        if not is_literal(value, transformer["value"]):
            raise NoTF2Mapping(_message(name, transformer["message"]))
        if transformer["remove"]:
            call = call.with_changes(args=with_commas([a for a in call.args if a.value is not value]))
        return None, call
    raise NoTF2Mapping(f"{_show(name)}: tf_upgrade_v2 transform of unknown kind {kind!r}")


def _rename(name: str, renamed: Optional[str]) -> str:
    if name in OVERRIDES:
        return OVERRIDES[name].target
    if renamed is None:
        return name
    if renamed.startswith("tf.compat.v1."):
        raise NoTF2Mapping(f"{_show(name)} has no TF 2 equivalent with the same meaning (TensorFlow's upgrade "
                           f"spec maps it to {renamed})")
    if renamed.startswith("tf.compat.v2."):
        return "tf." + renamed[len("tf.compat.v2."):]
    if not renamed.startswith("tf."):
        raise NoTF2Mapping(f"{_show(name)} moved out of TensorFlow ({renamed}): not available to TF 2 code here")
    if renamed in spec.UNAVAILABLE:
        raise NoTF2Mapping(f"{_show(name)}: the spec's TF 2 name {renamed} does not exist in TensorFlow "
                           f"{spec.TF_VERSION}")
    return renamed


def _check_in_tf2(name: str) -> None:
    if not name.startswith("tf."):
        return
    parts = name[3:].split(".")
    if any(".".join(parts[:i]) in V1_ONLY for i in range(1, len(parts) + 1)):
        raise NoTF2Mapping(f"{name} does not exist in TF 2")


def _check_arguments(name: str, new_name: str, call: cst.Call) -> cst.Call:
    """After the spec: every keyword is a TF 2 parameter, and a default TF 2 changed is written out
    (when it is a literal of the same kind) or refused (when it is not)."""
    sig = _signature(name)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if sig is not None:
        v2 = sig[1]
        allowed = set(v2["positional"]) | set(v2["keyword_only"])
        if not v2["varargs"]:
            if len(positional) > len(v2["positional"]):
                raise NoTF2Mapping(f"TF 2's {_show(new_name)} takes {len(v2['positional'])} positional arguments, "
                                   f"{len(positional)} given")
            last = v2["positional"][len(positional) - 1] if positional else None
            if last is not None and is_literal(positional[-1].value, "None") and any(
                    a.keyword is not None and a.keyword.value == last for a in call.args):
                # `tf.argmax(x, None, dimension=1)`: TF 1 read None as "not given" and took the alias
                call = call.with_changes(args=with_commas([a for a in call.args if a is not positional[-1]]))
                positional = positional[:-1]
            taken = set(v2["positional"][:len(positional)])
            for a in call.args:
                if a.keyword is not None and a.keyword.value in taken:
                    raise NoTF2Mapping(f"{_show(name)} is given `{a.keyword.value}` twice (by position and by "
                                       "keyword, through a TF 1 alias): TF 1 raised")
                if a.keyword is not None and a.keyword.value not in allowed:
                    raise NoTF2Mapping(f"TF 2's {_show(new_name)} has no `{a.keyword.value}` argument "
                                       f"(TF 1's `{a.keyword.value}={code(a.value)}` has no counterpart)")
    aliases = {new for new in spec.KEYWORD_RENAMES.get(name, {}).values() if new}
    for param, (old, new, position) in spec.DEFAULT_CHANGES.get(name, {}).items():
        if arg(call, position, param) is not None or same_number(old, new):
            continue
        if old == "None":
            if param in aliases:
                continue  # TF 1 read it from its deprecated alias, whose default TF 2 kept
            old = NONE_DEFAULTS.get((name, param), "None")
            if old == "None" or same_number(old, new) or old == new:
                if old == "None":
                    raise NoTF2Mapping(f"{_show(name)} without `{param}=`: TF 1's default (None) is not TF 2's {new}")
                continue
        if literal_kind(old) != literal_kind(new) or literal_kind(old) is None:
            raise NoTF2Mapping(f"{_show(name)} without `{param}=`: TF 1's default {old} differs from TF 2's {new}")
        call = call.with_changes(args=with_commas([*call.args, keyword_arg(param, cst.parse_expression(old))]))
    return call


def _apply_override(name: str, override: Override, call: cst.Call) -> cst.Call:
    if override.params:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) > len(override.params):
            raise NoTF2Mapping(f"{_show(name)} with {len(positional)} positional arguments: the TF 2 call "
                               f"{override.target} takes {', '.join(override.params)} alike")
        for a in call.args:
            if a.keyword is not None and a.keyword.value not in override.params:
                raise NoTF2Mapping(f"{_show(name)}(`{a.keyword.value}`=...): {override.target} has no such argument")
    for param, value in override.defaults:
        position = override.params.index(param) if param in override.params else None
        sig = _signature(name)
        if position is None and sig is not None and param in sig[1]["positional"]:
            position = sig[1]["positional"].index(param)
        if arg(call, position, param) is None:
            call = call.with_changes(args=with_commas([*call.args, keyword_arg(param, cst.parse_expression(value))]))
    return call



"""A TF 1.x call's arguments as TF 2 takes them: steps 1-3 and 5 of TensorFlow's upgrade spec (`api_changes`).

Positional arguments whose parameter moved become keywords (`keywords_for_moved_positions`),
keywords are renamed or dropped where that is proven not to change the numbers
(`rename_keywords`), tf_upgrade_v2's code transformers are applied or refused
(`apply_transformer`), and what is left is checked against TF 2's signature and its changed
defaults (`check_arguments`, `apply_override`). The spec's warnings refuse a call whose meaning
TF 2 changed (`check_warnings`), and `partition_strategy` is read where TF 1 read it
(`partitioned`). Each raises `NoTF2Mapping` when the meaning cannot be kept.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from codemods.tf2 import api_spec as spec
from codemods.tf2 import api_transforms
from codemods.tf2.api_decisions import ACCEPTED_ARGS, ACCEPTED_WARNINGS, NONE_DEFAULTS, REMOVABLE, Override
from codemods.tf2.api_names import NoTF2Mapping, message, show
from codemods.tf2._base import arg, code
from codemods.tf2.call_args import is_literal, keyword_arg, literal_kind, same_number, with_commas


def check_warnings(name: str, short: str, call: cst.Call, one_tensor) -> None:
    for key in (name, short):
        warning = spec.WARNINGS.get(key)
        if warning is None:
            continue
        level, index = warning
        if partitioned(key) is not None:
            _check_partition_strategy(key, call, one_tensor)
        elif level == "ERROR" or (level == "WARNING" and key not in ACCEPTED_WARNINGS):
            raise NoTF2Mapping(message(key, index))
    for key in (name, short):
        for arg_name, (position, level, index) in spec.ARG_WARNINGS.get(key, {}).items():
            value = arg(call, position, arg_name)
            if value is None:
                continue
            accepted = ACCEPTED_ARGS.get(arg_name)
            if accepted == "any" or (accepted is not None and is_literal(value, accepted)):
                continue
            raise NoTF2Mapping(message(key, index))


def partitioned(name: str) -> Optional[tuple]:
    """(parameter, its position, partition_strategy's position) of a TF 1 call that splits its
    first parameter's rows over shards by `partition_strategy` (TF 2 removed the argument), else None."""
    sig = signature(name)
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


def signature(name: str) -> Optional[tuple]:
    found = spec.SIGNATURE_CHANGES.get(name)
    return None if found is None else (_parse(found[0]), _parse(found[1]))


def _parse(spelled: str) -> dict:
    words = spelled.split()
    varargs = bool(words) and words[-1] == "**"
    if varargs:
        words = words[:-1]
    cut = words.index("*") if "*" in words else len(words)
    return {"positional": words[:cut], "keyword_only": words[cut + 1:], "varargs": varargs}


def keywords_for_moved_positions(name: str, call: cst.Call) -> cst.Call:
    """Positional arguments whose TF 1 parameter is not at the same place in TF 2 → keywords."""
    order = spec.REORDERS.get(name)
    sig = signature(name)
    if order is None and sig is None:
        return call
    positional = [a for a in call.args if a.keyword is None and not a.star]
    v1 = sig[0]["positional"] if sig else None
    v2 = sig[1]["positional"] if sig else None
    limit = len(v1) if v1 is not None and not sig[0]["varargs"] else (len(order) if order is not None else None)
    if limit is not None and len(positional) > limit:
        raise NoTF2Mapping(f"{show(name)} is given {len(positional)} positional arguments; TF 1 takes {limit}")
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
            raise NoTF2Mapping(f"{show(name)}: positional arguments whose TF 2 position differs cannot be named")
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


def rename_keywords(name: str, short: str, call: cst.Call) -> cst.Call:
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
                raise NoTF2Mapping(f"TF 2's {show(name)} has no `{old}` argument, and `{old}="
                                   f"{code(a.value)}` changes what it computes")
            continue
        if new in given:
            raise NoTF2Mapping(f"{show(name)} is given both `{old}` and `{new}` (TF 1 raised)")
        args.append(a.with_changes(keyword=cst.Name(new)))
    return call.with_changes(args=with_commas(args))


def apply_transformer(name: str, transformer: dict, call: cst.Call, alias: str) -> tuple[Optional[str], cst.Call]:
    kind = transformer["kind"]
    if kind == "refuse":
        raise NoTF2Mapping(f"{show(name)}: {transformer['reason']}")
    if kind == "transform":
        function = api_transforms.FUNCTIONS[transformer["function"]]
        try:
            return function(name, call, alias)
        except api_transforms.Unmappable as exc:
            raise NoTF2Mapping(f"{show(name)}: {exc}") from None
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
            raise NoTF2Mapping(message(name, transformer["message"]))
        if transformer["remove"]:
            call = call.with_changes(args=with_commas([a for a in call.args if a.value is not value]))
        return None, call
    raise NoTF2Mapping(f"{show(name)}: tf_upgrade_v2 transform of unknown kind {kind!r}")


def check_arguments(name: str, new_name: str, call: cst.Call) -> cst.Call:
    """After the spec: every keyword is a TF 2 parameter, and a default TF 2 changed is written out
    (when it is a literal of the same kind) or refused (when it is not)."""
    sig = signature(name)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if sig is not None:
        v2 = sig[1]
        allowed = set(v2["positional"]) | set(v2["keyword_only"])
        if not v2["varargs"]:
            if len(positional) > len(v2["positional"]):
                raise NoTF2Mapping(f"TF 2's {show(new_name)} takes {len(v2['positional'])} positional arguments, "
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
                    raise NoTF2Mapping(f"{show(name)} is given `{a.keyword.value}` twice (by position and by "
                                       "keyword, through a TF 1 alias): TF 1 raised")
                if a.keyword is not None and a.keyword.value not in allowed:
                    raise NoTF2Mapping(f"TF 2's {show(new_name)} has no `{a.keyword.value}` argument "
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
                    raise NoTF2Mapping(f"{show(name)} without `{param}=`: TF 1's default (None) is not TF 2's {new}")
                continue
        if literal_kind(old) != literal_kind(new) or literal_kind(old) is None:
            raise NoTF2Mapping(f"{show(name)} without `{param}=`: TF 1's default {old} differs from TF 2's {new}")
        call = call.with_changes(args=with_commas([*call.args, keyword_arg(param, cst.parse_expression(old))]))
    return call


def apply_override(name: str, override: Override, call: cst.Call) -> cst.Call:
    if override.params:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) > len(override.params):
            raise NoTF2Mapping(f"{show(name)} with {len(positional)} positional arguments: the TF 2 call "
                               f"{override.target} takes {', '.join(override.params)} alike")
        for a in call.args:
            if a.keyword is not None and a.keyword.value not in override.params:
                raise NoTF2Mapping(f"{show(name)}(`{a.keyword.value}`=...): {override.target} has no such argument")
    for param, value in override.defaults:
        position = override.params.index(param) if param in override.params else None
        sig = signature(name)
        if position is None and sig is not None and param in sig[1]["positional"]:
            position = sig[1]["positional"].index(param)
        if arg(call, position, param) is None:
            call = call.with_changes(args=with_commas([*call.args, keyword_arg(param, cst.parse_expression(value))]))
    return call

"""One key per variable, and which optimizers of OLD updated it.

The record names each variable by a key: `opt{i}/var{j}` for the j-th variable of the
optimizer numbered i that first listed it, `trainable/var{k}` for a trainable variable no
optimizer updates. A variable that two optimizers update (InfoGAN's Q solver over
`theta_G + theta_Q`, the reconstruction and regularization phases of an adversarial
autoencoder) is one variable with one key, the first one it was given; OLD's `initial.npz`
says, per key, which of OLD's optimizers updated it and ran (`updated_by`). NEW checks each of
its optimizers at its first update against that list, so a shared variable counts for every
optimizer that updates it, and an optimizer OLD built and never applied is no optimizer to
match (it is named in the report, not compared).
"""
from __future__ import annotations


def members(optimizers) -> dict:
    """{key: {"updated_by": [indices], "name": name}} from a record's optimizers, counting only
    those that made at least one update."""
    out = {}
    for opt in optimizers:
        if not opt["steps"]:
            continue
        for var in opt["variables"]:
            entry = out.setdefault(var["key"], {"updated_by": [], "name": var["name"]})
            if opt["index"] not in entry["updated_by"]:
                entry["updated_by"].append(opt["index"])
    return out


def describe_members(meta, member_info) -> None:
    """Add `updated_by` and `name` to the entries of an arrays file's metadata."""
    for entry in meta:
        entry.update(member_info.get(entry["key"], {}))


def members_from_meta(meta) -> dict:
    """Optimizer index -> the keys of the variables it updated (OLD's optimizers that ran)."""
    out = {}
    for entry in meta:
        for index in entry.get("updated_by", ()):
            out.setdefault(int(index), []).append(entry["key"])
    return out


def take_old_index(update, updates, meta, got) -> None:
    """Give `update` (a NEW optimizer at its first update, whose variables carry OLD's keys
    `got`) the number of the OLD optimizer that updated the same variables.

    A program and its translation may first run their optimizers in another order (TF 1.x
    numbers a graph's updates as it builds them, a TF 2 program as it traces its steps). The
    update keeps its number when OLD's optimizer of that number updated the same variables (two
    optimizers over one variable list, a warm-up and a main phase, keep their order); otherwise
    it takes the first such OLD number whose NEW holder has neither updated nor been checked
    against OLD yet (an optimizer built and never applied, or one not run so far), trading
    numbers with it."""
    if None in got:
        return
    wanted = sorted(got)
    if sorted(meta.get(update.index, ())) == wanted:
        return
    for index in sorted(meta):
        if sorted(meta[index]) != wanted:
            continue
        holder = next((u for u in updates if u.index == index), None)
        if holder is not None and (holder.steps or holder.matched):
            continue  # numbers are settled once an optimizer has run, or been checked
        if holder is not None:
            holder.index = update.index
        update.index = index
        return

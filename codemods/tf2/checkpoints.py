"""`tf.train.Saver` (TF 1.x) → `tf.train.Checkpoint`, reading TF 1.x checkpoints by name too.

* `saver = tf.train.Saver()` (or `Saver(tf.global_variables())`): a `tf.train.Checkpoint` of the
  state that existed when the Saver was made (TF 1.x's var_list: the global variables then):
  variables, layers, optimizers, the global step;
* `saver.save(sess, path, global_step=step)` → a `tf.train.CheckpointManager` over
  `dirname(path)` named `basename(path)` saving number `step`: the same files (`path-<step>`),
  the same `checkpoint` state file (so `tf.train.get_checkpoint_state` finds it), TF 1.x's
  `max_to_keep` (5); it returns the path, as TF 1.x did;
* `saver.save(sess, path)` (no global_step) → `save_checkpoint(checkpoint, path, max_to_keep)`,
  written into the script: `Checkpoint.write(path)` (the files `path.index`, `path.data-*`, not
  numbered), then what TF 1.x's Saver did with its own saves: the last `max_to_keep` paths it
  wrote named in the folder's `checkpoint` state file (as TF 1.x wrote it: paths relative to a
  relative folder), older ones deleted; it returns the path;
* `saver.restore(sess, path)` → `restore_checkpoint(saver, path, names)`, written into the
  script: a checkpoint TF 2 wrote is restored by object; one TF 1.x wrote, by its variable
  names (`dense/kernel`, `global_step`, the names TF 1.x gave under its scopes; the Adam twin's
  slots and beta powers through `adam_tf1_state`, built there for the variables it updates), and it stops
  with an error naming what the TF 2 program cannot restore (e.g. another optimizer's slots),
  rather than continue from a partial state.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst
from libcst.helpers import parse_template_module

from codemods.tf2 import emit
from codemods.tf2.model import Other, OtherKind, State, StateKind, StateRef

if TYPE_CHECKING:
    from codemods.tf2.call_site import CallSite

RESTORE = '''

def {name}(checkpoint, path, variables):
    """TF 1.x's Saver.restore: a TF 2 checkpoint by object, a TF 1.x one by its variable names."""
    reader = {tf}.train.load_checkpoint(path)
    saved = set(reader.get_variable_to_shape_map())
    if "_CHECKPOINTABLE_OBJECT_GRAPH" in saved:
        checkpoint.restore(path).assert_existing_objects_matched()
        return
    missing = sorted(saved - set(variables))
    if missing:
        raise ValueError("%s holds TF 1.x variables this program does not restore: %s" % (path, ", ".join(missing)))
    for tf1_name, variable in variables.items():
        variable.assign(reader.get_tensor(tf1_name))
'''

SAVE = '''

def {name}(checkpoint, path, max_to_keep, saved={}):
    """TF 1.x's Saver.save(sess, path) without a global_step: the checkpoint at `path` itself (`path.index`,
    `path.data-*`; TF 2 has no `.meta` graph to write). Then what TF 1.x's Saver did with the paths it saved:
    the last `max_to_keep` of them named in the folder's `checkpoint` state file, so that
    tf.train.latest_checkpoint finds `path`, and the files of older ones deleted (`saved`: the paths each
    checkpoint saved here, as TF 1.x's Saver remembered its own). Returns `path`."""
    checkpoint.save_counter  # made before the write, as Checkpoint.save does: restoring the file then matches it
    path = checkpoint.write(path)
    kept = saved.setdefault(id(checkpoint), [])
    if not max_to_keep:
        kept.clear()
    elif path in kept:
        kept.remove(path)
    kept.append(path)
    while max_to_keep and len(kept) > max_to_keep:
        old = kept.pop(0)
        for pattern in (".index", ".data-?????-of-?????", ".meta"):
            for found in {tf}.io.gfile.glob(old + pattern):
                {tf}.io.gfile.remove(found)
    folder = {os}.path.dirname(path)
    if not {os}.path.isabs(folder):
        relative = [p if {os}.path.isabs(p) else {os}.path.relpath(p, folder) for p in kept]
    else:
        relative = list(kept)
    state = 'model_checkpoint_path: "%s"\\n' % relative[-1]
    state += "".join('all_model_checkpoint_paths: "%s"\\n' % p for p in relative)
    with {tf}.io.gfile.GFile({os}.path.join(folder, "checkpoint"), "w") as f:
        f.write(state)
    return path
'''

ADAM_STATE = '''

def {name}(optimizer, variables, slot_name, powers):
    """The Adam twin's state under the names TF 1.x saved it with, built here for `variables`
    ({TF 1.x name: variable}, the variables it updates): `<name>/Adam` (m), `<name>/Adam_1` (v)
    and the beta powers."""
    optimizer.build(list(variables.values()))
    state = {powers[0]: optimizer.beta1_power, powers[1]: optimizer.beta2_power}
    for tf1_name, variable in variables.items():
        i = optimizer._get_variable_index(variable)
        state[tf1_name + "/" + slot_name], state[tf1_name + "/" + slot_name + "_1"] = optimizer.m[i], optimizer.v[i]
    return state
'''


def saver(site: "CallSite"):
    tr = site.tr
    site.only({"var_list", "max_to_keep"}, 1)
    var_list, var_av = site.arg(0, "var_list")
    if var_list is not None and getattr(var_av, "kind", None) != OtherKind.GLOBAL_VARIABLES:
        site.refuse("tf.train.Saver of a variable list other than all global variables is not converted")
    states = [s for s in tr.states if s.kind in (StateKind.VARIABLE, StateKind.LAYER, StateKind.OPTIMIZER)]
    if not states:
        site.refuse("tf.train.Saver before any variable this file creates (variables made in another module, "
                    "or none at all, are not known here)")
    kwargs = {}
    for s in states:
        key = s.name.replace(".", "_")
        kwargs.setdefault(key, tr.classes.rebase(s, s.expr()))
    name = site.target or tr.namer.fresh("checkpoint")
    node = emit.with_args(emit.call(tr.tf("tensorflow.train.Checkpoint")),
                          [emit.keyword(k, v) for k, v in kwargs.items()])
    names = {}
    for s in states:
        for tf1, expr in s.info.get("vars", []) + s.info.get("other_vars", []):
            names[tf1] = tr.classes.rebase(s, expr)
        if s.kind == StateKind.VARIABLE and s.info.get("global_step"):
            names["global_step"] = s.expr()
    state = State(StateKind.SAVER, name, name, tr.line,
                  info={"names": names, "max_to_keep": site.arg(None, "max_to_keep")[0],
                        "optimizers": _optimizer_states(tr, states, names)})
    tr.note("tf.train.Saver → tf.train.Checkpoint of the state that existed then (TF 1.x saved the global "
            "variables made before the Saver)")
    return tr.add_state(state, [emit.assign(name, node)]), state.expr()


def _optimizer_states(tr, states: list, names: dict) -> list:
    """[(optimizer expression, its arguments to `adam_tf1_state`)] for each optimizer whose TF 1.x state the Saver
    held (its first update came before the Saver) under names known here. An optimizer left out keeps the
    restore strict: a TF 1.x checkpoint holding its slots stops with their names."""
    out, taken = [], set()
    for s in states:
        opt = s.info.get("opt")
        known = getattr(opt, "tf1_state", None)
        if known is None or known["variables"] is None or len(set(opt.updates)) != 1:
            continue
        if not set(known["variables"]) <= set(names):
            continue
        slots = {f"{v}/{known['slot']}{suffix}" for v in known["variables"] for suffix in ("", "_1")}
        if slots & taken:   # two optimizers named alike on one variable: TF 1.x numbered their slots further
            return []
        taken |= slots
        variables = cst.Dict([cst.DictElement(cst.SimpleString(f'"{v}"'), names[v]) for v in known["variables"]])
        powers = cst.Tuple([cst.Element(cst.SimpleString(f'"{p}"')) for p in known["powers"]])
        out.append((tr.classes.rebase(s, s.expr()),
                    [cst.Arg(variables), cst.Arg(cst.SimpleString(f'"{known["slot"]}"')), cst.Arg(powers)]))
    return out


def global_variables(site: "CallSite"):
    site.only(set(), 0)
    return Other(OtherKind.GLOBAL_VARIABLES, {"drop": False}), site.node


def save(site: "CallSite"):
    tr = site.tr
    state = site.receiver.state
    site.only({"sess", "save_path", "global_step", "write_meta_graph"}, 3)
    path, _ = site.arg(1, "save_path")
    step, _ = site.arg(2, "global_step")
    if path is None:
        site.refuse("saver.save without a path")
    os_name = tr.module_name("os")
    keep = state.info.get("max_to_keep") or cst.Integer("5")
    if step is None:
        helper = tr.preamble_function("save_checkpoint", lambda n: list(parse_template_module(
            SAVE, name=cst.Name(n), tf=cst.Name(tr.alias), os=cst.Name(os_name)).body), "save_checkpoint")
        tr.note("saver.save without a global_step → save_checkpoint: Checkpoint.write at the path itself, and the "
                "`checkpoint` state file TF 1.x's Saver wrote (no `.meta` graph: TF 2 has none)")
        return Other(OtherKind.HOST_CALL), emit.call(cst.Name(helper), state.expr(), path, keep)
    directory = emit.call(emit.expr("{os}.path.dirname", os=os_name), path)
    base = emit.call(emit.expr("{os}.path.basename", os=os_name), path)
    manager = emit.call(tr.tf("tensorflow.train.CheckpointManager"), state.expr(), directory,
                        max_to_keep=keep, checkpoint_name=base)
    tr.note("saver.save → tf.train.CheckpointManager(...).save(step): the same files and `checkpoint` state file")
    return Other(OtherKind.HOST_CALL), emit.call(cst.Attribute(manager, cst.Name("save")), checkpoint_number=step)


def restore(site: "CallSite"):
    tr = site.tr
    state = site.receiver.state
    site.only({"sess", "save_path"}, 2)
    path, _ = site.arg(1, "save_path")
    if path is None:
        site.refuse("saver.restore without a path")
    helper = tr.preamble_function("restore_checkpoint", lambda n: list(parse_template_module(
        RESTORE, name=cst.Name(n), tf=cst.Name(tr.alias)).body), "restore_checkpoint")
    adam = None
    if state.info["optimizers"]:
        adam = tr.preamble_function("adam_tf1_state", lambda n: list(parse_template_module(
            ADAM_STATE, name=cst.Name(n)).body), "adam_tf1_state")
    names = cst.Dict([cst.DictElement(cst.SimpleString(f'"{k}"'), v) for k, v in state.info["names"].items()]
                     + [cst.StarredDictElement(cst.Call(cst.Name(adam), [cst.Arg(opt), *args]))
                        for opt, args in state.info["optimizers"]])
    tr.note("saver.restore → restore_checkpoint: by object for a TF 2 checkpoint, by TF 1.x's variable names "
            "for a TF 1.x one")
    return Other(OtherKind.HOST_CALL), emit.call(cst.Name(helper), state.expr(), path, names)


def checkpoint_exists(site: "CallSite"):
    """`tf.train.checkpoint_exists(prefix)` (TF 1.x only): its test, files matching `prefix.index` or `prefix`."""
    site.only({"checkpoint_prefix"}, 1)
    prefix, _ = site.arg(0, "checkpoint_prefix")
    if not isinstance(prefix, (cst.Name, cst.Attribute)):
        site.refuse("tf.train.checkpoint_exists of an expression (it is read twice) is not converted")
    return Other(OtherKind.HOST_CALL), emit.expr(
        "bool({tf}.io.gfile.glob({p} + \".index\") or {tf}.io.gfile.glob({p}))", tf=site.tr.alias, p=prefix)


CALLS = {"tensorflow.train.Saver": saver, "tensorflow.global_variables": global_variables,
         "tensorflow.train.checkpoint_exists": checkpoint_exists}
CREATORS = {"tensorflow.train.Saver"}
METHODS = {(StateKind.SAVER, "save"): save, (StateKind.SAVER, "restore"): restore}
__all__ = ["CALLS", "METHODS", "StateRef"]

"""Feed dicts whose keys are chosen at run time.

TF 1.x code often builds a feed dict in steps: `feed = {seq: batch}`, then, only once it has a
state to give back, `feed.update({in_state: state})` or `feed[in_state] = state`. Which
placeholders `sess.run(fetches, feed)` is given is then known only when it runs. TF 2 has no
placeholders, so each set of fed placeholders is its own step function (a
`placeholder_with_default` that a step is not given computes its default there, as TF 1.x did),
and the call picks the step by the keys the dict holds:

    feed = {"seq": batch}
    if state is not None:
        feed.update({"in_state": state})
    index, state = (compute_sample_2 if "in_state" in feed else compute_sample)(**feed)

The dict keeps its place in the host code, each placeholder key written as the steps' parameter
of that name. A key added after the dict is made must be a placeholder with a default (one left
out is then computed, not missing, as in TF 1.x). The dict may only be made, extended and fed:
any other use of its name is refused, since its keys are no longer placeholders.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Optional

import libcst as cst

from codemods.tf2 import emit
from codemods.tf2._base import walk
from codemods.tf2.model import Input, Other, OtherKind
from codemods.tf2.syntax import name_counts

if TYPE_CHECKING:
    from codemods.tf2.program import Program

MAX_OPTIONAL = 3  # keys added later: one step per subset of them (8 at most)


def _extended(node) -> Optional[cst.Name]:
    """The dict's name where `node` extends it: the call `name.update(...)`, or the target `name[key]`."""
    if type(node) is cst.Call and isinstance(node.func, cst.Attribute) and node.func.attr.value == "update" \
            and isinstance(node.func.value, cst.Name):
        return node.func.value
    if type(node) is cst.AssignTarget and isinstance(node.target, cst.Subscript) and \
            isinstance(node.target.value, cst.Name):
        return node.target.value
    return None


def extended_names(module: cst.Module) -> set:
    """Names extended somewhere in the file by `name.update(...)` or `name[key] = value`, that the file
    feeds (`feed_dict=name`, or `sess.run(fetches, name)`): a dict of variables filled by key
    (`weights['w0'] = tf.Variable(...)`) is no feed."""
    nodes = list(walk(module))
    extended = {name.value for name in map(_extended, nodes) if name is not None}
    return extended & _fed_names(nodes)


def _fed_names(nodes) -> set:
    fed = set()
    for n in nodes:
        if type(n) is not cst.Call:
            continue
        for k, a in enumerate(n.args):
            keyword = a.keyword.value if a.keyword is not None else None
            if isinstance(a.value, cst.Name) and (keyword == "feed_dict" or keyword is None and k == 1 and
                                                  isinstance(n.func, cst.Attribute) and n.func.attr.value == "run"):
                fed.add(a.value.value)
    return fed


def _key(tr: "Program", node) -> Input:
    av, _ = tr.evaluator(tr.env).evaluate(node)
    if not isinstance(av, Input):
        tr.refuse(f"feeding `{emit.code(node)}`, which is not a placeholder, is not converted")
    return av


def _value(tr: "Program", node) -> cst.BaseExpression:
    ev = tr.evaluator(tr.env)
    av, new = ev.evaluate(node)
    if av.graph or ev.uses & tr.graph_names() or tr.pending:
        tr.refuse("a feed value computed from graph values is not converted")
    return new


def _string(name: str) -> cst.SimpleString:
    return cst.SimpleString(repr(name))


def _is_feed(tr: "Program", node) -> bool:
    if not isinstance(node, cst.Name):
        return False
    av = tr.env.get(node.value)
    return isinstance(av, Other) and av.kind == OtherKind.FEED and av.info.get("runtime", False)


def bind(tr: "Program", st, target: cst.Name, value: cst.Dict, kept: bool = False) -> Optional[list]:
    """`feed = {placeholder: value, ...}` of a dict extended later, or whose values must be computed where it
    is made (`kept`): kept, with string keys."""
    if target.value not in tr.runtime_feed_names and not kept:
        return None
    elements, items = [], []
    for e in value.elements:
        if not isinstance(e, cst.DictElement):
            tr.refuse("a feed_dict with ** is not converted")
        ph = _key(tr, e.key).placeholder
        if ph.source is not None:
            tr.refuse(f"feeding `{emit.code(e.key)}`, an iterator's element, is not converted")
        items.append(ph.name)
        elements.append(e.with_changes(key=_string(ph.name), value=_value(tr, e.value)))
    feed = Other(OtherKind.FEED, {"runtime": True, "name": target.value, "fixed": items, "optional": [], "written": 1,
                          "sites": []})
    tr.env[target.value] = feed
    tr.runtime_feeds.append(feed)
    if kept and target.value not in tr.runtime_feed_names:
        tr.note(f"feed dict `{target.value}`, whose values are computed where it is made (or read names bound "
                "again before it is fed) → the same dict, keyed by the steps' parameter names")
    else:
        tr.note(f"feed dict `{target.value}`, extended at run time → the same dict, keyed by the steps' parameter "
                "names")
    return [st.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(target)],
                                             value=value.with_changes(elements=elements))])]


def _add(tr: "Program", feed: Other, key) -> cst.SimpleString:
    ph = _key(tr, key).placeholder
    if ph.default is None and not ph.computed:
        tr.refuse(f"placeholder `{ph.name}` is fed only when the program adds it to the feed dict at run time, "
                  "and has no default: not converted")
    if ph.name not in feed.info["fixed"] and ph.name not in feed.info["optional"]:
        feed.info["optional"].append(ph.name)
    if len(feed.info["optional"]) > MAX_OPTIONAL:
        tr.refuse(f"a feed dict given more than {MAX_OPTIONAL} placeholders at run time is not converted")
    return _string(ph.name)


def extension(tr: "Program", st, small) -> Optional[list]:
    """`feed.update({placeholder: value})` or `feed[placeholder] = value`: the same, with string keys."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "update"
                and _is_feed(tr, call.func.value)):
            return None
        feed = tr.env[call.func.value.value]
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star or \
                not isinstance(call.args[0].value, cst.Dict):
            tr.refuse("`feed.update(...)` other than with a dict literal of placeholders is not converted")
        elements = []
        for e in call.args[0].value.elements:
            if not isinstance(e, cst.DictElement):
                tr.refuse("a feed_dict with ** is not converted")
            elements.append(e.with_changes(key=_add(tr, feed, e.key), value=_value(tr, e.value)))
        feed.info["written"] += 1
        arg = call.args[0].with_changes(value=call.args[0].value.with_changes(elements=elements))
        return [st.with_changes(body=[small.with_changes(value=call.with_changes(args=[arg]))])]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
            isinstance(small.targets[0].target, cst.Subscript):
        target = small.targets[0].target
        if not _is_feed(tr, target.value):
            return None
        feed = tr.env[target.value.value]
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            tr.refuse("a feed dict's item set other than `feed[placeholder] = value` is not converted")
        key = _add(tr, feed, target.slice[0].slice.value)
        feed.info["written"] += 1
        new_target = target.with_changes(slice=[target.slice[0].with_changes(
            slice=target.slice[0].slice.with_changes(value=key))])
        return [st.with_changes(body=[small.with_changes(targets=[small.targets[0].with_changes(target=new_target)],
                                                         value=_value(tr, small.value))])]
    return None


def extends(tr: "Program", node) -> bool:
    """`node` (a compound statement) extends a feed dict: it is host code."""
    return any(_is_feed(tr, name) for name in map(_extended, walk(node)) if name is not None)


def feeds(tr: "Program", node) -> Optional[Other]:
    """The run-time feed dict a `sess.run` is given, if it is one."""
    if _is_feed(tr, node):
        feed = tr.env[node.value]
        feed.info["written"] += 1
        return feed
    return None


def step_call(tr: "Program", leaves: list, feed: Other, name: cst.Name, shape=None) -> tuple:
    """(a step, the call): one step per set of the keys added at run time, picked by the keys the dict holds."""
    fixed, optional = feed.info["fixed"], feed.info["optional"]
    steps = {}
    for k in range(len(optional) + 1):
        for chosen in itertools.combinations(optional, k):
            step, _ = tr.steps.step_for(leaves, [(p, cst.Name(p)) for p in [*fixed, *chosen]], shape)
            if set(step.params) != {*fixed, *chosen}:
                tr.refuse("a step given a run-time feed dict that also pulls from an iterator is not converted")
            steps[frozenset(chosen)] = step

    def pick(rest: list, chosen: frozenset) -> cst.BaseExpression:
        if not rest:
            return cst.Name(steps[chosen].name)
        key, more = rest[0], rest[1:]
        test = cst.Comparison(_string(key), [cst.ComparisonTarget(cst.In(), name)])
        return cst.IfExp(test=test, body=pick(more, chosen | {key}), orelse=pick(more, chosen),
                         lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    call = cst.Call(func=pick(list(optional), frozenset()), args=[cst.Arg(name, star="**")])
    feed.info["written"] += 2 ** len(optional) - 1  # the `key in feed` tests
    feed.info["sites"].append((tr.line, frozenset(optional)))
    return steps[frozenset()], call


def check(tr: "Program", module: cst.Module) -> None:
    """Every use of a run-time feed dict's name is one this module wrote (made, extended, fed)."""
    counts = name_counts(module)
    for feed in tr.runtime_feeds:
        for line, known in feed.info["sites"]:
            if known != frozenset(feed.info["optional"]):  # `feed[k] = v` after the run, in a loop: k reaches it
                tr.refuse(f"feed dict `{feed.info['name']}` is extended after it is fed here (in a loop, the next "
                          "run gets the new key too): not converted", line)
    for name in {v.info["name"] for v in tr.runtime_feeds}:
        written = sum(v.info["written"] for v in tr.runtime_feeds if v.info["name"] == name)
        if counts.get(name, 0) > written:
            tr.refuse(f"feed dict `{name}` is used other than to be extended and fed: not converted (its keys are "
                      "the steps' parameter names in TF 2)", 0)


__all__ = ["bind", "check", "extended_names", "extends", "extension", "feeds", "step_call"]

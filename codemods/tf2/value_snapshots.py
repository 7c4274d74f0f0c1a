"""Whether values computed at one statement are still the same where they are read again.

A feed dict bound to a name is made at one place and fed at others:

    for i in range(3):
        batch = next_batch()
        if i == 0:
            feed = {x: batch}                  # TF 1.x fed what `batch` was here...
        sess.run(train_op, feed_dict=feed)     # ...on every run, not the batch of this pass

The TF2 tier may read the dict's values again where it is fed (`train_step(batch)`) only when no
definition of a name they read can run between the two places: on no path from the dict to the
run, around a loop neither. Plain reaching definitions miss the loop (the same line defines
`batch` at both places), so the question gets a name of its own: the dict's snapshot, defined by
the dict's statement and defined again, as stale, by every definition of a name its values read.
The values are the same at a read that only the dict's own definition of the snapshot reaches.

A read inside a function defined there (`def evaluate(): sess.run(loss, feed_dict=feed)`) runs
when the function is called, which is not known here: there the values must read only names
bound once in the scope, by a statement no loop runs again, and declared `global` nowhere.
"""
from __future__ import annotations

import libcst as cst

from codemods.tf2.reaching import Definitions, Scope, declares_global, statements_reading

SNAPSHOT = "<snapshot>"  # not a Python name: no statement of the file binds or reads it


class _Snapshot(Definitions):
    """Reaching definitions with the snapshot of the values made at `line` from `names`."""

    def __init__(self, module: cst.Module, lines, aliases: frozenset, line: int, names: frozenset):
        self._made, self._watched = line, names
        super().__init__(module, lines, aliases)

    def _define(self, scope: Scope, state: dict, names: set, line: int) -> dict:
        state = super()._define(scope, state, names, line)
        if line == self._made or names & self._watched:
            state[SNAPSHOT] = frozenset([line])
        return state


def still_the_same(module: cst.Module, lines, aliases: frozenset, line: int, target: str, names: set) -> bool:
    """Whether values made at `line` from `names` and bound to `target` are the same wherever `target`, as bound
    there, is read (see the module's docstring)."""
    if not names:
        return True  # literals
    defs = _Snapshot(module, lines, aliases, line, frozenset(names))
    scope = defs.scope_at(line)
    body = list(scope.node.body.body) if scope.node is not None else list(module.body)
    for st in body:
        for part, reads in statements_reading(st):
            if target not in reads:
                continue
            if isinstance(part, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                if not all(_bound_once(defs, scope, n) for n in names):
                    return False
                continue
            where = lines(part)
            if where not in scope.before or defs.scope_at(where) is not scope:
                continue
            if line in defs.reaching(scope, where, target) and defs.reaching(scope, where, SNAPSHOT) != {line}:
                return False
    return True


def _bound_once(defs: Definitions, scope: Scope, name: str) -> bool:
    """`name` has one definition in `scope`, which no loop runs again (it does not reach itself), and no
    function declares it `global`."""
    found = set(defs.end.get(name, ())) if scope.node is None else set()
    for state in scope.before.values():
        found |= state.get(name, frozenset())
    if len(found) > 1 or any(s.node is not None and declares_global(s.node, name) for s in defs.scopes[1:]):
        return False
    return not any(d in defs.reaching(scope, d, name) for d in found)

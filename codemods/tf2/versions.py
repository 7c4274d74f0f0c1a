"""A helper's body read in place: a name its state is bound to, bound again, gets a spelling of its own.

    def model(x):
        W = tf.Variable(tf.ones([4, 3]))
        h = tf.matmul(x, W)
        W = tf.Variable(tf.ones([3, 1]))
        return tf.matmul(h, W)

TF 1.x built `tf.matmul(x, W)` with the first variable: the graph kept it, whatever `W` was bound to
later. Read in place at its call (`inline`), the body's statements go to the module or the calling
function, and the step functions read `W` when they are traced, after the second binding: the second
variable. So each binding of such a name after the first gets a fresh spelling (`W_2`), and every
statement reads the spelling in force where it runs, which is what Python read there:

    W = tf.Variable(tf.ones([4, 3]))
    h = tf.matmul(x, W)
    W_2 = tf.Variable(tf.ones([3, 1]))
    ... tf.matmul(h, W_2)

The names renamed are those bound more than once, at least once to state itself (a variable, a layer
or cell object, an optimizer, a list of variables, or what a helper that makes state returns), and
only by plain assignments that run one after the other (the body's statements, and those of its
`with` blocks). A name also bound another way (in a loop, a condition, `+=`) is left as it is: the
translator's own checks read it. (At module level, the reaching definitions answer the same question
for the input's own statements: `step_reads`.)
"""
from __future__ import annotations

from collections import Counter
from typing import Callable

import libcst as cst

from codemods.tf2.syntax import bound_names, plain_assign, replace_names, walk_nodes


def _targets(st) -> set:
    return {n.value for t in st.body[0].targets for n in walk_nodes(t.target) if isinstance(n, cst.Name)}


def _straight(statements) -> list:
    """The statements that run one after the other: these, and those of their `with` blocks."""
    out = []
    for st in statements:
        out.append(st)
        if isinstance(st, cst.With) and isinstance(st.body, cst.IndentedBlock):
            out.extend(_straight(st.body.body))
    return out


def renamed(statements: list, makes_state: Callable, fresh: Callable, origins: dict) -> list:
    """`statements` with each later binding of a name bound more than once, once at least to state, spelt
    fresh (`fresh(name)`), and the reads after it reading that spelling. `makes_state(node)`: is this
    value state itself; `origins`: statement → input line, kept for the statements rewritten."""
    plain = Counter()
    stateful, other = set(), set()
    for st in _straight(statements):
        if plain_assign(st):
            names = _targets(st)
            plain.update(names)
            other |= bound_names(st.body[0].value)  # a walrus or a comprehension inside the value
            if makes_state(st.body[0].value):
                stateful |= names
        elif isinstance(st, cst.With):
            other |= {n.value for item in st.items if item.asname is not None
                      for n in walk_nodes(item.asname.name) if isinstance(n, cst.Name)}
        else:
            other |= bound_names(st)
    wanted = {n for n in stateful if plain[n] > 1 and n not in other}
    if not wanted:
        return statements
    return _rename(statements, wanted, {}, set(), fresh, origins)


def _rename(statements: list, wanted: set, current: dict, seen: set, fresh: Callable, origins: dict) -> list:
    out = []
    for st in statements:
        spelled = {k: cst.Name(v) for k, v in current.items() if k != v}
        if plain_assign(st):
            small = st.body[0]
            value = replace_names(small.value, spelled)
            for name in _targets(st) & wanted:
                current[name] = fresh(name) if name in seen else name
                seen.add(name)
            targets = [t.with_changes(target=replace_names(t.target, {k: cst.Name(v) for k, v in current.items()
                                                                       if k != v}))
                       for t in small.targets]
            new = st.with_changes(body=[small.with_changes(targets=targets, value=value)])
        elif isinstance(st, cst.With) and isinstance(st.body, cst.IndentedBlock):
            items = [replace_names(item, spelled) for item in st.items]
            body = _rename(list(st.body.body), wanted, current, seen, fresh, origins)
            new = st.with_changes(items=items, body=st.body.with_changes(body=body))
        else:
            new = replace_names(st, spelled)
        if new is not st and st in origins:
            origins[new] = origins[st]
        out.append(new)
    return out

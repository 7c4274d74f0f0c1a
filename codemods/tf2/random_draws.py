"""Random ops that more than one step function would run: one stream in TF 1.x, one per function in TF 2.

A TF 1.x random op (`tf.random_uniform`, `tf.random_normal`, ...) is one stateful kernel of the graph:
every `Session.run` that reaches it draws the next values of its one stream, run after run (a denoising
autoencoder's mask drawn in the training run and again in the evaluation run). In TF 2 each step
function that computes it has a kernel, and a stream, of its own: the evaluation's mask is another
draw than the one TF 1.x made there. A random op that one step function runs is the same stream as
TF 1.x's, and parity proves it (its default seeds give both the same first op seed); one that two step
functions run is refused (`Steps.build`). Dropout is not counted: parity keys every dropout mask by what
it is (`tf1clip/parity/keyed_draws.py`), and a dropout at evaluation time keeps everything.
"""
from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from codemods._base import dotted_name
from codemods.tf2.syntax import closed_under_calls, walk_nodes

# TF 1.x's and TF 2's random ops with a stream of their own (the stateless ones draw from their seed alone)
_DRAWS = ("tensorflow.random_", "tensorflow.random.", "tensorflow.truncated_normal", "tensorflow.multinomial",
          "tensorflow.image.random_", "tensorflow.nn.fixed_unigram_candidate_sampler",
          "tensorflow.nn.uniform_candidate_sampler", "tensorflow.nn.log_uniform_candidate_sampler",
          "tensorflow.compat.v1.random")
_NOT = ("tensorflow.random.stateless_", "tensorflow.random.set_seed", "tensorflow.random_normal_initializer",
        "tensorflow.random_uniform_initializer", "tensorflow.random.experimental", "tensorflow.random.Generator",
        "tensorflow.random.get_global_generator", "tensorflow.random.create_rng_state")


def draws(qname: Optional[str]) -> bool:
    """`qname` (canonical) is a random op with a stream of its own."""
    return qname is not None and qname.startswith(_DRAWS) and not qname.startswith(_NOT)


def drawing_functions(module: cst.Module, qualified: Callable) -> frozenset:
    """The module-level functions that run a random op, directly or through such a function."""
    defs = {st.name.value: st for st in module.body if isinstance(st, cst.FunctionDef)}

    def reaches(body, found) -> bool:
        return any(type(n) is cst.Call and (draws(qualified(n.func)) or isinstance(n.func, cst.Name)
                                             and n.func.value in found) for n in walk_nodes(body))
    return closed_under_calls(defs, reaches)


def one_stream(drawn: dict, comps: list, what: str, alias: str, helpers: frozenset, refuse: Callable) -> None:
    """Refuse a random op of `comps` (the value statements of a step function computing `what`) that a step
    function for something else runs too; `drawn`: comp index -> what the first step running it computes."""
    for c in comps:
        op = drawn_in(c.body, alias, helpers)
        if op is None:
            continue
        if c.index in drawn and drawn[c.index] != what:
            statement = next(cst.Module(body=[st]).code.strip() for st in c.body if drawn_in([st], alias, helpers))
            statement = statement.splitlines()[0][:100]
            refuse(f"the random op `{op}` (in `{statement}`) would run in two step functions, for the run of "
                   f"{drawn[c.index]} and for the run of {what}: TF 1.x drew its values from one stream, run after "
                   "run; each TF 2 step function draws from its own, so the values of the later run would differ: "
                   "not converted")
        drawn.setdefault(c.index, what)


def drawn_in(statements: list, alias: str, helpers: frozenset) -> Optional[str]:
    """The first random op (or function running one) that TF 2 `statements` call, spelled as written; None."""
    for n in walk_nodes(cst.Module(body=statements)):
        if type(n) is not cst.Call:
            continue
        if isinstance(n.func, cst.Name) and n.func.value in helpers:
            return n.func.value
        spelled = dotted_name(n.func)
        if spelled is not None and spelled.startswith(alias + ".") and draws("tensorflow." + spelled[len(alias) + 1:]):
            return spelled
    return None


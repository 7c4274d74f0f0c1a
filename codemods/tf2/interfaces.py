"""The interpreter's parts, as the construct converters see them through the program.

The interpreter makes three parts and hangs them on the program (`program.Program`): the step
functions (`steps.Steps`, `tr.steps`), the script's classes read at their calls
(`classes.Classes`, `tr.classes`) and the script's own functions (`helpers.Functions`,
`tr.functions`). A converter reaches them only through these interfaces, so it never imports
the modules that read the program (they import the converters). The small records the parts
and the converters hand each other live here too: a fetched thing (`Leaf`, its `FetchKind`), the method being
read (`MethodFrame`), what a helper does (`HelperInfo`).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional, Protocol

import libcst as cst

from codemods.tf2.model import AV, Class, Func, Instance


class FetchKind(enum.Enum):
    """What a fetched thing is (`session.Fetch`); a step function's `Leaf` is a VALUE or a TRAIN."""

    VALUE = "value"                  # a graph value: the step computes and returns it
    TRAIN = "train"                  # an update op: the step applies it
    VAR = "var"                      # a variable (or a list of them), or an assign run where sess.run was
    INIT = "init"                    # the variables' initializer
    ITERATOR_INIT = "iterator_init"  # an iterator's initializer


@dataclass
class Leaf:
    """One fetched thing: a value (its TF 2 expression), or an update op (by its name)."""

    kind: FetchKind                 # VALUE or TRAIN
    node: cst.BaseExpression
    name: Optional[str] = None      # the fetched name, when the fetch is a name
    value: bool = False             # a TRAIN leaf whose value the run keeps (`GraphOp.info["gives"]`)


class MethodFrame:
    """A method being read: its instance, its `self` name, the locals kept on the instance."""

    def __init__(self, instance: Instance, self_name: str, start_env: dict, locals_: set):
        self.instance = instance
        self.self_name = self_name
        self.start_env = start_env
        self.locals = locals_
        self.promoted: dict = {}


@dataclass
class HelperInfo:
    """What a function of the script does, read off its body (and the functions it calls)."""

    creates_state: bool = False
    session: bool = False
    reads_graph_globals: set = field(default_factory=set)
    uses_tf: bool = False
    graph_values: bool = False  # computes graph values: a TF call or name that is no host utility or dtype
    scoped: bool = False   # opens a variable or name scope named by a parameter: read at each call


class StepBuilder(Protocol):
    """`steps.Steps`: the step functions, and the variable lists their updates read."""

    by_key: dict                    # (fetches, feeds) -> the step made for them

    def step_for(self, leaves: list, feeds: list, shape=None) -> tuple:
        """(Step, its call expression) for fetching `leaves` (`Leaf`s) with `feeds` [(placeholder, value)];
        with `shape`, the step returns the fetch's whole structure."""

    def var_list(self, pairs: list, name: Optional[str] = None) -> cst.BaseExpression:
        """A name for the variables `pairs` [(TF 1.x name, expression)], made once."""

    def var_list_of(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """A name for the variable list `node` evaluates to, made once, here."""

    def list_members(self, node: cst.BaseExpression, av: Optional[AV] = None) -> Optional[tuple]:
        """The TF 1.x names of the variables a variable list holds, when known."""

    def named_list(self, key: tuple) -> Optional[str]:
        """A name of the script already bound, once, to exactly these variables."""

    def materialize(self, names: set) -> None:
        """Compute the value statements `names` need right here, once."""


class MethodReader(Protocol):
    """`classes.Classes`: the script's classes, their methods read at their calls."""

    @property
    def frame(self) -> Optional[MethodFrame]:
        """The method being read, innermost (None at module level and in plain functions)."""

    def instantiate(self, site, cls: Class) -> tuple:
        """`Cls(...)`: an `Instance`, its `__init__` read there."""

    def attribute(self, ev, instance: Instance, attr: str, node: cst.Attribute) -> tuple:
        """(abstract value, TF 2 node) of `instance.attr`."""

    def call_method(self, site) -> tuple:
        """`obj.method(...)` of an instance of the script's classes, read at this call."""

    def state_ref(self, name: str) -> Optional[cst.BaseExpression]:
        """Inside a method, where state named `name` lives on the instance (`self.<name>`), else None."""

    def promote(self, body: list) -> tuple:
        """(`body` reading the method's locals from the instance, the method's frame or None)."""

    def rebase(self, state, expr: cst.BaseExpression) -> cst.BaseExpression:
        """`expr` (reaching `state` as its owner's method wrote it) as the code where the reading is now."""

    def instance_expr(self, instance: Instance, self_name: str) -> cst.BaseExpression:
        """How the step being made refers to `instance`."""


class HelperReader(Protocol):
    """`helpers.Functions`: the script's own functions, read at their calls."""

    def analyze(self, fn: cst.FunctionDef, seen: Optional[set] = None) -> HelperInfo:
        """What `fn` does (creates state, runs the session, reads graph values of the module, ...)."""

    def helper_call(self, site, func: Func) -> tuple:
        """(abstract value, TF 2 node) of a call of the script's function `func` inside an expression."""

    def walk_program(self, fn: cst.FunctionDef, site=None) -> None:
        """A function that runs the session, read as a region where it is first called."""

"""The program model: what each name of a TF 1.x graph-building region denotes.

A TF 1.x program has three kinds of things, and TF 2 gives each a home:

* **state** (`State`): variables, layers, optimizers, iterators, savers, writers. Created once,
  where TF 1.x created them, outside every `tf.function`;
* **inputs** (`Placeholder`): what `feed_dict` gives; the arguments of the step functions;
* **values** (`Comp`): every other graph expression, a function of inputs and state, kept as
  the statement that computed it and recomputed inside each step function that fetches it.

Names are bound to abstract values (`AV` subclasses) while the region is read; host code
(plain Python, NumPy) is `HOST`. Nothing here knows TensorFlow's API: the construct modules
(variables, layers, training, data, summaries) decide what a call denotes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

Shape = Optional[list]  # static dims: each None (unknown) or a dimension expression (cst node)


class AV:
    """An abstract value: what a name or an expression denotes while the graph is built."""

    graph = False  # computed by the graph (must be computed inside a step)


@dataclass(frozen=True)
class Host(AV):
    """A Python value (numbers, NumPy arrays, functions of the script, ...)."""


HOST = Host()


@dataclass(eq=False)
class Tensor(AV):
    """A graph value; `shape` is its static shape when known."""

    shape: Shape = None
    single: bool = True          # one tensor (not a Python structure of tensors)
    element: Shape = None        # a Python list of tensors of one static shape (tf.unstack, static_rnn outputs)
    pairs: bool = False          # may hold variables: (gradient, variable) pairs, or what a comprehension made of them
    graph = True


@dataclass(eq=False)
class Placeholder:
    name: str                       # its name in the script: the step functions' parameter
    dtype: cst.BaseExpression       # TF 2 dtype expression
    shape: Optional[cst.BaseExpression]
    dims: Shape
    line: int
    order: int
    default: Optional[cst.BaseExpression] = None  # placeholder_with_default's value
    source: Optional[cst.BaseExpression] = None   # an iterator's element: the iterator it is pulled from
    spec: Optional[cst.BaseExpression] = None     # its TensorSpec (structure), when not shape and dtype
    tf1_name: Optional[str] = None                # TF 1.x's tensor name ("X:0")
    computed: bool = False                        # its default is a graph value: a Comp binds it when not fed


@dataclass(eq=False)
class Input(AV):
    placeholder: Placeholder
    graph = True


@dataclass(eq=False)
class State:
    """Something created once that lives across steps."""

    kind: str                # variable | layer | optimizer | iterator | dataset | saver | writer | schedule | cell
    name: str                # its name in the output
    tf1_name: str            # TF 1.x's name for it, scope path included
    line: int
    trainable: bool = False
    variables: Optional[cst.BaseExpression] = None  # its trainable variables, as a list expression
    single: bool = False     # a single variable: `variables` is `[name]`
    shape: Shape = None      # a variable's static shape
    info: dict = field(default_factory=dict)
    ref: Optional[cst.BaseExpression] = None  # how code refers to it, when not by `name` (`self.dense`)

    def expr(self) -> cst.BaseExpression:
        return self.ref if self.ref is not None else cst.Name(self.name)


@dataclass(eq=False)
class StateRef(AV):
    state: State

    @property
    def graph(self) -> bool:  # reading a variable (or a schedule) is a graph value; a layer object is not
        return self.state.kind in ("variable", "schedule")


@dataclass(eq=False)
class Comp:
    """A value statement: computed inside the step functions that need it."""

    index: int
    line: int
    body: list                      # TF 2 statements, as they go into a step function
    defs: set                       # names it binds
    uses: set                       # graph names it reads (values and placeholders)
    grads: list = field(default_factory=list)  # losses it differentiates (tape.gradient)
    train: bool = False             # applies an update: runs after the forward pass
    returns: Optional[cst.BaseExpression] = None  # what fetching a train comp gives (None: nothing)
    gradient_calls: int = 0
    deps: list = field(default_factory=list)  # names of ops that must run before it (control_dependencies)
    owner: Optional[tuple] = None   # (instance, its `self` name) when made inside a method
    default_of: Optional[str] = None  # computes a placeholder_with_default's default: left out where it is fed
    at: tuple = ()                  # the input lines being read when it was made, outermost first


@dataclass(eq=False)
class GraphOp:
    """An op fetched for its effect: an update, an initializer, an assignment, a group."""

    kind: str                        # train | init | assign | group | noop | iterator_init | summary | merged
    name: Optional[str] = None       # the name bound to it (its Comp defines it), if any
    info: dict = field(default_factory=dict)


@dataclass(eq=False)
class Op(AV):
    op: GraphOp
    graph = True


@dataclass(eq=False)
class Seq(AV):
    """A Python list or tuple; of variables only, it is a host object (the variables themselves)."""

    items: list
    kind: str = "list"  # list | tuple | variables (the zip idiom's `variables` of `grads, variables = zip(*...)`)
    fields: tuple = ()  # a namedtuple's field names (an LSTM state's `c`, `h`), read as attributes

    @property
    def graph(self) -> bool:
        return any(i.graph and not isinstance(i, StateRef) for i in self.items)


@dataclass(eq=False)
class Mapping(AV):
    keys: list
    items: list

    @property
    def graph(self) -> bool:
        return any(i.graph and not isinstance(i, StateRef) for i in self.items)


@dataclass(eq=False)
class Func(AV):
    """A function of the script."""

    node: cst.FunctionDef


@dataclass(eq=False)
class TFSymbol(AV):
    """A TensorFlow module, function or class referred to, not called (`tf.nn.relu`)."""

    qname: str


@dataclass(eq=False)
class Scope(AV):
    """A `tf.variable_scope` object (`with tf.variable_scope("d") as scope:`)."""

    path: str
    frame: object = None


@dataclass(eq=False)
class Class(AV):
    """A class of the script (its methods are read when an instance calls them)."""

    node: cst.ClassDef


@dataclass(eq=False)
class Instance(AV):
    """An object of a class of the script: its attributes are bound like names."""

    cls: Class
    attrs: dict = field(default_factory=dict)    # attribute -> abstract value
    locals: dict = field(default_factory=dict)   # attribute holding a graph value -> its name in the steps
    literals: dict = field(default_factory=dict) # plain attribute -> the literal it holds as the program is read


@dataclass(eq=False)
class Session(AV):
    """The `tf.Session`: gone in TF 2; its `run` calls become step calls."""


@dataclass(eq=False)
class Other(AV):
    """A TensorFlow object the translator knows by kind (a ConfigProto, an initializer, ...)."""

    kind: str
    info: dict = field(default_factory=dict)


@dataclass(eq=False)
class Element(AV):
    """An item of a Python loop over TensorFlow objects (`for v in tf.trainable_variables():`): a host
    value, but one whose name, graph and identity TF 2 does not give as TF 1.x did (`elements`)."""

    of: AV


def exact_names(av: AV) -> bool:
    """`av` holds only variables the TF2 tier writes under TF 1.x's own names (`tf.get_variable`, a named
    `tf.Variable`): TF 2 gives their `.name` as TF 1.x did (`"generator/out/b:0"`)."""
    if isinstance(av, Element):
        return exact_names(av.of)
    if isinstance(av, Seq) and av.kind != "variables":
        return bool(av.items) and all(isinstance(i, StateRef) and i.state.kind == "variable"
                                      and i.state.info.get("named") for i in av.items)
    return False


def holds_tf(av: AV) -> bool:
    """`av` is or holds TensorFlow objects (tensors, variables, layers, ops): iterating over it gives
    them, and comparing it compares them."""
    if isinstance(av, (Seq, Mapping)):
        return any(holds_tf(i) for i in av.items) or getattr(av, "kind", None) == "variables"
    if isinstance(av, Other):  # shapes and dtypes compare by value in TF 1.x too
        return av.kind not in ("shape", "dtype")
    return not isinstance(av, (Host, Func, Class, TFSymbol, Scope, Session, Instance))


def one_tensor(av: AV) -> bool:
    """`av` is known to be one tensor or variable: not a Python list of them, not a partitioned
    variable. A variable of the program (made without a partitioner: the translator refuses one),
    an input, a value whose static shape is known (only one tensor has one), or a list of one such."""
    if isinstance(av, StateRef):
        return av.state.kind == "variable" and av.state.single
    if isinstance(av, Input):
        return True
    if isinstance(av, Tensor):
        return av.single and av.shape is not None
    if isinstance(av, Seq):
        return len(av.items) == 1 and one_tensor(av.items[0])
    return False


def graph_names(env: dict) -> set:
    return {n for n, v in env.items() if v.graph}

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

import enum
from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst

Shape = Optional[list]  # static dims: each None (unknown) or a dimension expression (cst node)


# The kinds of the model's objects. Plain enums, not string ones: a kind never equals a string, so a
# misspelt kind is an AttributeError, not a comparison that is silently false. A kind's `value` is
# the word the notes print.
class StateKind(enum.Enum):
    """What a `State` is."""

    VARIABLE = "variable"
    LAYER = "layer"
    OPTIMIZER = "optimizer"
    SCHEDULE = "schedule"    # a learning-rate decay: a function of the global step
    ITERATOR = "iterator"
    SAVER = "saver"
    WRITER = "writer"


class OpKind(enum.Enum):
    """What a `GraphOp` does when it is fetched."""

    TRAIN = "train"
    INIT = "init"                    # a variables' initializer
    ASSIGN = "assign"
    GROUP = "group"                  # fetched by session.py, but no construct makes one (tf.group of initializers is
    #                                  an INIT, of other ops refused)
    ITERATOR_INIT = "iterator_init"
    SUMMARY = "summary"
    MERGED = "merged"                # merged summaries
    UPDATE = "update"                # a batch normalization layer's moving-average update (UPDATE_OPS)
    COLLECTED = "collected"          # a tf.losses loss written as a statement: only the LOSSES collection has it
    WRITTEN = "written"              # add_summary: the fetched values written under the writer


class OtherKind(enum.Enum):
    """What an `Other` is."""

    SCOPE = "scope"                  # a `with` block's object: variable, name or device scope, graph.as_default()
    SCOPE_EFFECT = "scope_effect"    # what scope.reuse_variables() returns
    GRAPH = "graph"
    GRAPH_RESET = "graph_reset"
    CONFIG = "config"                # a ConfigProto, GPUOptions
    SESSION_CLOSE = "session_close"
    HOST_CALL = "host_call"          # a call the host code makes (Saver.save, tf.app.run, tf.set_random_seed)
    MEMBER = "member"                # an attribute of an object the translator does not know
    FEED = "feed"                    # a feed dict bound to a name
    DATASET = "dataset"
    DATASET_STRUCTURE = "dataset_structure"  # a dataset's output_types, output_shapes, output_classes
    CELL = "cell"                    # an RNN cell
    INITIALIZER = "initializer"
    GLOBAL_VARIABLES = "global_variables"
    WRITER_CALL = "writer_call"      # a summary writer's flush(), close()
    SUMMARY_VALUES = "summary_values"  # what fetching a summary op gave (for add_summary)
    SHAPE = "shape"                  # a tensor's or variable's static shape (`.shape`, `.get_shape()`)
    DIMENSION = "dimension"          # one dimension of a static shape, bound to a name (`static_shapes`)
    DTYPE = "dtype"
    REGULARIZER = "regularizer"      # tf.contrib.layers.l2_regularizer(scale) and its kin (`regularization`)


class SeqKind(enum.Enum):
    """What a `Seq` is."""

    LIST = "list"
    TUPLE = "tuple"
    VARIABLES = "variables"  # the zip idiom's `variables` of `grads, variables = zip(*...)`


class AVKind(enum.Enum):
    """The kind `kind_of` gives an abstract value that is neither state nor an `Other`."""

    TENSOR = "tensor"
    SESSION = "session"
    OP = "op"
    STRUCTURE = "structure"  # a list, a tuple, a dict
    INSTANCE = "instance"    # an object of a class of the script
    HOST = "host"


Kind = Union[StateKind, OtherKind, AVKind]


class AV:
    """An abstract value: what a name or an expression denotes while the graph is built."""

    graph = False  # computed by the graph (must be computed inside a step)


@dataclass(frozen=True)
class Host(AV):
    """A Python value (numbers, NumPy arrays, functions of the script, ...)."""


HOST = Host()


class Number(Host):
    """A Python number (a helper's parameter given one, read for its result's shape): a scalar wherever it
    meets a tensor (`leak * t` has t's shape)."""


@dataclass(eq=False)
class Tensor(AV):
    """A graph value; `shape` is its static shape when known."""

    shape: Shape = None
    single: bool = True          # one tensor (not a Python structure of tensors)
    element: Shape = None        # a Python list of tensors of one static shape (tf.unstack, static_rnn outputs)
    pairs: bool = False          # may hold variables: (gradient, variable) pairs, or what a comprehension made of them
    chosen: bool = False         # a list TF 1.x chose while it built the graph, by Python on graph values
    #                              (`[v for g, v in pairs if g is not None]`): the steps choose again where they need it
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
    at: tuple = ()                                # the statements being read where it was made (`Comp.at`)


@dataclass(eq=False)
class Input(AV):
    placeholder: Placeholder
    graph = True


@dataclass(eq=False)
class State:
    """Something created once that lives across steps."""

    kind: StateKind
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
        return self.state.kind in (StateKind.VARIABLE, StateKind.SCHEDULE)


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
    watch_inputs: bool = False      # a gradient with respect to a value, not a variable: the tape watches the inputs
    deps: list = field(default_factory=list)  # names of ops that must run before it (control_dependencies)
    owner: Optional[tuple] = None   # (instance, its `self` name) when made inside a method
    default_of: Optional[str] = None  # computes a placeholder_with_default's default: left out where it is fed
    at: tuple = ()                  # the input lines being read when it was made, outermost first
    update_of: Optional[str] = None  # a batch normalization update: its layer's TF 1.x name


@dataclass(eq=False)
class GraphOp:
    """An op fetched for its effect: an update, an initializer, an assignment, a group. `info["gives"]`:
    TF 1.x's run of the op gave a value, its variable's after the assignment (an assign op, whose Comp's body
    is the `v.assign(...)` call; `minimize` and `apply_gradients` give None, with a global step too, as
    TF 1.x took the increment's `.op`): a run that keeps the result gets it from the step."""

    kind: OpKind
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
    kind: SeqKind = SeqKind.LIST
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

    kind: OtherKind
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
    if isinstance(av, Seq) and av.kind != SeqKind.VARIABLES:
        return bool(av.items) and all(isinstance(i, StateRef) and i.state.kind == StateKind.VARIABLE
                                      and i.state.info.get("named") for i in av.items)
    return False


def holds_tf(av: AV) -> bool:
    """`av` is or holds TensorFlow objects (tensors, variables, layers, ops): iterating over it gives
    them, and comparing it compares them."""
    if isinstance(av, (Seq, Mapping)):
        return any(holds_tf(i) for i in av.items) or getattr(av, "kind", None) == SeqKind.VARIABLES
    if isinstance(av, Other):  # shapes and dtypes compare by value in TF 1.x too; a host call gives host values
        return av.kind not in (OtherKind.SHAPE, OtherKind.DTYPE, OtherKind.HOST_CALL)
    return not isinstance(av, (Host, Func, Class, TFSymbol, Scope, Session, Instance))


def one_tensor(av: AV) -> bool:
    """`av` is known to be one tensor or variable: not a Python list of them, not a partitioned
    variable. A variable of the program (made without a partitioner: the translator refuses one),
    an input, a value whose static shape is known (only one tensor has one), or a list of one such."""
    if isinstance(av, StateRef):
        return av.state.kind == StateKind.VARIABLE and av.state.single
    if isinstance(av, Input):
        return True
    if isinstance(av, Tensor):
        return av.single and av.shape is not None
    if isinstance(av, Seq):
        return len(av.items) == 1 and one_tensor(av.items[0])
    return False


def kind_of(av: AV) -> Kind:
    """The kind of a method's receiver or an attribute's base: which construct knows it. A variable
    scope object (`Scope`) has the kind of the `with` block's object it came from (`OtherKind.SCOPE`)."""
    if isinstance(av, (Tensor, Input)):
        return AVKind.TENSOR
    if isinstance(av, StateRef):
        return av.state.kind
    if isinstance(av, Session):
        return AVKind.SESSION
    if isinstance(av, Op):
        return AVKind.OP
    if isinstance(av, Scope):
        return OtherKind.SCOPE
    if isinstance(av, Other):
        return av.kind
    if isinstance(av, (Seq, Mapping)):
        return AVKind.STRUCTURE
    if isinstance(av, Instance):
        return AVKind.INSTANCE
    return AVKind.HOST


def graph_names(env: dict) -> set:
    return {n for n, v in env.items() if v.graph}

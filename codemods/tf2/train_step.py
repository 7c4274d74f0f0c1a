"""Graph script → eager script: placeholders become the arguments of `@tf.function` steps.

The seed shape is a module-level TF 1.x script: build a graph (placeholders, layers,
variables, a loss, an optimizer, gradients, clipping, a train op), then run it in a
`tf.Session` loop. This step turns it into TF2:

* state (variables, Keras layers built up front in TF1's creation order, optimizers, lists
  of variables, learning-rate schedules) is created once, where the graph created it;
* every distinct `sess.run(fetches, feed_dict)` becomes one `@tf.function` whose arguments
  are the fed placeholders (`tf.TensorSpec`s with the placeholders' dtype and shape, so feeds
  convert as `feed_dict` did) and whose body is exactly the graph computations the fetches
  need, in source order; the forward pass to each differentiated loss runs inside
  `tf.GradientTape()`; update ops run after everything that does not depend on them;
* the call site unpacks what was fetched; fetched variables become `.numpy()` snapshots;
  `tf.global_variables_initializer()` and the Session disappear.

A model class that builds the graph in `__init__` is flattened first and refolded after
(`model_class`): its state becomes attributes and its steps `@tf.function` methods.

Whatever this cannot prove exact raises `Refuse` (file line + why); nothing is half-done.
Expression-level renames (`tf.set_random_seed`, `tf.global_norm`, ...) are later steps.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from codemods.tf2 import shapes as shp
from codemods.tf2 import _base
from codemods.tf2._base import (NameTransformer, Names, Note, Refuse, arg, code, fresh, keywords, names_in,
                                target_names, walk)
from codemods.tf2.api_changes import NoTF2Mapping, to_tf2
from codemods.tf2.symbols import tf_alias

# The module's own name for `tensorflow` (`import tensorflow as tf1`): generated code uses it.
_ALIAS = ["tf"]


def _aliased(text: str) -> str:
    return text if _ALIAS[0] == "tf" else re.sub(r"\btf\.", _ALIAS[0] + ".", text)


def stmt(text: str) -> cst.BaseStatement:
    return _base.stmt(_aliased(text))


def expr(text: str) -> cst.BaseExpression:
    return _base.expr(_aliased(text))
from codemods.tf2.optimizer_table import OPTIMIZE_LOSS_NAMES, OPTIMIZERS, SLOTS, OptimizerRow

RULE = "train_step"
DESCRIPTION = "Turn a module-level TF 1.x graph + Session script into tf.function steps with GradientTape."

PLACEHOLDER = "tensorflow.placeholder"
DENSE = "tensorflow.layers.dense"
KERAS_DENSE = "tensorflow.keras.layers.Dense"
SLIM_FC = ("slim.fully_connected", "slim.layers.fully_connected", "tensorflow.contrib.layers.fully_connected")
GET_VARIABLE = "tensorflow.get_variable"
VARIABLE = "tensorflow.Variable"
GLOBAL_STEP = ("tensorflow.train.get_or_create_global_step", "tensorflow.train.create_global_step")
TRAINABLES = ("tensorflow.trainable_variables",)
GET_COLLECTION = "tensorflow.get_collection"
INITIALIZERS = ("tensorflow.global_variables_initializer", "tensorflow.initialize_all_variables")
SESSIONS = ("tensorflow.Session", "tensorflow.InteractiveSession")
SCOPES = ("tensorflow.variable_scope", "tensorflow.name_scope")
CLIP_DECORATOR = "tensorflow.contrib.estimator.clip_gradients_by_norm"
OPTIMIZE_LOSS = ("tensorflow.contrib.layers.optimize_loss", "slim.optimize_loss")
CREATE_TRAIN_OP = ("slim.learning.create_train_op", "tensorflow.contrib.training.create_train_op")
EXP_DECAY = "tensorflow.train.exponential_decay"
GRADIENTS = "tensorflow.gradients"
MSE = "tensorflow.losses.mean_squared_error"
TOTAL_LOSS = "tensorflow.losses.get_total_loss"
KERAS_OPTIMIZERS = {"tensorflow.keras.optimizers.Adam": "Adam", "tensorflow.keras.optimizers.SGD": "SGD"}
# Calls that create variables as a side effect (other than the mapped dense layers).
VARIABLE_MAKERS = ("tensorflow.contrib", "tensorflow.nn.rnn_cell", "tensorflow.nn.dynamic_rnn",
                   "tensorflow.nn.static_rnn", "tensorflow.layers", "slim", "tensorflow.keras.layers",
                   "tensorflow.make_template")
# Reads whose gradient is an IndexedSlices: Keras 3's Adam (and others) update such a gradient
# row by row (a repeated index adds its g**2 twice), TF1 sums the rows first.
SPARSE_READS = ("tensorflow.nn.embedding_lookup", "tensorflow.gather")
DENSE_KWARGS = {"activation", "use_bias", "name", "kernel_initializer", "bias_initializer"}


@dataclass
class Comp:
    """A graph computation, run inside the generated step functions."""

    index: int
    line: int
    defs: list
    uses: set
    body: list                    # statements, as they go into the function
    grads: list = field(default_factory=list)   # loss names it differentiates
    train: bool = False           # applies an update
    value: Optional[str] = None   # what fetching it gives, for a train op that returns the loss
    gradient_calls: int = 0


@dataclass
class Group:
    """Trainable variables created together (a tf.Variable, or a Keras layer's kernel and bias)."""

    expr: str
    single: Optional[str]         # the variable's name for a tf.Variable
    tf1_name: str                 # TF1's variable-name prefix, for get_collection(scope=...)


@dataclass
class Opt:
    name: str                     # the name in the output
    keras: bool = True
    clip_global: Optional[str] = None   # contrib clip_gradients_by_norm(clip_norm=...) code
    clip_value: Optional[str] = None    # a tf.keras clipvalue moved out of the constructor (with clipnorm)
    velocity_ones: bool = False
    plain_sgd: bool = False       # tf.keras.optimizers.SGD without momentum: sparse updates are TF1's
    source: str = ""              # the TF1 / tf.keras class (canonical), for the get_slot table


class Converter:
    def __init__(self, module: cst.Module):
        self.names = Names.of_module(module)
        self.module = self.names.module
        self.taken = names_in(self.module)
        self.out: list = []
        self.comps: list[Comp] = []
        self.placeholders: dict[str, tuple] = {}
        self.shapes: dict[str, list] = {}
        self.groups: list[Group] = []
        self.variables: set[str] = set()          # single variables (incl. non-trainable)
        self.var_lists: dict[str, tuple] = {}     # name -> tuple of group exprs
        self.layers: dict[str, str] = {}          # layer object name -> output name
        self.optimizers: dict[str, Opt] = {}
        self.schedules: dict[str, str] = {}       # schedule name -> step variable name
        self.global_step: Optional[str] = None
        self.init_ops: set[str] = set()
        self.notes: list[Note] = []
        self.functions: dict[tuple, str] = {}
        self.function_defs: list = []
        self.session_seen = False
        self.dense_counts: dict[str, int] = {}
        self.sparse = False
        self.updates: dict[str, list] = {}        # Keras optimizer name -> variable lists it updates
        self.built: set[str] = set()              # optimizers built explicitly (their slots exist)
        self.slot_maps: dict[tuple, str] = {}     # (optimizer, slot) -> name of the id(var) -> slot dict
        self.collected_losses: list = []          # the LOSSES collection: names of the tf.losses results
        self.gradient_lists: set[str] = set()     # names bound to a tf.gradients(...) result
        self.build_prints: list = []              # (function name, comps, params) of build-time prints

    # -- helpers ----------------------------------------------------------------------------
    def refuse(self, node, reason: str):
        raise Refuse(node if isinstance(node, int) else self.names.line(node), reason)

    def change(self, node, message: str) -> None:
        line = node if isinstance(node, int) else self.names.line(node)
        note = Note(line, RULE, "change", message)
        if note not in self.notes:
            self.notes.append(note)

    def new_name(self, preferred: str) -> str:
        name = fresh(preferred, self.taken)
        self.taken.add(name)
        return name

    @property
    def graph_names(self) -> set:
        return {d for c in self.comps for d in c.defs} | set(self.placeholders)

    def calls_tf(self, node: cst.CSTNode) -> bool:
        return any(isinstance(n, cst.Call) and self.names.under(n.func, "tensorflow", "slim") for n in walk(node))

    def trainables_expr(self, groups) -> str:
        parts, singles = [], []
        for g in groups:
            if g.single is not None:
                singles.append(g.single)
                continue
            if singles:
                parts.append("[" + ", ".join(singles) + "]")
                singles = []
            parts.append(g.expr)
        if singles:
            parts.append("[" + ", ".join(singles) + "]")
        return " + ".join(parts) if parts else "[]"

    def var_list_name(self, groups, at: int, preferred: str = "variables") -> str:
        """A module-level name holding `groups`' variables: an existing one, else a new one."""
        key = tuple(g.expr for g in groups)
        for name, value in self.var_lists.items():
            if value == key:
                return name
        name = self.new_name(preferred)
        self.var_lists[name] = key
        self.out.append(stmt(f"{name} = {self.trainables_expr(groups)}\n"))
        self.change(at, f"the variables TF1 differentiated by default: {name} (in creation order)")
        return name

    # -- driver -------------------------------------------------------------------------------
    def run(self) -> cst.Module:
        body = list(self.module.body)
        self.ranges = []  # statement i of the input → self.out[a:b] (model_class refolds by these)
        for st in body:
            before = len(self.out)
            if self.session_seen:
                self.after_session(st)
            else:
                self.graph_statement(st, scope="")
            self.carry_blank_lines(st, before)
            self.ranges.append((before, len(self.out)))
        if not self.session_seen:
            self.refuse(1, "no `with tf.Session() as sess:` block at module level: only module-level "
                           "session scripts are converted (functions, classes and Estimators are not)")
        return self.module.with_changes(body=self.out)

    def after_session(self, st) -> None:
        if names_in(st) & (self.graph_names | {"sess"}) or self.calls_tf(st):
            self.refuse(st, "graph code after the Session block is not converted")
        self.out.append(st)

    def carry_blank_lines(self, st, before: int) -> None:
        """A statement that left the module level leaves its blank lines to the next one there."""
        blank = [l for l in getattr(st, "leading_lines", ()) if l.comment is None]
        if len(self.out) == before and blank:
            self.pending = getattr(self, "pending", []) or blank
        elif len(self.out) > before and getattr(self, "pending", None):
            first = self.out[before]
            if hasattr(first, "leading_lines") and not first.leading_lines:
                self.out[before] = first.with_changes(leading_lines=self.pending)
            self.pending = []

    # -- the graph phase -------------------------------------------------------------------------
    def graph_statement(self, st, scope: str) -> None:
        if self.build_prints:
            self.after_build_print(st)
        if isinstance(st, cst.With):
            self.with_statement(st, scope)
            return
        if isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            free = names_in(st) & self.graph_names
            if free:
                self.refuse(st, f"`{st.name.value}` uses graph tensors ({', '.join(sorted(free))}) from the "
                                "module: not converted")
            builds = self.graph_state_built_in(st)
            if builds:
                kind = "class" if isinstance(st, cst.ClassDef) else "function"
                self.refuse(st, f"{kind} `{st.name.value}` builds graph state ({', '.join(builds)}): graph code "
                                f"structured in a {kind} is converted only as a helper called once (inline_helpers) "
                                "or a model class instantiated once (model_class)")
            self.out.append(st)
            return
        if not isinstance(st, cst.SimpleStatementLine):
            if names_in(st) & self.graph_names or self.calls_tf(st):
                self.refuse(st, "a compound statement that builds graph ops is not converted")
            self.out.append(st)
            return
        if len(st.body) != 1:
            if self.calls_tf(st) or names_in(st) & self.graph_names:
                self.refuse(st, "several graph statements on one line are not converted")
            self.out.append(st)
            return
        small = st.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            self.out.append(st)
        elif isinstance(small, cst.Assign) and len(small.targets) == 1:
            self.assignment(st, small, scope)
        elif isinstance(small, cst.Expr):
            self.expression_statement(st, small)
        else:
            if names_in(st) & self.graph_names or self.calls_tf(st):
                self.refuse(st, f"`{code(small).strip()}` is not converted")
            self.out.append(st)

    def with_statement(self, st: cst.With, scope: str) -> None:
        if len(st.items) != 1 or not isinstance(st.items[0].item, cst.Call):
            self.refuse(st, "this `with` statement is not converted")
        call = st.items[0].item
        if self.names.is_(call.func, *SESSIONS):
            if call.args:
                self.refuse(st, "a Session with a target or config is not converted")
            self.session_block(st)
            return
        if self.names.is_(call.func, *SCOPES):
            name = arg(call, 0, "name_or_scope" if self.names.is_(call.func, SCOPES[0]) else "name")
            if not isinstance(name, cst.SimpleString) or set(keywords(call)) - {"name_or_scope", "name"} or len(call.args) != 1:
                self.refuse(st, "a variable_scope other than `with tf.variable_scope(\"name\"):` is not converted")
            inner = f"{scope}/{name.evaluated_value}" if scope else name.evaluated_value
            self.change(st, f"`{code(call)}` dropped: Keras layers and tf.Variables carry their own names")
            for child in st.body.body:
                self.graph_statement(child, inner)
            return
        self.refuse(st, f"`with {code(call)}` is not converted")

    def expression_statement(self, st, small: cst.Expr) -> None:
        call = small.value
        if isinstance(call, cst.Call) and self.names.is_(call.func, "tensorflow.set_random_seed"):
            self.out.append(st)
            return
        text = code(small).strip()
        if isinstance(call, cst.Call) and self.names.is_(call.func, MSE):
            return self.mean_squared_error(st, call)
        if self.gradient_type_print(st, call):
            return None
        if isinstance(call, cst.Call) and self.names.under(call.func, "tensorflow.losses"):
            self.refuse(st, f"`{text}` adds its loss to the LOSSES collection (read back by "
                            "tf.losses.get_total_loss()): graph collections are not converted")
        tensors = sorted(names_in(st) & self.graph_names)
        if tensors:
            self.refuse(st, f"`{text}` runs once, when the graph is built, on graph tensors ({', '.join(tensors)}): "
                            "TF2 has them only inside a traced step function, so there is no exact place for it")
        if self.calls_tf(st):
            self.refuse(st, f"`{text}` acts on the graph at build time (a collection, a graph op for its side "
                            "effect): no eager equivalent before the first step")
        self.out.append(st)

    def assignment(self, st, small: cst.Assign, scope: str) -> None:
        target, value = small.targets[0].target, small.value
        tnames = target_names(target)
        single = target.value if isinstance(target, cst.Name) else None
        call = value if isinstance(value, cst.Call) else None
        q = self.names.of(call.func) if call is not None else None
        inner_call = call.func if call is not None and isinstance(call.func, cst.Call) else None

        if q == PLACEHOLDER and single:
            return self.placeholder(st, single, call)
        if single and (q in (DENSE, *SLIM_FC) or (inner_call is not None and self.names.is_(inner_call.func, KERAS_DENSE))):
            return self.dense(st, single, call, q, scope)
        if single and q in (GET_VARIABLE, VARIABLE):
            return self.variable(st, single, call, q, scope)
        if single and q in GLOBAL_STEP:
            return self.make_global_step(st, single, call)
        if single and q in OPTIMIZERS:
            return self.optimizer(st, single, call, OPTIMIZERS[q])
        if single and q in KERAS_OPTIMIZERS:
            return self.keras_optimizer(st, single, call)
        if single and q == CLIP_DECORATOR:
            return self.clip_decorator(st, single, call)
        if single and q == EXP_DECAY:
            return self.exponential_decay(st, single, call)
        if single and q in TRAINABLES:
            return self.trainable_list(st, single, self.groups)
        if single and q == GET_COLLECTION:
            return self.collection(st, single, call)
        if single and q in INITIALIZERS:
            self.init_ops.add(single)
            self.change(st, "variables are initialized when created in TF2: initializer op dropped")
            return None
        if single and q in OPTIMIZE_LOSS:
            return self.optimize_loss(st, single, call)
        if single and q in CREATE_TRAIN_OP:
            return self.create_train_op(st, single, call)
        if single and q == TOTAL_LOSS:
            return self.total_loss(st, single, call)
        method = call.func.attr.value if call is not None and isinstance(call.func, cst.Attribute) else None
        owner = call.func.value.value if method and isinstance(call.func.value, cst.Name) else None
        if (single and method == "minimize" and isinstance(call.func.value, cst.Call)
                and self.names.of(call.func.value.func) in OPTIMIZERS):
            # `tf.train.XOptimizer(...).minimize(...)` (GANs): the optimizer gets a name of its own
            inner = call.func.value
            owner = self.new_name(f"{single}_optimizer")
            self.optimizer(st, owner, inner, OPTIMIZERS[self.names.of(inner.func)])
            return self.minimize(st, single, call, owner)
        if owner in self.optimizers:
            if method == "compute_gradients":
                return self.compute_gradients(st, target, call, owner)
            if method == "apply_gradients" and single:
                return self.apply_gradients(st, single, call, owner)
            if method == "minimize" and single:
                return self.minimize(st, single, call, owner)
            if method == "get_updates" and single:
                return self.get_updates(st, single, call, owner)
            self.refuse(st, f"`{owner}.{method}(...)` has no exact Keras 3 equivalent in tf1clip's table")
        if self.is_zip_compute_gradients(value) and isinstance(target, cst.Tuple) and len(tnames) == 2:
            return self.zip_compute_gradients(st, tnames, value)
        if names_in(value) & self.graph_names or self.calls_tf(value):
            return self.generic(st, small, tnames)
        if set(tnames) & (self.graph_names | set(self.optimizers) | set(self.layers)):
            self.refuse(st, f"`{tnames[0]}` is rebound to a Python value after holding graph state")
        self.out.append(st)
        return None

    # -- state -------------------------------------------------------------------------------------
    def placeholder(self, st, name, call) -> None:
        dtype = arg(call, 0, "dtype")
        shape = arg(call, 1, "shape")
        if dtype is None or set(keywords(call)) - {"dtype", "shape", "name"}:
            self.refuse(st, "tf.placeholder without a dtype, or with unknown arguments")
        spec_shape = "None" if shape is None else code(shape)
        self.placeholders[name] = (code(dtype), spec_shape, len(self.placeholders))
        self.shapes[name] = shp.from_literal(shape)
        self.change(st, f"placeholder `{name}` → an argument of the step functions (tf.TensorSpec)")

    def dense(self, st, out: str, call: cst.Call, q: Optional[str], scope: str) -> None:
        if q in (DENSE, *SLIM_FC):
            inputs = arg(call, 0, "inputs")
            units = arg(call, 1, "units" if q == DENSE else "num_outputs")
            allowed = DENSE_KWARGS if q == DENSE else {"activation_fn", "scope"}
            extra = keywords(call) - allowed - {"inputs", "units", "num_outputs"}
            if extra or len([a for a in call.args if a.keyword is None]) > 2 or units is None or inputs is None:
                self.refuse(st, f"{q.rsplit('.', 1)[1]} arguments {sorted(extra) or 'beyond inputs/units'} are not mapped")
            kwargs = [f"{a.keyword.value}={code(a.value)}" for a in call.args
                      if a.keyword is not None and a.keyword.value in DENSE_KWARGS]
            if q != DENSE:  # slim: activation_fn defaults to relu; scope names the variables
                act = arg(call, None, "activation_fn")
                if act is None:
                    kwargs.append("activation=tf.nn.relu")
                elif not (isinstance(act, cst.Name) and act.value == "None"):
                    kwargs.append(f"activation={code(act)}")
                sc = arg(call, None, "scope")
                if sc is not None:
                    kwargs.append(f"name={code(sc)}")
            ctor = f"tf.keras.layers.Dense({', '.join([code(units), *kwargs])})"
            what = q.replace("tensorflow.", "tf.")
        else:
            inner = call.func
            if len(call.args) != 1 or call.args[0].keyword is not None:
                self.refuse(st, "a Keras layer called with more than its input is not converted")
            inputs = call.args[0].value
            ctor = code(inner)
            units = arg(inner, 0, "units")
            what = "tf.keras.layers.Dense"
        shape = shp.infer(inputs, self.shapes, self.names)
        if shape is None or shape[-1] is None:
            self.refuse(st, f"cannot infer the input width of `{code(inputs)}` for {what}: the Keras layer "
                            "could not be built in TF1's creation order")
        layer = self.new_name(f"{out}_layer")
        self.layers[layer] = out
        first = stmt(f"{layer} = {ctor}\n").with_changes(leading_lines=st.leading_lines)
        self.out += [first, stmt(f"{layer}.build((None, {shape[-1]}))\n")]
        self.shapes[out] = shape[:-1] + [code(units) if units is not None else None]
        given = arg(call, None, "scope" if q in SLIM_FC else "name")
        if given is not None and not isinstance(given, cst.SimpleString):
            self.refuse(st, f"the layer's {'scope' if q in SLIM_FC else 'name'} `{code(given)}` is not a string "
                            "literal: TF1's variable names (get_collection, checkpoints) are not known here")
        # TF1's variable-name prefix: tf.layers.dense → `dense[_k]` or its name; slim → `fully_connected[_k]`
        # or its scope (slim's default scope name, uniquified like TF1's variable_scope default_name)
        base = ("fully_connected" if q in SLIM_FC else "dense") if given is None else given.evaluated_value
        k = self.dense_counts.get((scope, base), 0)
        self.dense_counts[(scope, base)] = k + 1
        tf1_name = "/".join(p for p in (scope, base + (f"_{k}" if k else "")) if p)
        self.groups.append(Group(f"{layer}.trainable_variables", None, tf1_name))
        body = stmt(f"{out} = {layer}({code(inputs)})\n").with_changes(trailing_whitespace=st.trailing_whitespace)
        self.add_comp(st, [out], body)
        self.change(st, f"{what} → Keras layer `{layer}`, built once (kernel, then bias, as TF1 created them)")

    def variable(self, st, name, call, q, scope) -> None:
        trainable = arg(call, None, "trainable")
        is_trainable = trainable is None or (isinstance(trainable, cst.Name) and trainable.value == "True")
        if trainable is not None and not isinstance(trainable, cst.Name):
            self.refuse(st, "tf.Variable(trainable=<expression>) is not converted")
        if names_in(call) & self.graph_names:
            self.refuse(st, "a variable initialized from graph tensors is not converted")
        if q == VARIABLE:
            new = st
            var_name = arg(call, None, "name")
            tf1 = var_name.evaluated_value if isinstance(var_name, cst.SimpleString) else "Variable"
        else:
            vname, shape = arg(call, 0, "name"), arg(call, 1, "shape")
            dtype, init = arg(call, 2, "dtype"), arg(call, 3, "initializer")
            extra = keywords(call) - {"name", "shape", "dtype", "initializer", "trainable"}
            if extra or shape is None or not isinstance(vname, cst.SimpleString) or len([a for a in call.args if a.keyword is None]) > 4:
                self.refuse(st, f"tf.get_variable arguments {sorted(extra) or ''} are not mapped (partitioner, "
                                "regularizer, reuse, ...)")
            if init is None:
                init_code = "tf.keras.initializers.GlorotUniform()"  # TF1 get_variable's default
            else:
                iq = self.names.of(init.func) if isinstance(init, cst.Call) else None
                if iq is None or not iq.startswith("tensorflow."):
                    self.refuse(st, f"initializer `{code(init)}` is not in tf1clip's table")
                try:  # the TF 2 initializer drawing from the same distribution (TF 1's defaults written out)
                    tf2_name, tf2_init = to_tf2(iq, init)
                except NoTF2Mapping as exc:
                    self.refuse(st, f"initializer `{code(init)}`: {exc.reason}")
                init_code = tf2_name.replace("tensorflow.", "tf.", 1) + code(tf2_init)[len(code(tf2_init.func)):]
            dtype_code = "tf.float32" if dtype is None else code(dtype)
            value = f"{init_code}({code(shape)}, dtype={dtype_code})"
            parts = [value]
            if not is_trainable:
                parts.append("trainable=False")
            parts.append(f"name={code(vname)}")
            new = stmt(f"{name} = tf.Variable({', '.join(parts)})\n").with_changes(
                leading_lines=st.leading_lines, trailing_whitespace=st.trailing_whitespace)
            tf1 = vname.evaluated_value
            self.shapes[name] = shp.from_literal(shape)
            self.change(st, "tf.get_variable → tf.Variable with the same initializer")
        self.out.append(new)
        self.variables.add(name)
        if is_trainable:
            self.groups.append(Group(f"[{name}]", name, f"{scope}/{tf1}" if scope else tf1))

    def make_global_step(self, st, name, call) -> None:
        if call.args:
            self.refuse(st, "get_or_create_global_step(graph) is not converted")
        self.out.append(stmt(f'{name} = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")\n')
                        .with_changes(leading_lines=st.leading_lines, trailing_whitespace=st.trailing_whitespace))
        self.global_step = name
        self.variables.add(name)
        self.change(st, "the global step → an int64 tf.Variable, incremented after each update as in TF1")

    def trainable_list(self, st, name, groups) -> None:
        self.var_lists[name] = tuple(g.expr for g in groups)
        self.out.append(stmt(f"{name} = {self.trainables_expr(groups)}\n").with_changes(
            leading_lines=st.leading_lines, trailing_whitespace=st.trailing_whitespace))
        self.change(st, f"`{name}`: the trainable variables created so far, in creation order")

    def collection(self, st, name, call) -> None:
        key, scope = arg(call, 0, "key"), arg(call, 1, "scope")
        if not self.names.is_(key, "tensorflow.GraphKeys.TRAINABLE_VARIABLES") or (
                scope is not None and not isinstance(scope, cst.SimpleString)):
            self.refuse(st, "only tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=\"...\") is converted")
        if scope is None:
            return self.trainable_list(st, name, self.groups)
        pattern = scope.evaluated_value
        if re.escape(pattern) != pattern:
            self.refuse(st, "a get_collection scope that is a regular expression is not converted")
        selected = [g for g in self.groups if g.tf1_name.startswith(pattern)]
        if not selected:
            self.refuse(st, f"get_collection(scope={pattern!r}) selects no variable tf1clip knows the TF1 name of")
        return self.trainable_list(st, name, selected)

    def optimizer_code(self, st, row: OptimizerRow, call: cst.Call) -> tuple:
        given: dict = {}
        positional = [a for a in call.args if a.keyword is None]
        by_pos = {p.position: p for p in row.params if p.position is not None}
        for i, a in enumerate(call.args):
            if a.star:
                self.refuse(st, "*args/**kwargs to an optimizer are not converted")
            p = by_pos.get(positional.index(a)) if a.keyword is None else next(
                (p for p in row.params if p.tf1 == a.keyword.value), None)
            if p is None:
                self.refuse(st, f"{row.tf1.rsplit('.', 1)[1]} argument {a.keyword.value if a.keyword else i} is not mapped")
            given[p.tf1] = a.value
        parts, fixed = [], False
        for p in row.params:
            value = given.get(p.tf1)
            if p.keras is None:
                if value is not None and p.tf1 != "name" and code(value) != p.tf1_default:
                    self.refuse(st, f"{p.tf1}={code(value)} has no Keras 3 equivalent")
                continue
            if value is None:
                if p.tf1_default is not None:
                    parts.append(f"{p.keras}={p.tf1_default}")
                    fixed = True
                continue
            text = code(value)
            if isinstance(value, cst.Name) and value.value in self.schedules:
                if row.constant_lr_only:
                    self.refuse(st, f"{row.tf1.rsplit('.', 1)[1]} with a decaying learning rate: Keras' "
                                    "update differs from TF1's when the learning rate changes")
                text = f"lambda: {value.value}({self.schedules[value.value]})"
            if p.tf1 == "learning_rate" and a_positional(call, value):
                parts.insert(0, text)
            else:
                parts.append(f"{p.keras}={text}")
        return f"{row.keras}({', '.join(parts)})", fixed

    def optimizer(self, st, name, call, row: OptimizerRow) -> None:
        ctor, fixed = self.optimizer_code(st, row, call)
        line = stmt(f"{name} = {ctor}\n").with_changes(leading_lines=st.leading_lines,
                                                       trailing_whitespace=st.trailing_whitespace)
        if fixed or row.velocity_ones or row.constant_lr_only:
            line = line.with_changes(leading_lines=[*st.leading_lines, *comment_lines(row.why)])
        self.out.append(line)
        self.optimizers[name] = Opt(name, velocity_ones=row.velocity_ones,
                                    plain_sgd=row.tf1.endswith("GradientDescentOptimizer"), source=row.tf1)
        self.change(st, f"{row.tf1.replace('tensorflow.', 'tf.')} → {row.keras}: {row.why}")

    def keras_optimizer(self, st, name, call) -> None:
        kw = keywords(call)
        if "decay" in kw or any(a.star for a in call.args):
            self.refuse(st, "a Keras optimizer's `decay=` (tf-keras inverse-time decay) is not converted")
        unknown = kw - {"learning_rate", "lr", "clipvalue", "clipnorm", "global_clipnorm", "epsilon",
                        "beta_1", "beta_2", "momentum", "nesterov", "amsgrad", "name"}
        if unknown:
            self.refuse(st, f"Keras optimizer arguments {sorted(unknown)} are not mapped")
        opt = Opt(name, source=self.names.of(call.func) or "")
        if "clipvalue" in kw and ("clipnorm" in kw or "global_clipnorm" in kw):
            opt.clip_value = code(arg(call, None, "clipvalue"))
            call = call.with_changes(args=[a for a in call.args if not (a.keyword and a.keyword.value == "clipvalue")])
            self.change(st, "Keras 3 takes one of clipvalue/clipnorm: clipvalue moved before apply_gradients "
                            "(tf-keras clipped by value first, then by norm)")
        if "lr" in kw:
            call = call.with_changes(args=[a.with_changes(keyword=cst.Name("learning_rate")) if a.keyword and a.keyword.value == "lr" else a
                                           for a in call.args])
            self.change(st, "Keras optimizer `lr=` → `learning_rate=`")
        args = call.args
        if args:
            args = list(args[:-1]) + [args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        self.out.append(st.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))],
                                                         value=call.with_changes(args=args))]))
        self.optimizers[name] = opt
        self.change(st, "tf.keras optimizer kept: tf-keras' update rule is Keras 3's (Adam, SGD)")

    def clip_decorator(self, st, name, call) -> None:
        inner, clip = arg(call, 0, "optimizer"), arg(call, 1, "clip_norm")
        if not isinstance(inner, cst.Name) or inner.value not in self.optimizers or clip is None or len(call.args) != 2:
            self.refuse(st, "clip_gradients_by_norm of something other than a known optimizer is not converted")
        base = self.optimizers[inner.value]
        self.optimizers[name] = Opt(inner.value, base.keras, clip_global=code(clip), velocity_ones=base.velocity_ones,
                                    plain_sgd=base.plain_sgd, source=base.source)
        self.change(st, "contrib clip_gradients_by_norm → tf.clip_by_global_norm before apply_gradients")

    def exponential_decay(self, st, name, call) -> None:
        lr, step = arg(call, 0, "learning_rate"), arg(call, 1, "global_step")
        steps, rate, stair = arg(call, 2, "decay_steps"), arg(call, 3, "decay_rate"), arg(call, 4, "staircase")
        if not isinstance(step, cst.Name) or step.value not in self.variables or None in (lr, steps, rate) or "name" in keywords(call):
            self.refuse(st, "exponential_decay of something other than a step variable is not converted")
        parts = [code(lr), f"decay_steps={code(steps)}", f"decay_rate={code(rate)}"]
        if stair is not None:
            parts.append(f"staircase={code(stair)}")
        self.out.append(stmt(f"{name} = tf.keras.optimizers.schedules.ExponentialDecay({', '.join(parts)})\n")
                        .with_changes(leading_lines=st.leading_lines, trailing_whitespace=st.trailing_whitespace))
        self.schedules[name] = step.value
        self.change(st, f"tf.train.exponential_decay → a Keras schedule evaluated at `{step.value}`: "
                        f"`{name}({step.value})` (same formula, same float32 step)")

    # -- gradients and updates ---------------------------------------------------------------------
    def add_comp(self, st, defs, *body, grads=(), train=False, value=None, calls=0) -> Comp:
        uses = set()
        for b in body:
            uses |= names_in(b)
        c = Comp(len(self.comps), self.names.line(st), list(defs), uses, list(body), list(grads), train, value, calls)
        self.comps.append(c)
        return c

    def loss_name(self, st, node) -> str:
        if not isinstance(node, cst.Name) or node.value not in self.graph_names:
            self.refuse(st, "the differentiated loss must be a graph tensor bound to a name")
        return node.value

    def implicit_vars(self, st, var_list) -> str:
        if var_list is None:
            if not self.groups:
                self.refuse(st, "no trainable variables")
            return self.var_list_name(self.groups, st)
        if isinstance(var_list, cst.Name) and var_list.value in self.var_lists:
            return var_list.value
        self.refuse(st, "var_list must be a list of variables made by tf.trainable_variables()/get_collection")

    def is_zip_compute_gradients(self, value) -> bool:
        return (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "zip"
                and len(value.args) == 1 and value.args[0].star == "*" and isinstance(value.args[0].value, cst.Call)
                and isinstance(value.args[0].value.func, cst.Attribute)
                and value.args[0].value.func.attr.value == "compute_gradients"
                and isinstance(value.args[0].value.func.value, cst.Name)
                and value.args[0].value.func.value.value in self.optimizers)

    def check_gradient_args(self, st, call) -> None:
        extra = keywords(call) - {"loss", "var_list", "global_step"}
        if extra or len([a for a in call.args if a.keyword is None]) > 2:
            self.refuse(st, f"gradient arguments {sorted(extra) or 'beyond (loss, var_list)'} are not converted")

    def zip_compute_gradients(self, st, tnames, value) -> None:
        inner = value.args[0].value
        self.check_gradient_args(st, inner)
        loss = self.loss_name(st, arg(inner, 0, "loss"))
        grads, var_name = tnames
        var_list = arg(inner, 1, "var_list")
        if var_list is None and var_name not in self.taken - {var_name} and var_name not in self.var_lists:
            self.var_lists[var_name] = tuple(g.expr for g in self.groups)
            self.out.append(stmt(f"{var_name} = {self.trainables_expr(self.groups)}\n"))
            variables = var_name
        else:
            variables = self.implicit_vars(st, var_list)
            if variables != var_name:
                self.out.append(stmt(f"{var_name} = {variables}\n"))
                self.var_lists[var_name] = self.var_lists[variables]
        body = stmt(f"{grads} = tape.gradient({loss}, {variables})\n").with_changes(
            leading_lines=st.leading_lines, trailing_whitespace=st.trailing_whitespace)
        self.add_comp(st, [grads], body, grads=[loss], calls=1)
        self.change(st, "compute_gradients → tape.gradient")

    def compute_gradients(self, st, target, call, owner) -> None:
        self.check_gradient_args(st, call)
        loss = self.loss_name(st, arg(call, 0, "loss"))
        variables = self.implicit_vars(st, arg(call, 1, "var_list"))
        body = stmt(f"{code(target)} = list(zip(tape.gradient({loss}, {variables}), {variables}))\n").with_changes(
            leading_lines=st.leading_lines, trailing_whitespace=st.trailing_whitespace)
        self.add_comp(st, target_names(target), body, grads=[loss], calls=1)
        self.change(st, "compute_gradients → (tape.gradient, variable) pairs")

    def update_lines(self, opt: Opt, pairs: str, global_step) -> list:
        lines = [f"{opt.name}.apply_gradients({pairs})"]
        if global_step is not None:
            if not isinstance(global_step, cst.Name) or global_step.value not in self.variables:
                raise Refuse(0, "global_step must be a variable")
            lines.append(f"{global_step.value}.assign_add(1)")
        return lines

    def velocity_ones(self, st, opt: Opt, variables: str) -> None:
        if opt.velocity_ones:
            self.built.add(opt.name)
            self.out += [stmt(f"{opt.name}.build({variables})\n"),
                         stmt(f"for slot in {opt.name}.variables:  # TF1 RMSProp starts the mean-square slot at ones\n"
                              f"    if slot.path.endswith(\"_velocity\"):\n        slot.assign(tf.ones_like(slot))\n")]
            opt.velocity_ones = False

    def apply_gradients(self, st, name, call, owner) -> None:
        opt = self.optimizers[owner]
        pairs, gs = arg(call, 0, "grads_and_vars"), arg(call, 1, "global_step")
        if set(keywords(call)) - {"grads_and_vars", "global_step"} or opt.clip_global or opt.clip_value:
            self.refuse(st, "apply_gradients with a name, or through a clipping wrapper, is not converted")
        if opt.velocity_ones:
            self.refuse(st, "RMSProp through apply_gradients: the variable list for its slots is not known")
        self.check_sparse(st, opt)
        zipped = pairs if isinstance(pairs, cst.Call) and isinstance(pairs.func, cst.Name) and pairs.func.value == "zip" else None
        known = arg(zipped, 1, "") if zipped is not None and len(zipped.args) == 2 else None
        self.updates.setdefault(opt.name, []).append(
            known.value if isinstance(known, cst.Name) and known.value in self.var_lists else None)
        lines = self.update_lines(opt, code(pairs), gs)
        body = [stmt(l + "\n") for l in lines]
        body[0] = body[0].with_changes(leading_lines=st.leading_lines, trailing_whitespace=st.trailing_whitespace)
        self.add_comp(st, [name], *body, train=True)
        self.change(st, f"apply_gradients → {opt.name}.apply_gradients" + (" + global step increment" if gs else ""))

    def minimize(self, st, name, call, owner) -> None:
        opt = self.optimizers[owner]
        self.check_gradient_args(st, call)
        loss = self.loss_name(st, arg(call, 0, "loss"))
        variables = self.implicit_vars(st, arg(call, 2, "var_list"))
        gs = arg(call, 1, "global_step")
        self.train_body(st, name, opt, loss, variables, gs, clip_fn=None, value=None)

    def get_updates(self, st, name, call, owner) -> None:
        opt = self.optimizers[owner]
        loss = self.loss_name(st, arg(call, 0, "loss"))
        params = arg(call, 1, "params")
        variables = self.implicit_vars(st, params)
        self.train_body(st, name, opt, loss, variables, None, clip_fn=None, value=None)

    def check_sparse(self, st, opt: Opt) -> None:
        if self.sparse and not opt.plain_sgd:
            self.refuse(st, "a gradient here is an IndexedSlices (embedding_lookup/gather) and Keras 3 "
                            "optimizers other than plain SGD update repeated rows differently from TF1")

    def train_body(self, st, name, opt: Opt, loss, variables, gs, clip_fn, value, check_numerics=False) -> None:
        self.check_sparse(st, opt)
        self.updates.setdefault(opt.name, []).append(variables)
        grads = self.new_name("gradients")
        lines = [f"{grads} = tape.gradient({loss}, {variables})"]
        if opt.clip_global:
            lines.append(f"{grads}, _ = tf.clip_by_global_norm({grads}, {opt.clip_global})")
        if opt.clip_value:
            bound = opt.clip_value if re.fullmatch(r"[\w.]+", opt.clip_value) else f"({opt.clip_value})"
            lines.append(f"# tf-keras clipped by value first, then by norm (Keras 3 takes one of the two)\n"
                         f"{grads} = [None if g is None else tf.clip_by_value(g, -{bound}, {bound}) for g in {grads}]")
        if clip_fn is not None and not clip_fn.startswith("CALL:"):
            lines.append(clip_fn.format(grads=grads))
        pairs = f"zip({grads}, {variables})"
        if clip_fn is not None and clip_fn.startswith("CALL:"):
            pairs = f"{clip_fn[5:]}(list(zip({grads}, {variables})))"
        lines += self.update_lines(opt, pairs, gs)
        if check_numerics:
            lines.append(f'{name} = tf.debugging.check_numerics({loss}, "LossTensor is inf or nan")')
        body = [stmt(l + "\n") for l in lines]
        body[0] = body[0].with_changes(leading_lines=st.leading_lines)
        self.add_comp(st, [name], *body, grads=[loss], train=True, value=value, calls=1)
        self.velocity_ones(st, opt, variables)

    def optimize_loss(self, st, name, call) -> None:
        allowed = {"loss", "global_step", "learning_rate", "optimizer", "clip_gradients", "variables", "summaries", "name"}
        extra = keywords(call) - allowed
        if extra or len([a for a in call.args if a.keyword is None]) > 4:
            self.refuse(st, f"optimize_loss arguments {sorted(extra) or 'beyond the first four'} are not converted "
                            "(noise, multipliers, decay_fn, update_ops)")
        loss = self.loss_name(st, arg(call, 0, "loss"))
        gs, lr = arg(call, 1, "global_step"), arg(call, 2, "learning_rate")
        kind, clip = arg(call, 3, "optimizer"), arg(call, None, "clip_gradients")
        if not isinstance(gs, cst.Name) or gs.value not in self.variables or lr is None:
            self.refuse(st, "optimize_loss needs a global step variable and a learning rate here")
        if isinstance(kind, cst.SimpleString) and kind.evaluated_value in OPTIMIZE_LOSS_NAMES:
            row = OPTIMIZERS[OPTIMIZE_LOSS_NAMES[kind.evaluated_value]]
        elif self.names.of(kind) in OPTIMIZERS:
            row = OPTIMIZERS[self.names.of(kind)]
        else:
            self.refuse(st, f"optimize_loss(optimizer={code(kind) if kind else None}) is not converted")
        opt_name = self.new_name("optimizer")
        ctor, _ = self.optimizer_code(st, row, cst.Call(func=cst.Name("x"), args=[cst.Arg(lr)]))
        self.out.append(stmt(f"{opt_name} = {ctor}\n").with_changes(
            leading_lines=[*st.leading_lines, *comment_lines(f"optimize_loss's optimizer. {row.why}")]))
        opt = Opt(opt_name, velocity_ones=row.velocity_ones, plain_sgd=row.tf1.endswith("GradientDescentOptimizer"),
                  source=row.tf1)
        self.optimizers[opt_name] = opt
        variables = self.implicit_vars(st, arg(call, None, "variables"))
        clip_fn = None
        if clip is not None:
            if isinstance(clip, (cst.Float)) or (isinstance(clip, cst.Name) and self.is_float_constant(clip.value)):
                clip_fn = "{grads}, _ = tf.clip_by_global_norm({grads}, " + code(clip) + ")"
            elif isinstance(clip, cst.Name) and self.is_module_function(clip.value):
                clip_fn = "CALL:" + clip.value
            else:
                self.refuse(st, f"optimize_loss(clip_gradients={code(clip)}): TF1 raised for an int or a tensor; "
                                "only a float or a module-level function is converted")
        self.train_body(st, name, opt, loss, variables, gs, clip_fn, value=loss)
        self.change(st, "optimize_loss → tape.gradient, its clipping, apply_gradients and the global step "
                        "increment; fetching it gives the loss, as in TF1")

    def create_train_op(self, st, name, call) -> None:
        extra = keywords(call) - {"total_loss", "optimizer", "clip_gradient_norm", "global_step"}
        if extra or len([a for a in call.args if a.keyword is None]) > 2:
            self.refuse(st, f"create_train_op arguments {sorted(extra)} are not converted")
        loss = self.loss_name(st, arg(call, 0, "total_loss"))
        owner = arg(call, 1, "optimizer")
        if not isinstance(owner, cst.Name) or owner.value not in self.optimizers:
            self.refuse(st, "create_train_op of an unknown optimizer")
        gs = arg(call, None, "global_step")
        if gs is None:
            gs = cst.Name(self.global_step) if self.global_step else None
        clip = arg(call, None, "clip_gradient_norm")
        clip_fn = None
        if clip is not None:
            clip_fn = ("# slim's clip_gradient_norm: per tensor; an IndexedSlices is clipped on its .values\n"
                       "{grads} = [None if g is None else tf.clip_by_norm(g, " + code(clip) + ") for g in {grads}]")
        variables = self.implicit_vars(st, None)
        self.train_body(st, name, self.optimizers[owner.value], loss, variables, gs, clip_fn, value=name,
                        check_numerics=True)
        self.change(st, "create_train_op → tape.gradient, per-tensor clip_by_norm, apply_gradients; fetching "
                        "it gives the loss (checked for inf/NaN), as in TF1")

    def slot_read(self, st, call: cst.Call, loop_iter) -> str:
        """`opt.get_slot(v, "m")` → the Keras 3 optimizer variable with the same value, as code.

        TF1 created the slots when the update op was built (get_slot returns None before, or
        for a variable the optimizer does not update): the Keras optimizer is built explicitly
        on the one variable list it updates, and `v` must range over (part of) that list.
        """
        owner = call.func.value.value
        opt = self.optimizers[owner]
        var, slot = arg(call, 0, "var"), arg(call, 1, "name")
        if len(call.args) != 2 or keywords(call) - {"var", "name"} or not isinstance(slot, cst.SimpleString):
            self.refuse(st, "get_slot(var, \"name\") with other arguments is not converted")
        row = SLOTS.get((opt.source, slot.evaluated_value))
        if row is None:
            short = opt.source.replace("tensorflow.", "tf.") or "this optimizer"
            self.refuse(st, f"`{code(call)}`: no Keras 3 optimizer variable of {short} is known to hold the same "
                            "value (tf1clip's slot table)")
        lists = self.updates.get(opt.name, [])
        if not lists:
            self.refuse(st, f"`{code(call)}` before `{owner}`'s update op: TF1 has no slot there (None)")
        if None in lists or len(set(lists)) != 1:
            self.refuse(st, f"`{owner}` updates several (or unknown) variable lists: its Keras 3 slots cannot be "
                            "built up front for get_slot")
        variables = lists[0]
        if not isinstance(var, cst.Name) or loop_iter is None:
            self.refuse(st, "get_slot of a variable other than a comprehension's loop variable over a variable list "
                            "is not converted")
        if isinstance(loop_iter, cst.Name) and loop_iter.value in self.var_lists:
            ranged = self.var_lists[loop_iter.value]
        elif isinstance(loop_iter, cst.Call) and self.names.is_(loop_iter.func, *TRAINABLES) and not loop_iter.args:
            ranged = tuple(g.expr for g in self.groups)
        else:
            self.refuse(st, f"get_slot over `{code(loop_iter)}`: not a known variable list")
        if not set(ranged) <= set(self.var_lists[variables]):
            self.refuse(st, f"get_slot over variables `{owner}` does not update: TF1 returns None for them")
        key = (opt.name, row.slot)
        if key not in self.slot_maps:
            if opt.name not in self.built:
                self.built.add(opt.name)
                self.out.append(stmt(f"{opt.name}.build({variables})\n").with_changes(
                    leading_lines=comment_lines(f"{opt.name}'s slots exist from here, as TF1 made them with the update op")))
            name = self.new_name(f"{opt.name}_{row.slot}")
            indent = " " * len(f"{name} = dict(zip(")
            self.out.append(stmt(
                f"{name} = dict(zip(map(id, {variables}),\n{indent}[s for s in {opt.name}.variables "
                f"if s.path.endswith(\"{row.suffix}\")]))\n").with_changes(
                leading_lines=comment_lines(f"TF1 {owner}.get_slot(v, \"{row.slot}\"): {row.why}")))
            self.slot_maps[key] = name
            self.change(st, f"get_slot(v, \"{row.slot}\") → `{name}[id(v)]`: {row.why}")
        return f"{self.slot_maps[key]}[id({var.value})]"

    # -- the LOSSES collection and build-time prints ------------------------------------------------
    def mean_squared_error(self, st, call) -> None:
        """`tf.losses.mean_squared_error(labels, predictions)` as a statement: its loss goes to LOSSES.

        TF1 (losses_impl): both cast to float32, `squared_difference(predictions, labels)`, then
        compute_weighted_loss with weights=1.0 and SUM_BY_NONZERO_WEIGHTS: reduce_sum(losses * 1.0)
        divided (div_no_nan) by the number of elements with a nonzero weight (_num_present: in a
        graph the weight is a tensor, so reduce_sum of the 1.0 broadcast to the losses' shape).
        """
        labels, predictions = arg(call, 0, "labels"), arg(call, 1, "predictions")
        if len(call.args) != 2 or keywords(call) - {"labels", "predictions"} or labels is None or predictions is None:
            self.refuse(st, "tf.losses.mean_squared_error with weights, a scope, a loss collection or a reduction "
                            "is not converted")
        for node in (labels, predictions):
            if not isinstance(node, cst.Name) or node.value not in self.graph_names:
                self.refuse(st, "tf.losses.mean_squared_error of something other than graph tensors bound to names")
        sl, sp = self.shapes.get(labels.value), self.shapes.get(predictions.value)
        if sl is None or sp is None or sl != sp:
            self.refuse(st, "tf.losses.mean_squared_error: the static shapes of labels and predictions are not "
                            "known to be equal (TF1 checked them when it built the graph)")
        if self.collected_losses:
            self.refuse(st, "several losses in the LOSSES collection are not converted")
        self.check_loss_collections(st)
        squared = self.new_name("squared_error")
        name = self.new_name("mean_squared_error")
        why = (f"`{code(call)}` (added to the LOSSES collection): TF1 cast both to float32, summed the squared "
               "differences (weights=1.0) and divided by the number of elements with a nonzero weight, all of "
               "them, summed as ones (SUM_BY_NONZERO_WEIGHTS, div_no_nan: 0 for an empty batch)")
        body = [stmt(f"{squared} = tf.math.squared_difference(tf.cast({predictions.value}, tf.float32), "
                     f"tf.cast({labels.value}, tf.float32))\n").with_changes(leading_lines=comment_lines(why)),
                stmt(f"{name} = tf.math.divide_no_nan(tf.reduce_sum({squared}), "
                     f"tf.reduce_sum(tf.ones_like({squared})))\n")]
        self.add_comp(st, [squared, name], *body)
        self.shapes[name] = []
        self.collected_losses.append(name)
        self.change(st, "tf.losses.mean_squared_error → its TF1 formula (sum of squared differences over the "
                        "number of elements)")

    def check_loss_collections(self, st) -> None:
        """The LOSSES/REGULARIZATION_LOSSES collections hold only what mean_squared_error statements put there."""
        for n in walk(self.module):
            if isinstance(n, cst.Call):
                q = self.names.of(n.func) or ""
                if q.startswith("tensorflow.losses.") and q not in (MSE, TOTAL_LOSS) or "collection" in q \
                        and q != GET_COLLECTION or "regulariz" in q:
                    self.refuse(st, f"`{q.replace('tensorflow.', 'tf.')}` also reads or writes the loss collections: "
                                    "not converted")
                if q == MSE and not any(isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr)
                                        and s.body[0].value is n for s in self.module.body):
                    self.refuse(st, "tf.losses.mean_squared_error used as a value (its loss also goes to the "
                                    "LOSSES collection) is not converted")
                if any(a.keyword is not None and "regularizer" in a.keyword.value for a in n.args):
                    self.refuse(st, "a regularizer adds to the REGULARIZATION_LOSSES collection "
                                    "(read by get_total_loss): not converted")
            if isinstance(n, cst.Attribute) and n.attr.value in ("LOSSES", "REGULARIZATION_LOSSES"):
                self.refuse(st, f"`{code(n)}`: the loss collections are not converted")

    def total_loss(self, st, name, call) -> None:
        if call.args:
            self.refuse(st, "tf.losses.get_total_loss with arguments is not converted")
        if len(self.collected_losses) != 1:
            self.refuse(st, "tf.losses.get_total_loss of an empty LOSSES collection is not converted")
        self.check_loss_collections(st)
        loss = self.collected_losses[0]
        why = (f"tf.losses.get_total_loss(): add_n of the LOSSES collection (only `{loss}`) and the regularization "
               "losses (none here); add_n of one tensor is that tensor")
        self.add_comp(st, [name], stmt(f"{name} = {loss}\n").with_changes(
            leading_lines=comment_lines(why), trailing_whitespace=st.trailing_whitespace))
        self.shapes[name] = []
        self.change(st, f"tf.losses.get_total_loss() → `{loss}`, the one loss in the collection")

    def gradient_type_print(self, st, call) -> bool:
        """A build-time `print` of the Python types of `tf.gradients` results (IndexedSlices or not).

        TF1 ran it once, when the graph was built; TF2 has gradients only inside a traced function:
        the print goes into a `tf.function` computing those gradients, traced (not run) once where
        TF1's Session started. Only `isinstance(g, tf.IndexedSlices)` over a gradient list is
        accepted: the type comes from the same gradient functions (a gather's is IndexedSlices)
        in both; printing a tensor itself would show graph-specific names.
        """
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "print"):
            return False
        if self.is_module_function("print"):
            return False
        graph = names_in(call) & self.graph_names
        if not graph or not graph <= self.gradient_lists:
            return False
        loop_vars, allowed = set(), 0
        for n in walk(call):
            if isinstance(n, cst.CompFor) and isinstance(n.iter, cst.Name) and n.iter.value in graph:
                if not isinstance(n.target, cst.Name) or n.target.value in self.graph_names:
                    return False
                loop_vars.add(n.target.value)
                allowed += 2
        for n in walk(call):
            if (isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "isinstance"
                    and len(n.args) == 2 and isinstance(n.args[0].value, cst.Name) and n.args[0].value.value in loop_vars
                    and self.names.is_(n.args[1].value, "tensorflow.IndexedSlices")):
                allowed += 1
        total = sum(1 for n in walk(call) if isinstance(n, cst.Name) and n.value in graph | loop_vars)
        if total != allowed:
            return False
        if self.build_prints:
            self.refuse(st, "several build-time prints are not converted")
        fname = self.new_name("build_time_print")
        comps = self.slice(st, sorted(graph))
        printed = Comp(len(self.comps), self.names.line(st), [], names_in(st),
                       [st.with_changes(leading_lines=comment_lines(
                           "TF1 printed this once, when it built the graph: here when the function is traced"))],
                       train=True)
        comps = comps + [printed]
        params = sorted({n for c in comps for n in c.uses} & set(self.placeholders),
                        key=lambda n: self.placeholders[n][2])
        self.build_prints.append((fname, comps, params))
        self.change(st, f"the build-time print of gradient types → printed when `{fname}` (the graph up to the "
                        "gradients) is traced, once, before the loop")
        return True

    def after_build_print(self, st) -> None:
        """Nothing between a build-time print and the Session may print (the print moves to the Session)."""
        if isinstance(st, cst.With) and len(st.items) == 1 and isinstance(st.items[0].item, cst.Call) \
                and self.names.is_(st.items[0].item.func, *SESSIONS):
            return
        if isinstance(st, cst.With):
            return  # its statements come here one by one
        expr_stmt = isinstance(st, cst.SimpleStatementLine) and any(isinstance(b, cst.Expr) for b in st.body)
        calls_own = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and self.is_module_function(n.func.value)
                        for n in walk(st))
        if expr_stmt or "print" in names_in(st) or calls_own or isinstance(st, (cst.FunctionDef, cst.ClassDef)):
            self.refuse(st, "a statement between a build-time print and the Session (the print now happens "
                            "where the Session started): not converted")

    def graph_state_built_in(self, st) -> list:
        return graph_state_built_in(self.names, st)

    def is_float_constant(self, name: str) -> bool:
        for st in self.out:
            if isinstance(st, cst.SimpleStatementLine) and isinstance(st.body[0], cst.Assign):
                a = st.body[0]
                if code(a.targets[0].target) == name:
                    return isinstance(a.value, cst.Float)
        return False

    def is_module_function(self, name: str) -> bool:
        return any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in self.out)

    def generic(self, st, small: cst.Assign, tnames) -> None:
        for n in walk(small):
            if isinstance(n, cst.Call):
                q = self.names.of(n.func) or ""
                if q.startswith("tensorflow.examples.tutorials"):
                    self.refuse(st, "tensorflow.examples.tutorials (input_data) has no TF 2 module: the "
                                    "reader would have to be written into the script")
                if q.startswith(VARIABLE_MAKERS):
                    self.refuse(st, f"`{q.replace('tensorflow.', 'tf.')}` creates variables inside the graph "
                                    "(a TF1 cell or layer with no exact Keras 3 twin in tf1clip's table)")
                if q in SPARSE_READS:
                    self.sparse = True
            if isinstance(n, cst.Attribute) and n.attr.value == "get_slot" and not (
                    isinstance(n.value, cst.Name) and n.value.value in self.optimizers):
                self.refuse(st, "get_slot of something other than an optimizer made here is not converted")
            if (isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value in self.optimizers
                    and n.attr.value != "get_slot"):
                self.refuse(st, f"`{code(n)}` reads optimizer internals that Keras 3 does not have")
            if isinstance(n, cst.Name) and n.value in self.optimizers and not any(
                    isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute) and c.func.value is n for c in walk(small)):
                self.refuse(st, f"the optimizer `{n.value}` used as a value is not converted")
        rewriter = _Rewrite(self, st)
        new = st.visit(rewriter)
        self.add_comp(st, tnames, new, grads=rewriter.targets, calls=len(rewriter.targets))
        if isinstance(small.value, cst.Call) and self.names.is_(small.value.func, GRADIENTS) and len(tnames) == 1:
            self.gradient_lists.add(tnames[0])
        s = shp.infer(small.value, self.shapes, self.names)
        if s is not None and len(tnames) == 1:
            self.shapes[tnames[0]] = s

    # -- the session ---------------------------------------------------------------------------------
    def session_block(self, st: cst.With) -> None:
        self.session_seen = True
        item = st.items[0]
        if item.asname is None or not isinstance(item.asname.name, cst.Name):
            self.refuse(st, "`with tf.Session():` without `as sess` is not converted")
        sess = item.asname.name.value
        body = list(st.body.body)
        rewriter = _Session(self, sess)
        new_body = []
        for child in body:
            new = child.visit(rewriter)
            if isinstance(new, cst.RemovalSentinel) or new is cst.RemoveFromParent():
                continue
            new_body.append(new)
        new_body = rewriter.drop_feed_dicts(new_body)
        traces = []
        for fname, comps, params in self.build_prints:
            self.function_defs.insert(len(traces), self.build_function(fname, comps, params, []))
            traces.append(stmt(f"{fname}.get_concrete_function()  # traced once, not run: TF1 printed this "
                               "when it built the graph\n"))
        steps = [d.name.value for d in self.function_defs[len(traces):]]
        new_body = traces + new_body
        defs = self.function_defs
        defs = [d.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]) for d in defs]
        if new_body:
            new_body[0] = new_body[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()] if defs else [cst.EmptyLine()])
        self.out += defs + concrete_calls(steps, new_body)
        self.change(st, "the Session block → calls of the step functions; the Session is gone")

    def function_for(self, node, tensors: list, feeds: dict, train: bool) -> tuple:
        """The name of the tf.function computing `tensors` from `feeds` (made on first use), and its params."""
        comps = self.slice(node, tensors)
        params = sorted({n for c in comps for n in c.uses} & set(self.placeholders), key=lambda n: self.placeholders[n][2])
        for p in params:
            if p not in feeds:
                self.refuse(node, f"placeholder `{p}` is needed but not fed")
        key = (tuple(tensors), tuple(params))
        if key in self.functions:
            return self.functions[key], params
        if train:
            fname = self.new_name("train_step")
        else:
            fname = self.new_name("compute_" + "_and_".join(t for t in tensors if t)[:40])
        self.functions[key] = fname
        self.function_defs.append(self.build_function(fname, comps, params, tensors))
        return fname, params

    def slice(self, node, tensors) -> list:
        need, chosen = set(tensors), []
        for c in reversed(self.comps):
            hit = need & set(c.defs)
            if hit:
                chosen.append(c)
                need -= set(c.defs)
                need |= c.uses & ({d for e in self.comps[:c.index] for d in e.defs})
        chosen.reverse()
        return chosen

    def build_function(self, fname, comps, params, tensors) -> cst.FunctionDef:
        by_def = {}
        ordered = []
        train = {c.index for c in comps if c.train}
        after = set()
        for c in comps:  # comps that depend on an update run after everything else
            deps = {by_def[u] for u in c.uses if u in by_def}
            if c.index in train or deps & after:
                after.add(c.index)
            for d in c.defs:
                by_def[d] = c.index
        losses = {g for c in comps for g in c.grads}
        tape_set, need = set(), set(losses)
        for c in reversed(comps):
            if c.grads or c.index in after:
                continue
            if need & set(c.defs):
                tape_set.add(c.index)
                need |= c.uses
        pre = [c for c in comps if c.index not in after]
        ordered = [c for c in pre if c.index in tape_set] + [c for c in pre if c.index not in tape_set] + \
                  [c for c in comps if c.index in after]
        def tidy(st):
            lines = [l for l in st.leading_lines if l.comment is not None]
            return st.with_changes(leading_lines=lines)

        for c in comps:
            c.body = [tidy(s) for s in c.body]
        body = []
        if tape_set:
            calls = sum(c.gradient_calls for c in comps)
            opts = "persistent=True" if calls > 1 else ""
            inner = [s for c in ordered if c.index in tape_set for s in c.body]
            body.append(cst.With(items=[cst.WithItem(expr(f"tf.GradientTape({opts})"),
                                                     asname=cst.AsName(cst.Name("tape")))],
                                 body=cst.IndentedBlock(body=inner)))
        elif losses:
            raise Refuse(comps[0].line, "a gradient of a loss that does not depend on the variables")
        body += [s for c in ordered if c.index not in tape_set for s in c.body]
        values = []
        for t in tensors:
            c = next(c for c in reversed(comps) if t in c.defs)
            values.append(None if c.train and c.value is None else c.value if c.value else t)
        returned = [v for v in values if v is not None]
        if returned:
            body.append(stmt(f"return {', '.join(returned)}\n"))
        signature = ", ".join(f"tf.TensorSpec({self.placeholders[p][1]}, {self.placeholders[p][0]})" for p in params)
        decorator = f"tf.function(input_signature=[{signature}])" if params else "tf.function"
        return cst.FunctionDef(name=cst.Name(fname), params=cst.Parameters([cst.Param(cst.Name(p)) for p in params]),
                               body=cst.IndentedBlock(body=body), decorators=[cst.Decorator(expr(decorator))])


CONCRETE_COMMENT = ("The steps are called through their concrete functions, traced here once (an input_signature "
                    "allows one graph): calling the decorated function matches its arguments to a trace every "
                    "time, about 0.1 ms a call.")


def concrete_calls(fnames: list, body: list) -> list:
    """`body` with `f = f.get_concrete_function()` for each step function in `fnames`, put
    before the first statement that calls one (so tracing runs where the first call did, after
    everything the session block did before it). Same graph, same inputs accepted (the
    signature converts feeds as `feed_dict` did); only the per-call dispatch is cheaper."""
    used = [f for f in fnames if any(f in names_in(s) for s in body)]
    if not used:
        return body
    first = next(i for i, s in enumerate(body) if names_in(s) & set(used))
    lines = [stmt(f"{f} = {f}.get_concrete_function()\n") for f in used]
    comment = comment_lines(CONCRETE_COMMENT)
    lines[0] = lines[0].with_changes(leading_lines=[*body[first].leading_lines, *comment])
    body = list(body)
    body[first] = body[first].with_changes(leading_lines=[])
    return body[:first] + lines + body[first:]


def graph_state_built_in(names: Names, st) -> list:
    """What `st` (a def or class) creates that lives in the TF1 graph: placeholders, variables,
    layers, optimizers, update ops, the global step, symbolic gradients (sorted, unique)."""
    found = set()
    state = {PLACEHOLDER: "placeholders", GET_VARIABLE: "variables", VARIABLE: "variables",
             DENSE: "layers", GRADIENTS: "tf.gradients", EXP_DECAY: "a learning-rate decay",
             **{q: "the global step" for q in GLOBAL_STEP}, **{q: "an optimizer" for q in OPTIMIZERS},
             **{q: "tf.trainable_variables()" for q in TRAINABLES}}
    for n in walk(st):
        if not isinstance(n, cst.Call):
            continue
        q = names.of(n.func) or ""
        if q in state:
            found.add(state[q])
        elif q.startswith(VARIABLE_MAKERS):
            found.add(q.replace("tensorflow.", "tf."))
        elif isinstance(n.func, cst.Attribute) and n.func.attr.value in ("minimize", "apply_gradients"):
            found.add(f"an update op (.{n.func.attr.value})")
    return sorted(found)


def comment_lines(text: str, width: int = 96) -> list:
    """`text` as `# ...` lines of at most `width` characters."""
    lines, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width - 2:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return [cst.EmptyLine(comment=cst.Comment("# " + l)) for l in lines]


def a_positional(call: cst.Call, value) -> bool:
    return any(a.keyword is None and a.value is value for a in call.args)


class _Rewrite(NameTransformer):
    """Inside a graph computation: tf.gradients → tape.gradient, schedule tensors → schedule(step)."""

    def __init__(self, conv: Converter, st):
        self.conv, self.st, self.targets = conv, st, []
        super().__init__()
        self._loops: list = []  # the CompFor chains of the comprehensions we are in

    def _enter(self, node):
        self._loops.append(node.for_in)

    def _leave(self, original, updated):
        self._loops.pop()
        return updated

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _enter
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _leave

    def loop_iter(self, name: str):
        """What `name` ranges over in an enclosing comprehension (innermost first), else None."""
        for for_in in reversed(self._loops):
            while for_in is not None:
                if isinstance(for_in.target, cst.Name) and for_in.target.value == name:
                    return for_in.iter
                for_in = for_in.inner_for_in
        return None

    def leave_Name(self, original, updated):
        if self.skipped(original):
            return updated
        step = self.conv.schedules.get(original.value)
        return expr(f"{original.value}({step})") if step else updated

    def leave_Call(self, original, updated):
        if self.conv.names.is_(original.func, GRADIENTS):
            if len(original.args) != 2 or any(a.keyword not in (None,) and a.keyword.value not in ("ys", "xs") for a in original.args):
                self.conv.refuse(self.st, "tf.gradients with grad_ys, stop_gradients or other options is not converted")
            loss = self.conv.loss_name(self.st, arg(original, 0, "ys"))
            self.targets.append(loss)
            return updated.with_changes(func=expr("tape.gradient"))
        if (isinstance(original.func, cst.Attribute) and original.func.attr.value == "get_slot"
                and isinstance(original.func.value, cst.Name) and original.func.value.value in self.conv.optimizers):
            var = arg(original, 0, "var")
            loop = self.loop_iter(var.value) if isinstance(var, cst.Name) else None
            return expr(self.conv.slot_read(self.st, original, loop))
        if self.conv.names.is_(original.func, *TRAINABLES):
            if original.args:
                self.conv.refuse(self.st, "tf.trainable_variables(scope) is not converted")
            # TF1: the trainable variables created so far, in creation order
            return expr(self.conv.var_list_name(self.conv.groups, self.st))
        return updated


class _Session(cst.CSTTransformer):
    """Inside the Session block: sess.run(...) → step calls or variable snapshots."""

    def __init__(self, conv: Converter, sess: str):
        self.conv, self.sess = conv, sess
        self.feed_dicts: dict = {}
        self.inlined: set = set()
        self._handled: set = set()

    # feed dicts bound to a name: `feed = {x: ..., y: ...}`
    def visit_Assign(self, node):
        if (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(node.value, cst.Dict)
                and node.value.elements and all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name)
                                                and e.key.value in self.conv.placeholders for e in node.value.elements)):
            for e in node.value.elements:
                if not isinstance(e.value, (cst.Name, cst.Subscript, cst.Attribute)):
                    self.conv.refuse(node, "a feed value that is not a name, attribute or subscript is not converted")
            self.feed_dicts[node.targets[0].target.value] = node.value
        return True

    def feeds_of(self, node, call) -> dict:
        fd = arg(call, 1, "feed_dict")
        if set(keywords(call)) - {"fetches", "feed_dict"}:
            self.conv.refuse(node, "sess.run with options or run_metadata is not converted")
        if fd is None:
            return {}
        if isinstance(fd, cst.Name) and fd.value in self.feed_dicts:
            self.inlined.add(fd.value)
            fd = self.feed_dicts[fd.value]
        if not isinstance(fd, cst.Dict):
            self.conv.refuse(node, "a feed_dict that is not a dict literal (or a name bound to one) is not converted")
        out = {}
        for e in fd.elements:
            if not isinstance(e, cst.DictElement) or not isinstance(e.key, cst.Name) or e.key.value not in self.conv.placeholders:
                self.conv.refuse(node, "only placeholders can be fed")
            out[e.key.value] = e.value
        return out

    def is_run(self, node) -> bool:
        return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
                and node.func.value.value == self.sess and node.func.attr.value == "run")

    def classify(self, node, fetch):
        c = self.conv
        if isinstance(fetch, cst.Name):
            n = fetch.value
            if n in c.init_ops:
                return ("init", n)
            if n in c.variables:
                return ("var", n)
            if n in c.var_lists:
                return ("vars", n)
            if n in c.schedules:
                return ("sched", n)
            if n in c.graph_names:
                return ("tensor", n)
        if isinstance(fetch, cst.Call) and c.names.is_(fetch.func, *INITIALIZERS):
            return ("init", None)
        if isinstance(fetch, cst.Call) and c.names.is_(fetch.func, *TRAINABLES) and not fetch.args:
            key = tuple(g.expr for g in c.groups)
            for name, value in c.var_lists.items():
                if value == key:
                    return ("vars", name)
            return ("varexpr", c.trainables_expr(c.groups))
        c.refuse(node, f"sess.run of `{code(fetch)}` is not converted")

    def translate(self, node, call, targets):
        """(new value expression or None to drop the statement, new targets)."""
        fetch = arg(call, 0, "fetches")
        structured = isinstance(fetch, (cst.List, cst.Tuple))
        items = [self.classify(node, e.value) for e in fetch.elements] if structured else [self.classify(node, fetch)]
        feeds = self.feeds_of(node, call)
        if all(k == "init" for k, _ in items):
            return None, targets
        tensors = [n for k, n in items if k == "tensor"]
        if not tensors:
            parts = []
            for k, n in items:
                if k == "var":
                    parts.append(f"{n}.numpy()")
                elif k in ("vars", "varexpr"):
                    parts.append(f"[v.numpy() for v in {n if k == 'vars' else '(' + n + ')'}]")
                elif k == "sched":
                    parts.append(f"{n}({self.conv.schedules[n]})")
                else:
                    self.conv.refuse(node, "sess.run mixing an initializer with other fetches")
            if structured:
                return expr(("[" if isinstance(fetch, cst.List) else "(") + ", ".join(parts) + ("]" if isinstance(fetch, cst.List) else ",)")), targets
            return expr(parts[0]), targets
        if len(tensors) != len(items):
            self.conv.refuse(node, "sess.run fetching both graph tensors and variables is not converted")
        train_comps = {n: next(c for c in reversed(self.conv.comps) if n in c.defs) for n in tensors}
        is_train = any(c.train for c in train_comps.values())
        fname, params = self.conv.function_for(node, tensors, feeds, is_train)
        call_expr = expr(f"{fname}({', '.join(code(feeds[p]) for p in params)})")
        nones = [t for t in tensors if train_comps[t].train and train_comps[t].value is None]
        if not nones:
            return call_expr, targets
        if targets is None:
            return call_expr, None
        if not structured:
            return call_expr, None if targets is None else targets  # a lone update op: nothing returned
        if not isinstance(targets, (cst.Tuple, cst.List)) or len(targets.elements) != len(tensors):
            self.conv.refuse(node, "the result of sess.run([update, ...]) is not unpacked: not converted")
        kept = [el for el, t in zip(targets.elements, tensors) if t not in nones]
        dropped = [el for el, t in zip(targets.elements, tensors) if t in nones]
        if any(not (isinstance(el.value, cst.Name) and el.value.value == "_") for el in dropped):
            self.conv.refuse(node, "an update op's fetched value (None) is bound to a name")
        if not kept:
            return call_expr, None
        if len(kept) == 1:
            return call_expr, kept[0].value
        new_targets = targets.with_changes(elements=[el.with_changes(comma=cst.MaybeSentinel.DEFAULT) for el in kept])
        return call_expr, new_targets

    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1:
            if any(self.is_run(n) for n in walk(updated)):
                self.conv.refuse(original, "several statements on a line with sess.run are not converted")
            return updated
        small, orig = updated.body[0], original.body[0]
        if isinstance(small, cst.Expr) and self.is_run(small.value):
            value, _ = self.translate(original, orig.value, None)
            if value is None:
                self.conv.change(original, "sess.run(initializer) dropped: TF2 variables are initialized when created")
                return cst.RemoveFromParent()
            return updated.with_changes(body=[small.with_changes(value=value)])
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and self.is_run(small.value):
            value, targets = self.translate(original, orig.value, orig.targets[0].target)
            if value is None:
                return cst.RemoveFromParent()
            if targets is None:
                return updated.with_changes(body=[cst.Expr(value)])
            self.conv.change(original, "sess.run → a call returning what was fetched")
            return updated.with_changes(body=[small.with_changes(targets=[small.targets[0].with_changes(target=targets)],
                                                                 value=value)])
        return updated

    def leave_Call(self, original, updated):
        if self.is_run(original):  # a sess.run inside a larger expression: no unpacking to adjust
            fetch = arg(original, 0, "fetches")
            items = [self.classify(original, e.value) for e in fetch.elements] if isinstance(fetch, (cst.List, cst.Tuple)) \
                else [self.classify(original, fetch)]
            if any(k == "init" or (k == "tensor" and next(c for c in reversed(self.conv.comps) if n in c.defs).train)
                   for k, n in items):
                return updated  # handled at statement level
            value, _ = self.translate(original, original, None)
            return value
        return updated

    def drop_feed_dicts(self, body):
        """Remove `feed = {...}` assignments whose every use was inlined into a step call."""
        if not self.inlined:
            self._check_sess(body)
            return body

        class Drop(cst.CSTTransformer):
            def leave_SimpleStatementLine(_, original, updated):
                if (len(updated.body) == 1 and isinstance(updated.body[0], cst.Assign)
                        and isinstance(updated.body[0].targets[0].target, cst.Name)
                        and updated.body[0].targets[0].target.value in self.inlined):
                    return cst.RemoveFromParent()
                return updated

        out = []
        for st in body:
            new = st.visit(Drop())
            if not isinstance(new, cst.RemovalSentinel):
                out.append(new)
        remaining = set()
        for st in out:
            remaining |= names_in(st)
        if remaining & self.inlined:
            bad = sorted(remaining & self.inlined)[0]
            self.conv.refuse(0, f"feed dict `{bad}` is used other than as a feed_dict: not converted")
        self._check_sess(out)
        return out

    def _check_sess(self, body):
        for st in body:
            if self.sess in names_in(st):
                self.conv.refuse(st, f"`{self.sess}` is used other than `{self.sess}.run(...)`: not converted")
            if names_in(st) & (self.conv.graph_names - {t for t in ()}):
                leaked = names_in(st) & self.conv.graph_names
                # graph tensors used directly in the loop (not through sess.run) have no eager value here
                assigned = set()
                for n in walk(st):
                    if isinstance(n, cst.AssignTarget) or isinstance(n, cst.For):
                        assigned |= set(target_names(n.target))
                if leaked - assigned - self._loop_names(body):
                    self.conv.refuse(st, f"graph tensor(s) {', '.join(sorted(leaked - assigned))} used outside sess.run")

    def _loop_names(self, body) -> set:
        out = set()
        for st in body:
            for n in walk(st):
                if isinstance(n, cst.AssignTarget):
                    out |= set(target_names(n.target))
                elif isinstance(n, cst.For):
                    out |= set(target_names(n.target))
        return out


def transform(module: cst.Module) -> tuple[cst.Module, list]:
    """Run the step; returns (module, notes). Raises Refuse."""
    alias = tf_alias(module)
    if alias == "tensorflow" and "import tensorflow\n" not in module.code:
        raise Refuse(1, "the TF2 form needs `import tensorflow as <name>` (the script imports names from it only)")
    _ALIAS[0] = alias
    from codemods.tf2 import model_class  # it reads this module's graph_state_built_in
    flat = model_class.flatten(module, graph_state_built_in)

    def back(line: int) -> int:  # a line of the flattened script → the input's line
        return flat.line_map[line] if flat is not None and 0 < line < len(flat.line_map) and flat.line_map[line] else line

    try:
        conv = Converter(flat.module if flat is not None else module)
        new = conv.run()
        if flat is not None and conv.build_prints:
            raise Refuse(flat.line, "a build-time print in a model class is not converted")
        if flat is not None:
            new = new.with_changes(body=model_class.refold(flat, conv.ranges, list(new.body),
                                                           set(conv.functions.values())))
            conv.change(-flat.line,
                        f"class `{flat.cls.name.value}`: the state its `__init__` built is made there as "
                        f"attributes; each step reading it is a `@tf.function` method, called on `{flat.instance}`")
    except Refuse as exc:
        raise Refuse(back(exc.line), exc.reason) from None
    finally:
        _ALIAS[0] = "tf"
    notes = [Note(-n.line if n.line < 0 else back(n.line), n.rule, n.kind, n.message) for n in conv.notes]
    return new, notes

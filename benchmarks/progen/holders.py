"""Where a generated program makes its state: the graph section for each `state` value.

    module          placeholders, variables, layers, loss and train_op as module-level names
    function_reads  module-level variables, read by `def model(x, ...)` that computes the logits
    function_makes  `def model(x, ...)` makes its variables and computes the logits
    class           `Model.__init__` builds placeholders, variables and ops (`model.train_op`)
    dict            `weights = {'h1': tf.Variable(...)}`, `biases = {...}` read by a function
    list            `weights = [tf.Variable(...), ...]` read by a loop over zip(weights, biases)
    loop            a loop making one layer per width (`W`, `b` rebound each time)

`build(ch)` returns a `Graph`: the lines, the expressions the session part reads (`refs`) and
the module-level names bound to graph objects (a later loop variable may reuse one of them).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from progen import model, training
from progen.choices import Choices


@dataclass
class Graph:
    lines: list[str] = field(default_factory=list)
    refs: dict[str, str] = field(default_factory=dict)     # x, y, keep_prob, is_training, lr, loss, ...
    names: list[str] = field(default_factory=list)         # module-level names bound to graph objects
    hypers: dict[str, str] = field(default_factory=dict)   # module-level hyperparameters the graph reads


def draw_details(rng, ch: Choices) -> None:
    d = ch.details
    d["function_name"] = rng.choice(["model", "neural_net", "multilayer_perceptron", "inference"])
    d["dict_arg"] = rng.random() < 0.5          # def net(x, weights, biases) rather than reading the globals
    d["class_methods"] = rng.random() < 0.5     # __init__ calls build_model() and build_training()
    d["class_base"] = rng.choice(["(object)", ""])


def _placeholders(ch: Choices, pfx: str) -> list[str]:
    lines = [f"{pfx}x = tf.placeholder(tf.float32, {model.input_shape(ch)}, name='x')"]
    if ch.loss == "sparse_softmax":
        lines.append(f"{pfx}y = tf.placeholder(tf.int32, [None], name='y')")
    else:
        units = "n_classes" if ch.details["shape_by_name"] else str(model.out_units(ch))
        lines.append(f"{pfx}y = tf.placeholder(tf.float32, [None, {units}], name='y')")
    if ch.dropout == "nn_fed":
        lines.append(f"{pfx}keep_prob = tf.placeholder(tf.float32, name='keep_prob')")
    elif ch.dropout == "layers_training":
        lines.append(f"{pfx}is_training = tf.placeholder_with_default(False, shape=(), name='is_training')"
                     if ch.details["training_default"] else f"{pfx}is_training = tf.placeholder(tf.bool, name='is_training')")
    if ch.dims.get("bn", "none") != "none":
        lines.append(f"{pfx}bn_training = tf.placeholder_with_default(True, shape=(), name='bn_training')")
    return lines


def _extra_inputs(ch: Choices) -> list[str]:
    """The placeholders a model function takes besides x."""
    return {"nn_fed": ["keep_prob"], "layers_training": ["is_training"]}.get(ch.dropout, [])


def _hypers(ch: Choices) -> dict[str, str]:
    hp: dict[str, str] = {}
    by_name = ch.details["shape_by_name"]
    if ch.front == "dense" and by_name:
        hp["n_input"] = str(model.N_INPUT)
    if ch.front == "rnn":
        hp["n_units"] = "8"
    if by_name:
        for name, width in zip(["n_hidden", "n_hidden_2"], ch.details["hidden"]):
            hp[name] = str(width)
    if by_name or (ch.state == "loop" and ch.api == "layers_dense"):
        hp["n_classes"] = str(model.out_units(ch))
    if ch.state == "loop":
        if ch.api == "layers_dense":
            hp["hidden_units"] = repr(ch.details["hidden"])
        else:
            first, _ = model.front_input_units(ch)
            first = "n_units" if first == "n_units" else str(model.front_input_units(ch)[1])
            hp["sizes"] = "[" + ", ".join([first] + [str(h) for h in ch.details["hidden"]] +
                                          [str(model.out_units(ch))]) + "]"
    if ch.dropout == "nn_const":
        hp["keep_value"] = "0.9"
    if ch.dropout == "layers_training":
        hp["dropout_rate"] = "0.25"
    hp.update(training.hyperparameters(ch))
    return hp


def _decl(p: model.Param, pfx: str) -> str:
    return f"{pfx}{p.name} = {p.expr}"


def _var_fetch(ch: Choices, params: list[model.Param], ref) -> str | None:
    """A variable of the model the session may fetch by name, when one is in reach."""
    if ch.state == "function_makes" or (not params and ch.state != "loop"):
        return None
    if ch.state == "list":
        return "weights[0]"
    if ch.state == "loop":
        return "params[0]" if ch.api != "layers_dense" else None
    return ref(params[0])


def build(ch: Choices) -> Graph:
    g = Graph(hypers=_hypers(ch))
    fparams, dparams = model.front_params(ch), ([] if ch.api == "layers_dense" else model.dense_params(ch))
    if ch.state == "loop":
        dparams = []
    params = fparams + dparams
    if ch.none_filter == "yes":
        g.lines.append("unused = tf.Variable(tf.zeros([2]), name='unused')  # in no loss: its gradient is None")
        g.names.append("unused")
    if ch.state == "class":
        _class(ch, g, params)
        return g
    g.lines += _placeholders(ch, "")
    g.names += ["x", "y"] + _extra_inputs(ch)
    g.refs.update({"x": "x", "y": "y", "bn_training": "bn_training", **{n: n for n in _extra_inputs(ch)}})
    name_of = {p.key: p.name for p in params}

    def plain(key):
        return name_of[key]

    ref = plain
    if ch.state == "dict":
        ref = _dict_layout(ch, g, params)
    elif ch.state == "list":
        g.lines += [_decl(p, "") for p in fparams]
        g.lines.append("weights = [" + ", ".join(p.expr for p in model.dense_params(ch) if p.weight) + "]")
        g.lines.append("biases = [" + ", ".join(p.expr for p in model.dense_params(ch) if not p.weight) + "]")
        g.names += [p.name for p in fparams] + ["weights", "biases"]
    elif ch.state != "function_makes":
        g.lines += [_decl(p, "") for p in params]
        g.names += [p.name for p in params]
    if ch.state in ("function_reads", "function_makes", "dict"):
        _model_function(ch, g, params, ref)
    else:
        front, h = model.front_lines(ch, "x", ref, "")
        body = front
        if ch.state == "loop":
            body += model.loop_lines(ch, h, "logits")
        elif ch.state == "list":
            body += model.list_lines(ch, h, "logits")
        else:
            body += model.dense_lines(ch, h, ref, "logits")
        g.lines += body
        g.names += _bound(body)
    g.refs["logits"] = "logits"
    if ch.state == "loop" and ch.api != "layers_dense":
        lines = training.loss_lines(ch, "logits", "y", "", "tf.add_n([tf.nn.l2_loss(w) for w in params[::2]])")
    elif ch.state == "list":
        lines = training.loss_lines(ch, "logits", "y", "", "tf.add_n([tf.nn.l2_loss(w) for w in weights])")
    else:
        in_reach = [ref(p.key) for p in params if p.weight] if ch.state != "function_makes" else []
        lines = training.loss_lines(ch, "logits", "y", "", in_reach or None)
    g.lines += lines
    train, bound = training.train_lines(ch, "loss", "")
    g.lines += train
    g.names += ["logits", "loss"] + bound + ["train_op"]
    g.refs.update({"loss": "loss", "train_op": "train_op"})
    if ch.lr == "fed":
        g.refs["lr"] = "lr"
        g.names.append("lr")
    var = _var_fetch(ch, params, lambda p: ref(p.key))
    if var:
        g.refs["var"] = var
    return g


def _bound(lines: list[str]) -> list[str]:
    """Names a list of unindented assignment lines binds (`a = ...`, `a, b = ...`)."""
    names = []
    for line in lines:
        if line.startswith((" ", "for ", "with ", "if ")) or " = " not in line:
            continue
        for target in line.split(" = ")[0].split(","):
            target = target.strip()
            if target.isidentifier() and target not in names:
                names.append(target)
    return names


def _dict_layout(ch: Choices, g: Graph, params: list[model.Param]):
    """`weights = {...}`, `biases = {...}` at module level; returns how the model reads a key."""
    def key(p):
        return "out" if p.key == "b_out" else p.key

    ws = [p for p in params if p.weight]
    bs = [p for p in params if not p.weight]
    g.lines.append("weights = {")
    g.lines += [f"    {key(p)!r}: {p.expr}," for p in ws]
    g.lines.append("}")
    g.lines.append("biases = {")
    g.lines += [f"    {key(p)!r}: {p.expr}," for p in bs]
    g.lines.append("}")
    g.names += ["weights", "biases"]
    kinds = {p.key: ("weights" if p.weight else "biases") for p in params}
    return lambda k: f"{kinds[k]}[{key(next(p for p in params if p.key == k))!r}]"


def _model_function(ch: Choices, g: Graph, params: list[model.Param], ref) -> None:
    """`def model(x, ...)`: the layers (and for function_makes the variables) inside."""
    name = ch.details["function_name"]
    args = ["x"] + _extra_inputs(ch)
    if ch.state == "dict" and ch.details["dict_arg"]:
        args[1:1] = ["weights", "biases"]
    body: list[str] = []
    if ch.state == "function_makes":
        body += [_decl(p, "") for p in params]
    front, h = model.front_lines(ch, "x", ref, "")
    if ch.state != "function_makes" and front and front[0].startswith("cell = "):
        g.lines.append(front.pop(0))          # the LSTM cell is made at module level, used inside
        g.names.append("cell")
    body += front + model.dense_lines(ch, h, ref, "logits")
    g.lines.append(f"def {name}({', '.join(args)}):")
    g.lines += ["    " + line for line in body] + ["    return logits", ""]
    g.lines.append(f"logits = {name}({', '.join(args)})")
    g.names.append(name)


def _class(ch: Choices, g: Graph, params: list[model.Param]) -> None:
    """class Model: __init__ builds everything on self; the session reads model.x, model.loss..."""
    s = "self."
    name_of = {p.key: p.name for p in params}

    def ref(key):
        return s + name_of[key]

    ph = _placeholders(ch, s)
    decls = [_decl(p, s) for p in params]
    front, h = model.front_lines(ch, s + "x", ref, s)
    dense = model.dense_lines(ch, h, ref, s + "logits", s)
    loss = training.loss_lines(ch, s + "logits", s + "y", s, [ref(p.key) for p in params if p.weight] or None)
    train, _ = training.train_lines(ch, s + "loss", s)
    g.lines.append(f"class Model{ch.details['class_base']}:")
    g.lines.append("    def __init__(self):")
    if ch.details["class_methods"]:
        g.lines += ["        " + line for line in ph] + ["        self.build_model()", "        self.build_training()",
                                                         "", "    def build_model(self):"]
        g.lines += ["        " + line for line in decls + front + dense] + ["", "    def build_training(self):"]
        g.lines += ["        " + line for line in loss + train]
    else:
        g.lines += ["        " + line for line in ph + decls + front + dense + loss + train]
    g.lines += ["", "", "model = Model()"]
    g.names.append("Model")
    refs = {"x": "model.x", "y": "model.y", "loss": "model.loss", "train_op": "model.train_op",
            "logits": "model.logits", "bn_training": "model.bn_training"}
    refs.update({n: f"model.{n}" for n in _extra_inputs(ch)})
    if ch.lr == "fed":
        refs["lr"] = "model.lr"
    if params:
        refs["var"] = "model." + params[0].name
    g.refs.update(refs)

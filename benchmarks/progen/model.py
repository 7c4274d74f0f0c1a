"""The model part of a generated program: its variables and the layers that compute `logits`.

A program's layers are a front (none, a small conv by `tf.layers` or by `tf.nn.conv2d`, or an
LSTM read by `tf.nn.dynamic_rnn`) and one or two hidden dense layers before the output layer.
Each parameter is a `Param` (its key and the expression that makes it); where it lives and how
it is read is the holder's business (`holders.py`): a module name, `self.W1`, `weights['h1']`,
an element of a list, or a local of the loop that makes the layers.
"""
from __future__ import annotations

from dataclasses import dataclass

from progen.choices import Choices

N_TRAIN, N_TEST, BATCH = 64, 16, 16
IMAGE = 6          # conv input: 6 x 6 x 1, pooled to 3 x 3 x CONV_FILTERS
CONV_FILTERS = 4
SEQ_LEN, SEQ_FEATURES = 4, 3
N_INPUT = 8        # dense input


@dataclass
class Param:
    key: str           # dict key / variable name: h1, b1, out, b_out, wc1, bc1
    name: str          # module or attribute name: W1, b1, W_out, b_out, wc1, bc1
    expr: str          # the expression that makes it (shape given literally or by hyperparameter)
    weight: bool       # a weight matrix (for explicit l2), not a bias


def input_shape(ch: Choices) -> str:
    """The placeholder's shape for this program's front."""
    if ch.front == "rnn":
        return f"[None, {SEQ_LEN}, {SEQ_FEATURES}]"
    if ch.front.startswith("conv"):
        return f"[None, {IMAGE * IMAGE}]" if ch.details["x_flat"] else f"[None, {IMAGE}, {IMAGE}, 1]"
    return "[None, n_input]" if ch.details["shape_by_name"] else f"[None, {N_INPUT}]"


def out_units(ch: Choices) -> int:
    return 2 if ch.loss == "mse" else 3


def draw_details(rng, ch: Choices) -> None:
    """The smaller choices of the model part, drawn from the seed's generator."""
    d = ch.details
    d["hidden"] = rng.choice([[16], [16, 12], [12]])
    d["x_flat"] = rng.random() < 0.5 if ch.front.startswith("conv") else False
    d["flatten"] = rng.choice(["reshape", "layers_flatten"])
    d["rnn_last"] = rng.choice(["outputs_last", "state_h"])
    d["init"] = rng.choice(["random_normal_initializer", "truncated_normal_initializer", "glorot_uniform_initializer",
                            "default", "xavier"])
    d["bias"] = rng.choice(["zeros", "constant", "random_normal"])
    d["names"] = rng.random() < 0.5                      # name= on tf.Variable
    # [n_input, n_hidden] rather than [8, 16]; always when n_hidden is the only hyperparameter
    # the graph reads that a rebinding can pick (a fed learning rate is read at run time)
    d["shape_by_name"] = rng.random() < 0.5 or (ch.rebind == "hyper" and ch.lr == "fed")
    d["dropout_every"] = rng.random() < 0.5              # after every hidden layer, else the first only
    d["training_default"] = rng.random() < 0.5           # placeholder_with_default(False) vs placeholder(tf.bool)
    d["add_form"] = rng.choice(["plus", "tf_add"])
    d["loop_scope"] = rng.random() < 0.5                 # get_variable in a loop: variable_scope per layer


def _weight_expr(ch: Choices, api: str, key: str, shape: str, name_expr: str | None = None) -> str:
    name = name_expr or repr(key)
    if api == "get_variable":
        init = ch.details["init"]
        if init == "default":
            return f"tf.get_variable({name}, {shape})"
        if init == "xavier":
            return f"tf.get_variable({name}, {shape}, initializer=tf.contrib.layers.xavier_initializer())"
        arg = "" if init == "glorot_uniform_initializer" else "stddev=0.1"
        return f"tf.get_variable({name}, {shape}, initializer=tf.{init}({arg}))"
    fn = "truncated_normal" if api == "raw_truncated" else "random_normal"
    named = f", name={name}" if ch.details["names"] else ""
    return f"tf.Variable(tf.{fn}({shape}, stddev=0.1){named})"


def _bias_expr(ch: Choices, api: str, key: str, units: str, name_expr: str | None = None) -> str:
    name = name_expr or repr(key)
    kind = ch.details["bias"]
    if api == "get_variable":
        init = "tf.constant_initializer(0.1)" if kind == "constant" else "tf.zeros_initializer()"
        return f"tf.get_variable({name}, [{units}], initializer={init})"
    named = f", name={name}" if ch.details["names"] else ""
    value = {"zeros": f"tf.zeros([{units}])", "constant": f"tf.constant(0.1, shape=[{units}])",
             "random_normal": f"tf.random_normal([{units}], stddev=0.1)"}[kind]
    return f"tf.Variable({value}{named})"


def var_api(ch: Choices) -> str:
    """The API the program's own variables are made with (tf.layers.dense programs make their
    conv filter, if any, with tf.Variable)."""
    return "raw_truncated" if ch.api == "layers_dense" else ch.api


def front_params(ch: Choices) -> list[Param]:
    if ch.front != "conv_nn":
        return []
    api = var_api(ch)
    return [Param("wc1", "wc1", _weight_expr(ch, api, "wc1", f"[3, 3, 1, {CONV_FILTERS}]"), True),
            Param("bc1", "bc1", _bias_expr(ch, api, "bc1", str(CONV_FILTERS)), False)]


def front_input_units(ch: Choices) -> tuple[str, int]:
    """The width the dense layers start from: (as written in a shape, as a number)."""
    if ch.front == "rnn":
        return "n_units", 8
    if ch.front.startswith("conv"):
        n = (IMAGE // 2) ** 2 * CONV_FILTERS
        return str(n), n
    return ("n_input" if ch.details["shape_by_name"] else str(N_INPUT)), N_INPUT


def widths(ch: Choices) -> list[tuple[str, str]]:
    """(in, out) of each dense layer as written in shapes: hidden layers, then the output layer."""
    first, _ = front_input_units(ch)
    hidden = ch.details["hidden"]
    by_name = ch.details["shape_by_name"]
    names = ["n_hidden", "n_hidden_2"]
    sizes = [names[i] if by_name else str(h) for i, h in enumerate(hidden)]
    out = "n_classes" if by_name else str(out_units(ch))
    ins = [first] + sizes
    return list(zip(ins, sizes + [out]))


def dense_params(ch: Choices) -> list[Param]:
    api = var_api(ch)
    params = []
    layers = widths(ch)
    for i, (n_in, n_out) in enumerate(layers):
        last = i == len(layers) - 1
        wkey, bkey = ("out", "b_out") if last else (f"h{i + 1}", f"b{i + 1}")
        wname = "W_out" if last else f"W{i + 1}"
        params.append(Param(wkey, wname, _weight_expr(ch, api, wkey if not last else "w_out", f"[{n_in}, {n_out}]"),
                            True))
        params.append(Param(bkey, bkey, _bias_expr(ch, api, bkey, n_out), False))
    return params


def front_lines(ch: Choices, inp: str, ref, pfx: str) -> tuple[list[str], str]:
    """Lines from the input `inp` to a flat tensor `h`; `ref(key)` reads a parameter, `pfx`
    prefixes the names kept on an object (the LSTM cell). Returns (lines, the flat tensor)."""
    lines: list[str] = []
    if ch.front == "dense":
        return lines, inp
    if ch.front == "rnn":
        lines.append(f"{pfx}cell = tf.nn.rnn_cell.BasicLSTMCell(n_units)")
        lines.append(f"outputs, state = tf.nn.dynamic_rnn({pfx}cell, {inp}, dtype=tf.float32)")
        lines.append("h = outputs[:, -1, :]" if ch.details["rnn_last"] == "outputs_last" else "h = state.h")
        return lines, "h"
    img = inp
    if ch.details["x_flat"]:
        lines.append(f"x_image = tf.reshape({inp}, shape=[-1, {IMAGE}, {IMAGE}, 1])")
        img = "x_image"
    if ch.front == "conv_layers":
        lines.append(f"conv = tf.layers.conv2d({img}, {CONV_FILTERS}, 3, padding='same', activation=tf.nn.relu)")
        lines.append("pool = tf.layers.max_pooling2d(conv, 2, 2)")
    else:
        lines.append(f"conv = tf.nn.relu(tf.nn.conv2d({img}, {ref('wc1')}, strides=[1, 1, 1, 1], padding='SAME') + "
                     f"{ref('bc1')})")
        lines.append("pool = tf.nn.max_pool(conv, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='SAME')")
    n = (IMAGE // 2) ** 2 * CONV_FILTERS
    if ch.details["flatten"] == "reshape" or ch.front == "conv_nn":
        lines.append(f"h = tf.reshape(pool, [-1, {n}])")
    else:
        lines.append("h = tf.layers.flatten(pool)")
    return lines, "h"


def dropout_line(ch: Choices, h: str, pfx: str) -> str | None:
    if ch.dropout == "nn_fed":
        return f"{h} = tf.nn.dropout({h}, {pfx}keep_prob)"
    if ch.dropout == "nn_const":
        return f"{h} = tf.nn.dropout({h}, keep_prob=keep_value)"
    if ch.dropout == "layers_training":
        return f"{h} = tf.layers.dropout({h}, rate=dropout_rate, training={pfx}is_training)"
    return None


LEAKY = ["def leaky(t, alpha=0.2):", "    return tf.maximum(t, alpha * t)"]


def activate(ch: Choices, value: str) -> str:
    """A hidden layer's activation of `value`: tf.nn.relu, or the script's helper `leaky` (dimension act)."""
    return f"leaky({value})" if ch.dims.get("act") == "helper" else f"tf.nn.relu({value})"


def affine(ch: Choices, h: str, w: str, b: str) -> str:
    if ch.details["add_form"] == "tf_add":
        return f"tf.add(tf.matmul({h}, {w}), {b})"
    return f"tf.matmul({h}, {w}) + {b}"


def dense_lines(ch: Choices, h: str, ref, out: str, pfx: str = "") -> list[str]:
    """Unrolled dense layers from `h` to `out` (the logits): one statement per layer."""
    lines = []
    layers = widths(ch)
    for i in range(len(layers)):
        last = i == len(layers) - 1
        if ch.api == "layers_dense":
            units = layers[i][1]
            helper = ch.dims.get("act") == "helper"
            act = "" if last or helper else ", activation=tf.nn.relu"
            target = out if last else f"h{i + 1}"
            dense = f"tf.layers.dense({h}, {units}{act}, name={('dense_out' if last else f'dense{i + 1}')!r})"
            lines.append(f"{target} = {activate(ch, dense) if helper and not last else dense}")
        else:
            wkey, bkey = ("out", "b_out") if last else (f"h{i + 1}", f"b{i + 1}")
            target = out if last else f"h{i + 1}"
            value = affine(ch, h, ref(wkey), ref(bkey))
            lines.append(f"{target} = {value}" if last else f"{target} = {activate(ch, value)}")
        if not last:
            h = f"h{i + 1}"
            if i == 0 and ch.dims.get("bn", "none") != "none":
                lines.append(f"{h} = tf.layers.batch_normalization({h}, momentum=0.5, training={pfx}bn_training)")
            drop = dropout_line(ch, h, pfx) if (i == 0 or ch.details["dropout_every"]) else None
            if drop:
                lines.append(drop)
    return lines


def loop_lines(ch: Choices, h: str, out: str) -> list[str]:
    """The dense layers made by a loop (state 'loop'): over the widths, `W`, `b` rebound each time."""
    lines = [f"h = {h}"]
    drop = dropout_line(ch, "h", "")
    if ch.api == "layers_dense":
        loop = ["for units in hidden_units:", "    h = tf.layers.dense(h, units, activation=tf.nn.relu)"
                if ch.dims.get("act") != "helper" else "    h = leaky(tf.layers.dense(h, units))"]
        loop += ["    " + drop] if drop else []
        loop_in = ch.dims.get("loop_in", "module")
        if loop_in != "module":  # the loop in a helper, the widths given at its call
            widths = repr(list(ch.details["hidden"]))
            head = "def dense_stack(h, widths):" if loop_in == "helper_arg" else f"def dense_stack(h, widths={widths}):"
            lines = [head] + ["    " + line.replace("hidden_units", "widths") for line in loop] + ["    return h", "",
                     f"h = dense_stack({h}, {widths})" if loop_in == "helper_arg" else f"h = dense_stack({h})"]
        else:
            lines += loop
        lines.append(f"{out} = tf.layers.dense(h, n_classes)")
        return lines
    api = var_api(ch)
    lines.append("params = []")
    lines.append("for i in range(len(sizes) - 1):")
    body = []
    scoped = api == "get_variable" and ch.details["loop_scope"]
    wname = "'w'" if scoped else "'w%d' % i"
    bname = "'b'" if scoped else "'b%d' % i"
    body.append("W = " + _weight_expr(ch, api, "w", "[sizes[i], sizes[i + 1]]", wname))
    body.append("b = " + _bias_expr(ch, api, "b", "sizes[i + 1]", bname))
    body.append("params += [W, b]")
    body.append("h = " + affine(ch, "h", "W", "b"))
    body.append("if i < len(sizes) - 2:")
    body.append(f"    h = {activate(ch, 'h')}")
    if drop:
        body.append("    " + drop)
    if scoped:
        lines.append("    with tf.variable_scope('layer%d' % i):")
        lines += ["        " + line for line in body[:3]] + ["    " + line for line in body[3:]]
    else:
        lines += ["    " + line for line in body]
    lines.append(f"{out} = h")
    return lines


def list_lines(ch: Choices, h: str, out: str) -> list[str]:
    """The dense layers read from lists of variables (state 'list')."""
    lines = [f"h = {h}", "for W, b in zip(weights[:-1], biases[:-1]):",
             "    h = " + activate(ch, affine(ch, "h", "W", "b"))]
    drop = dropout_line(ch, "h", "")
    if drop:
        lines.append("    " + drop)
    lines.append(f"{out} = " + affine(ch, "h", "weights[-1]", "biases[-1]"))
    return lines

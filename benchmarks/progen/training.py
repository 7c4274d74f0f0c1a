"""The training part of a generated program's graph: the loss (with l2 added or not), the
learning rate, the optimizer and the clipping recipe that makes `train_op`.

Every recipe is one a TF 1.x user wrote: `minimize`; `compute_gradients` + `apply_gradients`,
unclipped or with `clip_by_value` / `clip_by_norm` on each gradient; `tf.gradients` over
`tf.trainable_variables()` + `clip_by_global_norm` + `apply_gradients(zip(...))`;
`tf.contrib.layers.optimize_loss(clip_gradients=...)`. With an unused variable in the graph
(`none_filter`), its gradient is None and the recipes drop it (`if g is not None`) as TF 1.x
code had to (`clip_by_value(None)` raises).
"""
from __future__ import annotations

from progen.choices import Choices

OPTIMIZERS = {
    "GradientDescent": ("GradientDescentOptimizer", "{lr}", "SGD"),
    "Momentum": ("MomentumOptimizer", "{lr}, momentum=0.9", None),
    "Adam": ("AdamOptimizer", "learning_rate={lr}", "Adam"),
    "RMSProp": ("RMSPropOptimizer", "{lr}", "RMSProp"),
    "Adagrad": ("AdagradOptimizer", "{lr}", "Adagrad"),
}
BASE_RATES = {"GradientDescent": 0.1, "Momentum": 0.05, "Adam": 0.01, "RMSProp": 0.01, "Adagrad": 0.1}


def draw_details(rng, ch: Choices) -> None:
    d = ch.details
    d["loss_form"] = rng.choice(["nn", "losses"])             # tf.nn.*_with_logits or tf.losses.*
    d["l2_join"] = rng.choice(["rebind", "sum"])              # loss = loss + beta * l2, or in one expression
    d["global_step"] = rng.choice(["variable", "get_or_create"])
    d["staircase"] = rng.random() < 0.5
    d["opt_name"] = rng.choice(["optimizer", "opt"])
    d["optimize_loss_by"] = rng.choice(["instance", "name"])  # optimizer=opt or optimizer='Adam'
    if ch.optimizer == "Momentum":
        d["optimize_loss_by"] = "instance"                     # 'Momentum' by name needs a momentum argument


def hyperparameters(ch: Choices) -> dict[str, str]:
    """The module-level hyperparameters the training part reads (name -> literal)."""
    hp = {}
    base = BASE_RATES[ch.optimizer]
    hp["starter_learning_rate" if ch.lr == "decay" else "learning_rate"] = repr(base)
    if ch.lr == "decay":
        hp["decay_steps"] = "2"
    if ch.l2 != "none":
        hp["beta"] = "0.001"
    if ch.clip == "value":
        hp["clip_value"] = "1.0"
    elif ch.clip in ("norm", "global_norm", "optimize_loss"):
        hp["clip_norm"] = "1.0"
    return hp


def needs_global_step(ch: Choices) -> bool:
    return ch.lr == "decay" or ch.clip == "optimize_loss"


def loss_lines(ch: Choices, logits: str, y: str, pfx: str, l2_weights: list[str] | str | None) -> list[str]:
    """`{pfx}loss = ...`; l2_weights: the weight matrices in reach by name, or the l2 term
    itself as an expression (None: the trainable variables filtered by rank)."""
    nn = ch.details["loss_form"] == "nn"
    if ch.loss == "softmax_v2":
        data = f"tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels={y}, logits={logits}))"
    elif ch.loss == "softmax":
        data = (f"tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels={y}, logits={logits}))" if nn
                else f"tf.losses.softmax_cross_entropy(onehot_labels={y}, logits={logits})")
    elif ch.loss == "sparse_softmax":
        data = (f"tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels={y}, logits={logits}))" if nn
                else f"tf.losses.sparse_softmax_cross_entropy(labels={y}, logits={logits})")
    else:
        data = (f"tf.reduce_mean(tf.square({logits} - {y}))" if nn
                else f"tf.losses.mean_squared_error(labels={y}, predictions={logits})")
    if ch.l2 == "none":
        return [f"{pfx}loss = {data}"]
    if ch.l2 == "trainable":
        l2 = "tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])"
    elif isinstance(l2_weights, str):
        l2 = l2_weights
    elif l2_weights is None:
        l2 = "tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables() if len(v.get_shape()) > 1])"
    else:
        l2 = " + ".join(f"tf.nn.l2_loss({w})" for w in l2_weights)
    if ch.details["l2_join"] == "sum":
        return [f"{pfx}loss = {data} + beta * ({l2})"]
    return [f"{pfx}loss = {data}", f"{pfx}loss = {pfx}loss + beta * ({l2})"]


def _optimizer(ch: Choices, lr: str) -> str:
    cls, args, _ = OPTIMIZERS[ch.optimizer]
    made = "opt_cls" if ch.alias == "opt_cls" else f"tf.train.{cls}"
    return f"{made}({args.format(lr=lr)})"


def optimizer_alias(ch: Choices) -> str | None:
    """`opt_cls = tf.train.XOptimizer` (alias opt_cls), at module level."""
    if ch.alias != "opt_cls":
        return None
    return f"opt_cls = tf.train.{OPTIMIZERS[ch.optimizer][0]}"


def train_lines(ch: Choices, loss: str, pfx: str) -> tuple[list[str], list[str]]:
    """Lines from the learning rate to `{pfx}train_op`; and the local names they bind (the
    candidates a later loop variable may reuse, when they are module-level)."""
    lines: list[str] = []
    bound: list[str] = []
    gs = f"{pfx}global_step"
    if needs_global_step(ch):
        if ch.details["global_step"] == "variable":
            lines.append(f"{gs} = tf.Variable(0, trainable=False, name='global_step')")
        else:
            lines.append(f"{gs} = tf.train.get_or_create_global_step()")
        bound.append("global_step")
    if ch.lr == "const":
        lr = "learning_rate"
    elif ch.lr == "fed":
        lr = f"{pfx}lr"
        lines.append(f"{lr} = tf.placeholder(tf.float32, shape=[], name='lr')")
    else:
        lr = f"{pfx}lr"
        at = f"{gs} * batch_size" if ch.dims.get("decay_at") == "examples" else gs
        lines.append(f"{lr} = tf.train.exponential_decay(starter_learning_rate, {at}, decay_steps, 0.9, "
                     f"staircase={ch.details['staircase']})")
    if ch.dims.get("bn") == "wired":  # what follows is built under the batch normalization's update ops
        head = len(lines)
        rest, bound = train_lines(ch.__class__(ch.seed, {**ch.dims, "bn": "not_wired"}, ch.details), loss, pfx)
        return lines + ["update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)",
                        "with tf.control_dependencies(update_ops):"] + ["    " + line for line in rest[head:]], \
            bound + ["update_ops"]
    step_kw = f", global_step={gs}" if ch.lr == "decay" else ""
    opt = ch.details["opt_name"]
    train_op = f"{pfx}train_op"
    keep = "if g is not None" if ch.none_filter == "yes" else ""
    if ch.clip == "optimize_loss":
        if ch.details["optimize_loss_by"] == "name":
            by = f"optimizer={OPTIMIZERS[ch.optimizer][2]!r}, learning_rate={lr}"
        else:
            lines.append(f"{opt} = {_optimizer(ch, lr)}")
            bound.append(opt)
            by = f"optimizer={opt}, learning_rate=None"
        lines.append(f"{train_op} = tf.contrib.layers.optimize_loss({loss}, {gs}, {by}, clip_gradients=clip_norm)")
        return lines, bound
    lines.append(f"{opt} = {_optimizer(ch, lr)}")
    bound.append(opt)
    if ch.clip == "minimize":
        lines.append(f"{train_op} = {opt}.minimize({loss}{step_kw})")
    elif ch.clip in ("apply", "value", "norm"):
        lines.append(f"grads_and_vars = {opt}.compute_gradients({loss})")
        bound.append("grads_and_vars")
        if ch.clip == "apply":
            if keep:
                lines.append(f"grads_and_vars = [(g, v) for g, v in grads_and_vars {keep}]")
            pairs = "grads_and_vars"
        else:
            clip = ("tf.clip_by_value(g, -clip_value, clip_value)" if ch.clip == "value"
                    else "tf.clip_by_norm(g, clip_norm)")
            lines.append(f"capped = [({clip}, v) for g, v in grads_and_vars{' ' + keep if keep else ''}]")
            bound.append("capped")
            pairs = "capped"
        lines.append(f"{train_op} = {opt}.apply_gradients({pairs}{step_kw})")
    else:  # global_norm
        lines.append("tvars = tf.trainable_variables()")
        lines.append(f"grads = tf.gradients({loss}, tvars)")
        if keep:
            lines.append(f"pairs = [(g, v) for g, v in zip(grads, tvars) {keep}]")
            lines.append("grads, tvars = [g for g, _ in pairs], [v for _, v in pairs]")
            bound.append("pairs")
        lines.append("grads, _ = tf.clip_by_global_norm(grads, clip_norm)")
        lines.append(f"{train_op} = {opt}.apply_gradients(zip(grads, tvars){step_kw})")
        bound += ["tvars", "grads"]
    return lines, bound

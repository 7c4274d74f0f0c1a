"""The dimensions a generated program is made of, and how one seed picks a value for each.

Each dimension is chosen on its own (`random.Random(seed)`, in the order of DIMENSIONS), except
where a value cannot go with an earlier one: then the later dimension is drawn from the values
that fit (a dict or a list of variables holds variables, so `tf.layers.dense`, which makes its
own, is not drawn for them). Smaller details (initializers, spellings, hidden widths) are drawn
after the dimensions and kept in `Choices.details`, so a program is reproduced from its seed alone.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

DIMENSIONS: dict[str, tuple[str, ...]] = {
    # where the model's state is made
    "state": ("module", "function_reads", "function_makes", "class", "dict", "list", "loop"),
    # a name rebound after the graph is built: a hyperparameter, or the training loop's variable
    "rebind": ("none", "hyper", "loop_var"),
    "alias": ("none", "nn", "T", "opt_cls"),       # from tensorflow import nn; T = tf; opt_cls = tf.train.X
    "api": ("raw_normal", "raw_truncated", "get_variable", "layers_dense"),
    "front": ("dense", "conv_layers", "conv_nn", "rnn"),   # what comes before the dense layers
    "dropout": ("none", "nn_fed", "nn_const", "layers_training"),
    "loss": ("softmax_v2", "softmax", "sparse_softmax", "mse"),
    "l2": ("none", "trainable", "weights"),
    "optimizer": ("GradientDescent", "Momentum", "Adam", "RMSProp", "Adagrad"),
    "lr": ("const", "fed", "decay"),
    "clip": ("minimize", "apply", "value", "norm", "global_norm", "optimize_loss"),
    "none_filter": ("no", "yes"),                  # an unused variable, its None gradient filtered out
    "fetch": ("list", "list_with_var", "dict", "separate"),
    "evaluate": ("no", "yes"),                     # sess.run(loss, feed_dict=test) after training
    "saver": ("no", "yes"),
    "summary": ("no", "yes"),
    "session": ("with", "plain"),                  # with tf.Session() as sess / sess = tf.Session()
    # an assign op run after each update: WGAN's weight clipping over the trainable variables, or a counter's
    # `assign_add` whose value the run keeps
    "op_run": ("none", "weight_clip", "assign_value"),
    # where the loop of state 'loop' runs over `tf.layers.dense` widths: the module, or a helper given the
    # widths as a list (`stack(h, [12, 8])`) or by its default (`def stack(h, widths=[12, 8])`)
    "loop_in": ("module", "helper_arg", "helper_default"),
    # the hidden layers' activation: tf.nn.relu, or a helper of the script kept in the steps (DCGAN's leaky relu,
    # `def leaky(t, alpha=0.2): return tf.maximum(t, alpha * t)`): the next layer is built from its result's shape
    "act": ("relu", "helper"),
    # where a decaying rate is evaluated: at the global step, or at the examples seen (`global_step * batch_size`,
    # TensorFlow's MNIST tutorial)
    "decay_at": ("step", "examples"),
    # tf.layers.batch_normalization after the first hidden layer, its switch a placeholder_with_default(True) that the
    # evaluation feeds False (so it reads the moving averages): its update ops wired into the train op
    # (`with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):`) or not
    "bn": ("none", "wired", "not_wired"),
}
# dimensions added after the first results: each drawn from a generator of its own (`choose`), so that
# every other choice of a seed, and its program when the value is "none", stays what it was
_SEPARATE = ("op_run", "loop_in", "act", "decay_at", "bn")

# relative weights where uniform would be a poor mix (the dense front is the common program)
_WEIGHTS = {"front": (4, 2, 2, 2)}
_HOLDS_VARIABLES = ("dict", "list", "function_reads")   # state made as variables, read elsewhere


@dataclass
class Choices:
    seed: int
    dims: dict[str, str]
    details: dict[str, object] = field(default_factory=dict)

    def __getattr__(self, name):
        dims = self.__dict__.get("dims", {})
        if name in dims:
            return dims[name]
        raise AttributeError(name)

    def as_dict(self) -> dict:
        return {"seed": self.seed, **self.dims, "details": dict(self.details)}


def allowed(dims: dict[str, str], name: str, where: dict[str, set[str]] | None = None) -> tuple[str, ...]:
    """The values of dimension `name` that fit the dimensions chosen before it (and `where`)."""
    values = DIMENSIONS[name]
    if where and name in where:
        values = tuple(v for v in values if v in where[name])
    if name == "api" and dims.get("state") in _HOLDS_VARIABLES:
        values = tuple(v for v in values if v != "layers_dense")
    if name == "bn" and dims.get("state") in ("loop", "list"):  # their hidden layers are a loop's body
        values = tuple(v for v in values if v == "none")
    if not values:
        raise ValueError(f"no value of {name} fits {dims}")
    return values


def parse_where(text: str) -> dict[str, set[str]]:
    """`alias=none,fetch=list|dict`: the values each named dimension is drawn from."""
    where: dict[str, set[str]] = {}
    for part in filter(None, text.split(",")):
        name, _, values = part.partition("=")
        chosen = set(values.split("|"))
        if name not in DIMENSIONS or not chosen <= set(DIMENSIONS[name]):
            raise ValueError(f"--where {part}: dimensions and values are {DIMENSIONS}")
        where[name] = chosen
    return where


def choose(seed: int, where: dict[str, set[str]] | None = None) -> tuple[random.Random, Choices]:
    """The dimensions for `seed`, and the generator to draw the details from (same seed).
    `where` narrows dimensions to some of their values (the seed then gives another program)."""
    rng = random.Random(seed)
    dims: dict[str, str] = {}
    for name in DIMENSIONS:
        values = allowed(dims, name, where)
        if name in _SEPARATE:
            dims[name] = random.Random(f"{name}:{seed}").choice(values)
            continue
        weights = _WEIGHTS.get(name) if values == DIMENSIONS[name] else None
        dims[name] = rng.choices(values, weights=weights)[0] if weights else rng.choice(values)
    return rng, Choices(seed, dims)

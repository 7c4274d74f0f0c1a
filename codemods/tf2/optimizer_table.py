"""TF 1.x optimizer → Keras 3 optimizer with the same update rule, as data (one row, one fact).

Each row says how the TF1 constructor's arguments map onto the Keras 3 one, which Keras
defaults must be overridden because TF1's differ, and which fixture proves the row by
`tf1clip parity` (tests/test_tf2_parity.py runs one parity test per row). The README
table in fixtures/tf2_golden/README.md is rendered from these rows by `render_markdown()`
(a test checks it is current).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Param:
    tf1: str                 # TF1 keyword
    position: Optional[int]  # TF1 positional index (None: keyword only)
    keras: Optional[str]     # Keras 3 keyword (None: must keep TF1's default to be exact)
    tf1_default: Optional[str] = None  # TF1 default, written as code, when Keras' default differs


@dataclass(frozen=True)
class OptimizerRow:
    tf1: str                       # canonical TF1 name
    keras: str                     # Keras 3 class, as written in the output
    params: tuple                  # Param rows; TF1 arguments not listed are refused
    why: str                       # the numerics fact, one line (goes into the output as a comment)
    proof: str                     # fixture (under fixtures/) whose conversion passes parity
    changing_lr: Optional["OptimizerRow"] = None  # the row for a learning rate that changes (else equal only
                                                  # while it is constant)
    twin: bool = False             # `keras` is an exact twin class written into the output (optimizer_twins)

    def render(self) -> str:
        fixed = ", ".join(f"{p.keras}={p.tf1_default}" for p in self.params if p.keras and p.tf1_default)
        return f"{self.keras}({fixed})" if fixed else f"{self.keras}(...)"


_LOCK = (Param("use_locking", 1, None, "False"), Param("name", 2, None))

# MomentumOptimizer whose learning rate changes (a schedule, a fed or computed rate): Keras SGD's velocity
# holds -lr * accum with the rates of past steps, TF 1.x's accumulator holds none, so the twin runs TF 1.x's
# kernel. With a constant rate the two are the same update, and the output keeps Keras' own SGD.
MOMENTUM_CHANGING_LR = OptimizerRow(
    "tensorflow.train.MomentumOptimizer", "MomentumOptimizer",
    (Param("learning_rate", 0, "learning_rate"), Param("momentum", 1, "momentum"),
     Param("use_locking", 2, None, "False"), Param("name", 3, None), Param("use_nesterov", 4, "use_nesterov")),
    "TF1 MomentumOptimizer's ApplyMomentum kernel in a Keras 3 optimizer (accum = m * accum + g; var -= lr * accum "
    "with this step's rate: Keras SGD's velocity keeps the rates of past steps)",
    "tf2_golden/optimizers/momentum_decaying_rate.py", twin=True)

OPTIMIZERS: dict[str, OptimizerRow] = {row.tf1: row for row in (
    OptimizerRow(
        "tensorflow.train.GradientDescentOptimizer", "tf.keras.optimizers.SGD",
        (Param("learning_rate", 0, "learning_rate"), *_LOCK),
        "GradientDescentOptimizer: var -= lr * grad (Keras SGD without momentum)",
        "tf2_golden/optimizers/gradient_descent.py"),
    OptimizerRow(
        "tensorflow.train.MomentumOptimizer", "tf.keras.optimizers.SGD",
        (Param("learning_rate", 0, "learning_rate"), Param("momentum", 1, "momentum"),
         Param("use_locking", 2, None, "False"), Param("name", 3, None),
         Param("use_nesterov", 4, "nesterov")),
        "MomentumOptimizer: accum = m * accum + g; var -= lr * accum. Keras SGD keeps "
        "velocity = -lr * accum: the same update while the learning rate is constant",
        "tf2_golden/optimizers/momentum_nesterov.py", changing_lr=MOMENTUM_CHANGING_LR),
    OptimizerRow(
        "tensorflow.train.AdamOptimizer", "AdamOptimizer",
        (Param("learning_rate", 0, "learning_rate"), Param("beta1", 1, "beta1"),
         Param("beta2", 2, "beta2"), Param("epsilon", 3, "epsilon"),
         Param("use_locking", 4, None, "False"), Param("name", 5, None)),
        "TF1 AdamOptimizer's ApplyAdam kernel and beta powers in a Keras 3 optimizer (Keras 3's Adam rounds "
        "1 - beta from float64 and takes beta ** t by pow: drift on some models)",
        "legacy/r07_mnist_mlp.py", twin=True),
    OptimizerRow(
        "tensorflow.train.AdagradOptimizer", "tf.keras.optimizers.Adagrad",
        (Param("learning_rate", 0, "learning_rate"),
         Param("initial_accumulator_value", 1, "initial_accumulator_value", "0.1"),
         Param("use_locking", 2, None, "False"), Param("name", 3, None),
         Param("epsilon", None, "epsilon", "0.0")),
        "TF1 AdagradOptimizer has no epsilon: var -= lr * g / sqrt(accum), accum starts at 0.1",
        "tf2_golden/optimizers/adagrad.py"),
    OptimizerRow(
        "tensorflow.train.AdadeltaOptimizer", "tf.keras.optimizers.Adadelta",
        (Param("learning_rate", 0, "learning_rate", "0.001"), Param("rho", 1, "rho", "0.95"),
         Param("epsilon", 2, "epsilon", "1e-8"),
         Param("use_locking", 3, None, "False"), Param("name", 4, None)),
        "TF1 AdadeltaOptimizer's epsilon is 1e-8 (Keras' default is 1e-7)",
        "tf2_golden/optimizers/adadelta.py"),
    OptimizerRow(
        "tensorflow.train.RMSPropOptimizer", "RMSPropOptimizer",
        (Param("learning_rate", 0, "learning_rate"), Param("decay", 1, "rho", "0.9"),
         Param("momentum", 2, "momentum"), Param("epsilon", 3, "epsilon", "1e-10"),
         Param("use_locking", 4, None, "False"), Param("centered", 5, "centered"),
         Param("name", 6, None)),
        "TF1 RMSPropOptimizer starts the mean-square slot at ones and its epsilon is 1e-10 "
        "(both inside the sqrt, as in Keras 3)",
        "tf2_golden/optimizers/rmsprop.py", twin=True),
    OptimizerRow(
        "tensorflow.train.FtrlOptimizer", "tf.keras.optimizers.Ftrl",
        (Param("learning_rate", 0, "learning_rate"),
         Param("learning_rate_power", 1, "learning_rate_power"),
         Param("initial_accumulator_value", 2, "initial_accumulator_value"),
         Param("l1_regularization_strength", 3, "l1_regularization_strength"),
         Param("l2_regularization_strength", 4, "l2_regularization_strength"),
         Param("use_locking", 5, None, "False"), Param("name", 6, None),
         Param("accum_name", 7, None), Param("linear_name", 8, None),
         Param("l2_shrinkage_regularization_strength", 9, "l2_shrinkage_regularization_strength"),
         Param("beta", 10, "beta")),
        "TF1 FtrlOptimizer and Keras Ftrl share the update rule and defaults",
        "tf2_golden/optimizers/ftrl.py"),
)}

# optimize_loss(optimizer="NAME") names (TF 1.15 contrib/layers/python/layers/optimizers.py).
OPTIMIZE_LOSS_NAMES = {
    "SGD": "tensorflow.train.GradientDescentOptimizer",
    "Adam": "tensorflow.train.AdamOptimizer",
    "Adagrad": "tensorflow.train.AdagradOptimizer",
    "RMSProp": "tensorflow.train.RMSPropOptimizer",
    "Ftrl": "tensorflow.train.FtrlOptimizer",
}


@dataclass(frozen=True)
class SlotRow:
    optimizer: str   # canonical name of the TF1 (or tf.keras) optimizer class
    slot: str        # the name given to get_slot(var, name)
    suffix: str      # the Keras 3 optimizer variable holding the same value: `<var path>` + suffix
    why: str
    proof: str       # fixture whose conversion passes parity and prints the slot's value


# optimizer.get_slot(var, NAME) → the Keras 3 optimizer's variable for `var`. Only rows whose
# values are the same numbers: TF1 Momentum's "momentum" slot is the accumulator, Keras SGD's
# is -lr * accumulator, so it is absent (refused).
SLOTS: dict[tuple, SlotRow] = {(row.optimizer, row.slot): row for row in (
    SlotRow("tensorflow.train.AdamOptimizer", "m", "_m",
            "TF1 AdamOptimizer's twin keeps TF1's first-moment slot `m`: its variable `<path>_m`",
            "legacy/r04_contrib_clip_gradients_by_norm.py"),
    SlotRow("tensorflow.keras.optimizers.Adam", "m", "_momentum",
            "tf-keras Adam's slot \"m\" is Keras 3 Adam's `<path>_momentum` (same rule)",
            "legacy/r05_keras_clipvalue.py"),
)}


def render_markdown() -> str:
    """The README tables: one line per optimizer row, then one per get_slot row."""
    lines = ["| TF 1.x | Keras 3 (TF2 tier) | why | proof |", "|---|---|---|---|"]
    for row in [r for main in OPTIMIZERS.values() for r in (main, main.changing_lr) if r is not None]:
        short = row.tf1.replace("tensorflow.", "tf.")
        extra = " (a twin class written into the script)" if row.twin else ""
        caveat = " (constant learning rate)" if row.changing_lr is not None else ""
        changing = any(m.changing_lr is row for m in OPTIMIZERS.values())
        caveat += " (a learning rate that changes)" if changing else ""
        lines.append(f"| `{short}` | `{row.render()}`{extra}{caveat} | {row.why} | `{row.proof}` |")
    lines += ["", "| TF 1.x slot read | Keras 3 optimizer variable | why | proof |", "|---|---|---|---|"]
    for row in SLOTS.values():
        short = row.optimizer.replace("tensorflow.", "tf.")
        lines.append(f"| `{short}`: `get_slot(v, \"{row.slot}\")` | path ends `{row.suffix}` | {row.why} | `{row.proof}` |")
    return "\n".join(lines) + "\n"

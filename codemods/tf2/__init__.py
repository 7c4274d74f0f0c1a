"""The TF2 tier: a TF 1.x program → its TF 2 form (GradientTape, tf.function steps, Keras state).

    from codemods.tf2 import convert
    result = convert(text, "train.py")   # result.text is None when it cannot be done exactly

The translator reads the program into a model of what TF 1.x built, then writes each part in
its TF 2 home (`../../docs/migrate-tf2.md` has the user's view). Modules, by what they know:

* `translator`: the driver (parse, read, write, check the result);
* `names`: which TensorFlow symbol a name denotes (from the imports); `syntax`: names,
  targets and statements of the script;
* `model`: the model's parts (state, placeholders, values, ops) and abstract values;
* `program`: what the translation has learnt and the services it offers the converters;
  `call_site`: what a converter is given; `interfaces`: the interpreter's parts as converters
  see them;
* `interpret`: reading statements in program order (`assign_statements`,
  `compound_statements`); `expressions`: reading one expression; `helpers` / `inline` /
  `classes`: the script's own functions and classes;
* `constructs`: which module knows a TF call: `variables`, `layers` (+ `keras_layers`),
  `rnn_cells` and `rnn` (→ the exact `twins`, written by `twin_classes`), `optimizers` (+
  `optimizer_table`), `training`, `contrib_training`, `losses`, `data` (+ `mnist_reader`),
  `ops` (plain ops through `api_changes`, TF 2's meaning of a TF 1.x call: `api_names`,
  `api_arguments`);
* `session`: `sess.run` sites → step calls (`fetch_structures`: what a fetch gives back); `steps`: the step functions; `shapes`: static
  shapes; `scopes`: variable and name scopes; `emit`: code templates; `builds`: build-time prints;
* `distribute`: the converted program under `tf.distribute` (`--strategy`).
* `eager`: a TF 1.x eager script (`enable_eager_execution()`): its API mapped in place, no model
  (its optimizers and gradients: `eager_training`).
The layers these modules form, and which may import which: docs/migrate-tf2.md, "Module layers".
Nothing here imports TensorFlow.
"""
from __future__ import annotations

from codemods.tf2._base import Note, Result
from codemods.tf2.translator import translate

RULE = "tf2"

__all__ = ["convert", "Result", "Note"]


def convert(text: str, filename: str = "<string>") -> Result:
    """Convert `text` to the TF2 tier; `Result.text` is None (and a 'human' note says why) if not exact."""
    return translate(text, filename)

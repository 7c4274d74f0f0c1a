"""Write `codemods/tf2/api_spec.py`: TensorFlow's own TF 1 → TF 2 upgrade spec, as data.

    TF_USE_LEGACY_KERAS=1 python tools/gen_api_spec.py            # rewrite the table
    python tools/gen_api_spec.py --check                          # exit 1 if it is stale

TF 2.21 ships `tensorflow/tools/compatibility/` (what `tf_upgrade_v2` knows): symbol renames
(`renames_v2.py` + `all_renames_v2.manual_symbol_renames`), positional orders that changed
(`reorders_v2.py`), and in `tf_upgrade_v2.TFAPIChangeSpec` the keyword renames and removed
arguments, the function transformers, the function and argument warnings and the module
deprecations. This script reads them from the installed TensorFlow and writes them out as
plain Python literals, so `codemods.tf2.api_changes.to_tf2` applies them without importing
TensorFlow. Nothing in the table is typed by hand.

Where tf_upgrade_v2 uses code (a transformer function) instead of data, the table classifies
it: `CLASSIFY` below says, per transformer function, whether tf1clip applies it as a named
exact transform (`codemods/tf2/api_transforms.py`), as data (the `functools.partial`
transformers are data: an argument added, or an argument that must have one value), or
refuses the call because its TF 2 meaning differs. A transformer this script does not know
stops it: a new TensorFlow needs a decision, not a guess.

One table is not in the spec but comes from TensorFlow itself: `SIGNATURE_CHANGES`, for every
TF 1 callable whose TF 2 counterpart (same name, or its rename) takes different parameters,
both parameter lists, so a call's positional arguments can be bound by their TF 1 names and
an argument TF 2 does not take is refused rather than passed to another parameter.
"""
from __future__ import annotations

import argparse
import functools
import inspect
import os
import pprint
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "codemods" / "tf2" / "api_spec.py"

# tf_upgrade_v2's transformer functions → what tf1clip does with a call they apply to.
#   ("transform", NAME): the exact argument transform NAME in codemods/tf2/api_transforms.py
#   ("refuse", WHY): TF 2 has no call with the same meaning; the file stays on the compat tier
CLASSIFY = {
    "_dropout_transformer": ("transform", "keep_prob_to_rate"),
    "_cast_transformer": ("transform", "to_cast"),
    "_softmax_cross_entropy_with_logits_transformer": ("transform", "stop_gradient_labels"),
    "_contrib_layers_l1_regularizer_transformer": ("transform", "l1_regularizer"),
    "_contrib_layers_l2_regularizer_transformer": ("transform", "l2_regularizer"),
    "_iterator_transformer": ("refuse", "a TF 1 dataset iterator (make_one_shot_iterator / "
                                        "make_initializable_iterator) does not exist in TF 2: TF 2 iterates the "
                                        "dataset in Python, which is a change of program structure, not of a call"),
    "_image_resize_transformer": ("refuse", "tf.image.resize_* (TF 1) sample pixels at corners "
                                            "(half_pixel_centers=False); TF 2's tf.image.resize uses half-pixel "
                                            "centers: different numbers"),
    "_extract_glimpse_transformer": ("refuse", "TF 2's tf.image.extract_glimpse fills out-of-image pixels "
                                               "differently from TF 1's"),
    "_pool_seed_transformer": ("refuse", "fractional pooling's seed pair (seed, seed2, deterministic) has "
                                         "no TF 2 counterpart with the same random draws"),
    "_name_scope_transformer": ("refuse", "TF 1's name_scope re-enters a scope by name (and takes "
                                          "default_name/values); TF 2's does neither"),
    "_string_split_rtype_transformer": ("refuse", "tf.strings.split returns a RaggedTensor in TF 2 "
                                                  "(a SparseTensor in TF 1)"),
    "_add_uniform_scaling_initializer_transformer": ("refuse", "uniform_unit_scaling_initializer has no TF 2 "
                                                               "initializer; tf_upgrade_v2 rewrites it to "
                                                               "tf.compat.v1"),
    "_contrib_layers_xavier_initializer_transformer": ("refuse", "tf_upgrade_v2 rewrites it to "
                                                                 "tf.compat.v1.keras.initializers.VarianceScaling"),
    "_contrib_layers_variance_scaling_initializer_transformer": ("refuse", "tf_upgrade_v2 rewrites it to "
                                                                           "tf.compat.v1.keras.initializers."
                                                                           "VarianceScaling"),
    "_add_summary_step_transformer": ("refuse", "tf.contrib.summary needs a step and a writer in TF 2 "
                                                "(tf_upgrade_v2 inserts tf.compat.v1's global step)"),
    "_add_summary_recording_cond_transformer": ("refuse", "tf.contrib.summary recording conditions become "
                                                          "tf.summary.record_if, a change of structure"),
}
# Spec entries tf1clip's tests proved wrong for TF 2.21: each becomes a `refuse` transformer
# (checked before the rename), with the reason; tests/test_api_changes.py shows the numbers.
ENTRY_OVERRIDES = {
    "tf.keras.models.save_model": ("refuse", "tf_upgrade_v2 adds save_format='h5' (Keras 2); Keras 3's "
                                             "save_model takes no save_format and reads the file extension"),
    "tf.image.resize_images": ("refuse", "TF 1's resize_images samples pixel corners (half_pixel_centers=False); "
                                         "the spec renames it to tf.image.resize, which uses half-pixel centers: "
                                         "different numbers"),
    "tf.image.resize": ("refuse", "TF 1's tf.image.resize is resize_images (half_pixel_centers=False); TF 2's "
                                  "uses half-pixel centers: different numbers"),
    "tf.space_to_batch": ("refuse", "TF 1's block_size is one number for both spatial dimensions; the spec renames "
                                    "it to TF 2's block_shape, which must be a list: the call fails or differs"),
    "tf.nn.space_to_batch": ("refuse", "TF 1's block_size is one number for both spatial dimensions; the spec "
                                       "renames it to TF 2's block_shape, which must be a list"),
    # found by tools/gen_api_samples.py: a name the spec keeps, whose TF 2 call fails eagerly
    "tf.parallel_stack": ("refuse", "TF 2's tf.parallel_stack raises RuntimeError outside a tf.function (not "
                                    "compatible with eager execution), where TF 1.x built it in the graph"),
}
# tf_upgrade_v2's predicates for `_rename_if_arg_found_transformer`: the one literal value of
# the argument for which TF 1 behaves as TF 2 does.
PREDICATES = {"_is_ast_true": "True", "_is_ast_false": "False", "_is_ast_str": "<str>"}


def _spec():
    os.environ["TF_USE_LEGACY_KERAS"] = "1"  # one setting, so the table is the same whoever runs this
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from tensorflow.tools.compatibility import all_renames_v2, module_deprecations_v2, reorders_v2, tf_upgrade_v2

    return tf_upgrade_v2.TFAPIChangeSpec(), all_renames_v2, reorders_v2, module_deprecations_v2


def _keep(name: str) -> bool:
    # `contrib_X` entries are tf_upgrade_v2's aliases for `from tensorflow import contrib as
    # contrib_X`-style code; tf1clip resolves imports to qualified names, so they are not needed.
    return not name.startswith("contrib_")


class _Messages:
    def __init__(self):
        self.texts: list[str] = []

    def index(self, text: str) -> int:
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text)


def _transformer(entry, messages: _Messages) -> dict:
    if isinstance(entry, functools.partial):
        kind, kw = entry.func.__name__, dict(entry.keywords)
        if kind == "_rename_if_arg_found_transformer":
            return {"kind": "arg_must_be", "arg": kw["arg_name"], "value": PREDICATES[kw["arg_ok_predicate"].__name__],
                    "remove": bool(kw["remove_if_ok"]), "message": messages.index(kw["message"])}
        if kind == "_add_argument_transformer":
            import ast as _ast

            return {"kind": "add_argument", "arg": kw["arg_name"], "value": repr(_ast.literal_eval(kw["arg_value_ast"]))}
        if kind in CLASSIFY:
            decision, detail = CLASSIFY[kind]
            return {"kind": decision, "reason" if decision == "refuse" else "function": detail}
        raise SystemExit(f"gen_api_spec: unknown tf_upgrade_v2 transformer partial {kind}: classify it in CLASSIFY")
    name = entry.__name__
    if name not in CLASSIFY:
        raise SystemExit(f"gen_api_spec: unknown tf_upgrade_v2 transformer {name}: classify it in CLASSIFY")
    decision, detail = CLASSIFY[name]
    return {"kind": decision, "reason" if decision == "refuse" else "function": detail}


LEVELS = {0: "INFO", 1: "WARNING", 2: "ERROR"}


def _level(value) -> str:
    return LEVELS.get(value, str(value))


# -- signatures, from TensorFlow itself ---------------------------------------------------------
_SKIP_TOP = {"compat", "keras", "estimator"}


def _callables(mod, prefix: str, out: dict, depth: int = 0) -> None:
    for name in dir(mod):
        if name.startswith("_") or (depth == 0 and name in _SKIP_TOP):
            continue
        try:
            value = getattr(mod, name)
        except Exception:  # noqa: BLE001 - a lazily loaded attribute that fails is not API
            continue
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith("tensorflow._api") and depth < 5:
                _callables(value, prefix + name + ".", out, depth + 1)
        elif callable(value):
            out[prefix + name] = value


def _signature(obj):
    """(positional-or-keyword names, keyword-only names, *args?, **kwargs?, {name: default repr}) or None."""
    try:
        sig = inspect.signature(obj)
        params = list(sig.parameters.values())
        if isinstance(obj, type) and [p.kind for p in params] == [inspect.Parameter.VAR_POSITIONAL,
                                                                   inspect.Parameter.VAR_KEYWORD]:
            # a metaclass hides the constructor (tf.Variable): read __init__, without self
            params = list(inspect.signature(obj.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    pos, kwonly, var, varkw, defaults = [], [], False, False, {}
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            pos.append(p.name)
        elif p.kind == p.KEYWORD_ONLY:
            kwonly.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            var = True
        else:
            varkw = True
        if p.default is not p.empty:
            defaults[p.name] = _literal(p.default)
    return pos, kwonly, var, varkw, defaults


def _spell(sig) -> str:
    """Parameters as one line: `x keep_prob noise_shape * name **` (after `*`: keyword-only;
    a final `**`: it takes *args or **kwargs, so any argument is accepted)."""
    words = list(sig[0])
    if sig[1]:
        words += ["*", *sig[1]]
    if sig[2] or sig[3]:
        words.append("**")
    return " ".join(words)


def _literal(value):
    """A default as source text when it is a plain literal, else None (not comparable)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    return None


def _signature_changes(renames: dict) -> tuple[dict, dict]:
    import tensorflow as tf

    v1, v2 = {}, {}
    _callables(tf.compat.v1, "", v1)
    _callables(tf, "", v2)
    changes, defaults = {}, {}
    for name in sorted(v1):
        target = renames.get("tf." + name, "tf." + name)
        if target.startswith("tf.compat."):
            # the spec sends it to tf.compat.v1; if TF 2 has a function of the same name, that one is
            # what the same spelling means in TF 2: compare with it (tf1clip may map to it, and
            # must then know what differs)
            target = "tf." + name
        if target[3:] not in v2 or v1[name] is v2[target[3:]]:
            continue
        s1, s2 = _signature(v1[name]), _signature(v2[target[3:]])
        if s1 is None or s2 is None:
            continue
        if s1[:4] != s2[:4]:
            changes["tf." + name] = (_spell(s1), _spell(s2))
        differ = {p: (s1[4][p], s2[4][p], s2[0].index(p) if p in s2[0] else None)
                  for p in s1[4].keys() & s2[4].keys()
                  if s1[4][p] != s2[4][p] and s1[4][p] is not None and s2[4][p] is not None}
        if differ:
            defaults["tf." + name] = dict(sorted(differ.items()))
    return changes, defaults


def _resolves(tf, name: str) -> bool:
    obj = tf
    for part in name.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - missing, or a lazy module that fails to load
            return False
    return True


def tables() -> dict:
    spec, all_renames_v2, reorders_v2, module_deprecations_v2 = _spec()
    import tensorflow as tf

    messages = _Messages()
    renames = {k: v for k, v in sorted(spec.symbol_renames.items()) if _keep(k)}
    keyword_renames = {k: dict(v) for k, v in sorted(spec.function_keyword_renames.items()) if _keep(k)}
    reorders = {k: list(v) for k, v in sorted(spec.function_reorders.items()) if _keep(k)}
    transformers = {k: _transformer(v, messages) for k, v in spec.function_transformers.items() if _keep(k)}
    transformers.update({k: {"kind": kind, "reason": why} for k, (kind, why) in ENTRY_OVERRIDES.items()})
    transformers = dict(sorted(transformers.items()))
    warnings = {k: (_level(level), messages.index(text)) for k, (level, text) in sorted(spec.function_warnings.items())
                if _keep(k)}
    arg_warnings = {k: {arg: (pos, _level(level), messages.index(text)) for (arg, pos), (level, text) in sorted(v.items())}
                    for k, v in sorted(spec.function_arg_warnings.items()) if _keep(k)}
    modules = {k: (_level(level), messages.index(text))
               for k, (level, text) in sorted(module_deprecations_v2.MODULE_DEPRECATIONS.items())}
    changes, defaults = _signature_changes(renames)
    unavailable = sorted(new for new in set(renames.values())
                         if new.startswith("tf.") and not new.startswith(("tf.compat.v1.", "tf.keras."))
                         and not _resolves(tf, new.replace("tf.compat.v2.", "tf.", 1)))
    return {
        "TF_VERSION": tf.__version__,
        "RENAMES": renames,
        "KEYWORD_RENAMES": keyword_renames,
        "REORDERS": reorders,
        "TRANSFORMERS": transformers,
        "WARNINGS": warnings,
        "ARG_WARNINGS": arg_warnings,
        "MODULE_DEPRECATIONS": modules,
        "UNAVAILABLE": unavailable,
        "SIGNATURE_CHANGES": changes,
        "DEFAULT_CHANGES": defaults,
        "MESSAGES": messages.texts,
    }


HEADER = '''"""TensorFlow's own TF 1 → TF 2 upgrade spec (tf_upgrade_v2, TensorFlow {version}), as data.

GENERATED by `python tools/gen_api_spec.py` from the installed TensorFlow: do not edit.
tests/test_api_spec.py regenerates it and fails on any difference. Read by
`codemods.tf2.api_changes` (which never imports TensorFlow). Names are spelled as
tf_upgrade_v2 spells them (`tf.X`, `*.method`); what each table means:

RENAMES              symbol → its TF 2 name (`tf.compat.v1.X`: TF 2 has nothing with that meaning)
KEYWORD_RENAMES      function → {{TF 1 keyword: TF 2 keyword, or None when TF 2 removed it}}
REORDERS             function → TF 1 positional parameters, None where TF 2 keeps the position
TRANSFORMERS         function → tf_upgrade_v2's code transform, classified by tools/gen_api_spec.py:
                     transform (an exact named transform), arg_must_be / add_argument (data), refuse
WARNINGS             function → (level, MESSAGES index): tf_upgrade_v2 asks for a manual check
ARG_WARNINGS         function → {{argument: (position, level, MESSAGES index)}}
MODULE_DEPRECATIONS  module → (level, MESSAGES index)
UNAVAILABLE          (from TensorFlow) TF 2 names the spec renames to that TF {version} does not have
SIGNATURE_CHANGES    (from TensorFlow, not the spec) TF 1 callable whose TF 2 counterpart (its
                     rename, else the TF 2 function of the same name) takes other parameters → (TF 1 parameters, TF 2 parameters), each spelled
                     `a b * c **` (after `*` keyword-only; `**`: takes *args/**kwargs)
DEFAULT_CHANGES      (from TensorFlow) function → {{parameter: (TF 1 default, TF 2 default, its TF 2
                     position or None)}}, for the literal defaults of parameters both have
"""
# fmt: off
'''


def render(data: dict) -> str:
    out = [HEADER.format(version=data["TF_VERSION"])]
    for key, value in data.items():
        out.append(f"{key} = {pprint.pformat(value, width=110, sort_dicts=False)}\n")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed table differs")
    parser.add_argument("--out", default=str(TABLE), help="where to write (default: the committed table)")
    args = parser.parse_args(argv)
    text = render(tables())
    path = Path(args.out)
    if args.check:
        same = path.is_file() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'up to date' if same else 'STALE (run tools/gen_api_spec.py)'}")
        return 0 if same else 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

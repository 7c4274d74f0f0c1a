"""`tf.flags` / `tf.app.flags` for TF 1.x scripts: absl's flags, and a script's own flag wins a
name absl's logging module took.

absl.logging, which TensorFlow imports, defines `--log_dir`, `--logtostderr`, `-v` and a few
more. Scripts written when `tf.app.flags` was TensorFlow's own parser (TF 1.0-1.4) define such
names themselves (`tf.app.flags.DEFINE_string("log_dir", ...)`) and stop on TF 2.21 with
"DuplicateFlagError: The flag 'log_dir' is defined twice". Here a DEFINE of a name that
absl.logging defined, and that no command line has set, replaces absl's flag with the script's.
"""
import functools

import tensorflow as _tf

_flags = _tf.compat.v1.flags
_ABSL_LOGGING = "absl.logging"


def _free(name) -> None:
    flag_values = _flags.FLAGS
    if name in flag_values and flag_values.find_module_defining_flag(name) == _ABSL_LOGGING \
            and not flag_values[name].present:
        delattr(flag_values, name)


def _define(original):
    @functools.wraps(original)
    def define(name, *args, **kwargs):
        _free(name)
        return original(name, *args, **kwargs)

    return define


def __getattr__(name):
    value = getattr(_flags, name)
    if name.startswith("DEFINE") and callable(value):
        value = _define(value)
    globals()[name] = value
    return value


def __dir__():
    return dir(_flags)

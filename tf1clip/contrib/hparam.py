"""tf.contrib.training.HParams (TF 1.15): named hyperparameters with types fixed at creation.

Each value's type (or its list element type) is recorded when it is added; `set_hparam`,
`parse("a=1,b=[2,3],c[1]=4")`, `parse_json` and `override_from_dict` cast new values to it and
refuse what TF 1.15 refused (a float for an int, a number for a string or a bool, a list for a
scalar and the reverse). `values()`, `to_json(indent, separators, sort_keys)`, `get`,
`del_hparam`, `in` and `str`/`repr` behave as TF 1.15's.
"""
import json
import numbers
import re

PARAM_RE = re.compile(r"""
  (?P<name>[a-zA-Z][\w\.]*)      # name
  (\[\s*(?P<index>\d+)\s*\])?    # optional index
  \s*=\s*
  ((?P<val>[^,\[]*)              # a single value
   |
   \[(?P<vals>[^\]]*)\])         # a list of values
  ($|,\s*)""", re.VERBOSE)


def _cast_to_type_if_compatible(name, param_type, value):
    fail = f"Could not cast hparam '{name}' of type '{param_type}' from value {value!r}"
    if type(value) == param_type:  # noqa: E721 - TF 1.15: isinstance is too weak (True is an int)
        return value
    if issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise ValueError(fail)
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise ValueError(fail)
    return param_type(value)


def parse_values(values, type_map, ignore_unknown=False):
    """'a=1,b=[2,3],c[0]=x' -> {name: value, or {index: value} for indexed assignments}."""
    results = {}
    pos = 0
    while pos < len(values):
        m = PARAM_RE.match(values, pos)
        if not m:
            raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
        pos = m.end()
        groups = m.groupdict()
        name = groups["name"]
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        type_ = type_map[name]

        def parse_fail(value):
            raise ValueError(f"Could not parse hparam '{name}' of type '{type_.__name__}' with value '{value}' "
                             f"in {values}")

        def parse(value):
            if type_ == bool:
                if value in ("true", "True"):
                    return True
                if value in ("false", "False"):
                    return False
                try:
                    return bool(int(value))
                except (ValueError, TypeError):
                    parse_fail(value)
            try:
                return type_(value)
            except (ValueError, TypeError):
                parse_fail(value)

        if groups["index"] is not None:
            if groups["val"] is None:
                parse_fail("")
            entry = results.setdefault(name, {})
            if not isinstance(entry, dict):
                raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
            entry[int(groups["index"])] = parse(groups["val"])
        elif groups["val"] is not None:
            if name in results:
                raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
            results[name] = parse(groups["val"])
        elif groups["vals"] is not None:
            if name in results:
                raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
            results[name] = [parse(e) for e in re.split("[ ,]", groups["vals"]) if e]
        else:
            parse_fail("")
    return results


class HParams:
    _HAS_DYNAMIC_ATTRIBUTES = True

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types = {}
        self._model_structure = model_structure
        if hparam_def:
            raise ValueError("hparam_def (an HParamDef protocol buffer) is not supported: pass the values as keywords")
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast_to_type_if_compatible(name, param_type, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast_to_type_if_compatible(name, param_type, value))

    def del_hparam(self, name):
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        type_map = {name: t for name, (t, _) in self._hparam_types.items()}
        parsed = parse_values(values, type_map)
        for name, value in list(parsed.items()):
            if isinstance(value, dict):  # c[1]=4: an element of a list hyperparameter
                current = list(getattr(self, name))
                for index, element in value.items():
                    current[index] = element
                parsed[name] = current
        return self.override_from_dict(parsed)

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure):
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False):
        def remove_callables(x):
            if isinstance(x, dict):
                return {k: remove_callables(v) for k, v in x.items() if not callable(v)}
            if isinstance(x, list):
                return [remove_callables(i) for i in x if not callable(i)]
            return x

        return json.dumps(remove_callables(self.values()), indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        return {n: getattr(self, n) for n in self._hparam_types}

    def get(self, key, default=None):
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_list = self._hparam_types[key]
            fail = f"Hparam '{key}' of type '{'list<%s>' % param_type if is_list else param_type}' is incompatible " \
                   f"with default={default}"
            if is_list != isinstance(default, list):
                raise ValueError(fail)
            try:
                for value in default if is_list else [default]:
                    _cast_to_type_if_compatible(key, param_type, value)
            except ValueError as exc:
                raise ValueError(f"{fail}. {exc}") from None
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return ",".join(f"{k}={v}" for k, v in self.values().items())

    def __repr__(self):
        return f"{type(self).__name__}({sorted(self.values().items())})"

"""NEP 50 at TensorFlow's door, for `tf1clip run`: a narrow NumPy integer given as a shape or index.

NumPy 1.x promoted a NumPy scalar combined with a Python int to int64 (`np.max(uint8_labels) +
1` was `int64`); NumPy 2 keeps the scalar's type (NEP 50: `uint8`), and TensorFlow refuses a
uint8 shape ("Value passed to parameter 'shape' has DataType uint8 not in list of allowed
values: int32, int64"). While installed, a NumPy integer of a type TensorFlow does not take
there (a scalar, a 0-d array, a list or tuple made only of such scalars) is handed to it as
int64 (int32 where the op takes only that), as NumPy 1.x's arithmetic made it:

- an op input whose type the op's definition restricts (`Slice`'s `begin`, `OneHot`'s `depth`,
  `RandomStandardNormal`'s `shape`, ...), checked against the op's own list before TensorFlow
  converts anything, so no op is made twice and graph seeds are not shifted;
- `shape_util.shape_tensor`, which the random ops and initializers call before making their op.

Arrays of more than zero dimensions are left alone: `labels + 1` stayed uint8 in NumPy 1.x as
well. Values where the op accepts the type are left alone (`tf.add(uint8_tensor, np.uint8(1))`).
The first time a line of the user's needs it, stderr names the line.
"""
from __future__ import annotations

import os
import sys
from typing import Callable

import numpy as np

# NumPy integer types TensorFlow refuses as shapes and indices (its shape ops take int32/int64).
_NARROW = (np.uint8, np.int8, np.uint16, np.int16, np.uint32)


def narrow_integer(value):
    """The NumPy dtype when `value` is a narrow NumPy integer scalar, 0-d array, or a non-empty
    list/tuple made only of such scalars; else None."""
    if isinstance(value, (list, tuple)):
        kinds = {narrow_integer(item) for item in value}
        return kinds.pop() if len(kinds) == 1 and None not in kinds and not any(
            isinstance(item, (list, tuple)) for item in value) else None
    if isinstance(value, _NARROW):
        return value.dtype
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.type in _NARROW:
        return value.dtype
    return None


class NumpyIntegerShapes:
    """Installs the conversion on TensorFlow's op builder and shape_tensor (and undoes it)."""

    def __init__(self, is_user_file: Callable[[str], bool], stream=None):
        self.is_user_file = is_user_file
        self.stream = stream if stream is not None else sys.stderr
        self._noted: set = set()
        self._originals = None

    def install(self) -> None:
        from tensorflow.python.framework import op_def_library
        from tensorflow.python.ops import shape_util

        apply_op, shape_tensor = op_def_library._apply_op_helper, shape_util.shape_tensor
        shapes = self

        def _apply_op_helper(op_type_name, name=None, **keywords):
            return apply_op(op_type_name, name=name, **shapes.widen(op_type_name, keywords))

        def shape_tensor_(shape):
            if narrow_integer(shape) is not None:
                shapes.note(np.asarray(shape).dtype, "a shape")
                shape = np.asarray(shape, dtype=np.int64)
            return shape_tensor(shape)

        self._originals = (apply_op, shape_tensor)
        op_def_library._apply_op_helper, shape_util.shape_tensor = _apply_op_helper, shape_tensor_

    def uninstall(self) -> None:
        if self._originals is not None:
            from tensorflow.python.framework import op_def_library
            from tensorflow.python.ops import shape_util

            op_def_library._apply_op_helper, shape_util.shape_tensor = self._originals
            self._originals = None

    def widen(self, op_type_name: str, keywords: dict) -> dict:
        """`keywords` with each narrow NumPy integer the op's definition refuses made int64."""
        candidates = [key for key, value in keywords.items() if narrow_integer(value) is not None]
        if not candidates:
            return keywords
        from tensorflow.python.framework import dtypes, op_def_registry

        op_def = op_def_registry.get(op_type_name)
        if op_def is None:
            return keywords
        attrs = {attr.name: attr for attr in op_def.attr}
        args = {arg.name: arg for arg in op_def.input_arg}
        widened = dict(keywords)
        for key in candidates:
            arg = args.get(key)
            if arg is None or arg.number_attr or arg.type_list_attr:
                continue
            if arg.type_attr:
                attr = attrs[arg.type_attr]
                allowed = list(attr.allowed_values.list.type) if attr.HasField("allowed_values") else []
            else:
                allowed = [arg.type]
            dtype = narrow_integer(keywords[key])
            if not allowed or dtypes.as_dtype(dtype).as_datatype_enum in allowed:
                continue
            for target in (dtypes.int64, dtypes.int32):
                if target.as_datatype_enum in allowed:
                    widened[key] = np.asarray(keywords[key], dtype=target.as_numpy_dtype)
                    self.note(dtype, f"{op_type_name}'s {key}")
                    break
        return widened

    def note(self, dtype, what: str) -> None:
        frame = sys._getframe(2)
        while frame is not None and not self.is_user_file(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is None:
            return
        where = (frame.f_code.co_filename, frame.f_lineno)
        if where in self._noted:
            return
        self._noted.add(where)
        path = os.path.relpath(where[0]) if where[0].startswith(os.getcwd() + os.sep) else where[0]
        print(f"tf1clip: {path}:{where[1]}: a NumPy {np.dtype(dtype).name} value given to TensorFlow as {what}: "
              f"NumPy 2 keeps a NumPy scalar's type in arithmetic with a Python int, NumPy 1.x made it int64 "
              f"(NEP 50); TensorFlow gets it as int64, as under NumPy 1.x", file=self.stream)

"""tf.contrib.rnn's cell wrappers and `Linear` (TF 1.15 core_rnn_cell), on tf-keras' legacy cells.

- `Linear(args, output_size, build_bias)`: variables `kernel` [sum of input depths, output_size]
  and `bias` (zeros) in the current variable scope; calling it concatenates `args` and applies
  them. The legacy seq2seq functions build their projections with it.
- `EmbeddingWrapper`: looks ids up in an `embedding` variable (uniform(-sqrt 3, sqrt 3) unless
  the scope has an initializer) before the wrapped cell.
- `InputProjectionWrapper` / `OutputProjectionWrapper`: a `Linear` before / after the cell.
"""
from __future__ import annotations

import math

import tensorflow as tf

nest = tf.nest
_v1 = tf.compat.v1
RNNCell = _v1.nn.rnn_cell.RNNCell


class Linear:
    """TF 1.15's rnn_cell_impl._Linear: one matmul over the concatenated args, plus a bias."""

    def __init__(self, args, output_size, build_bias, bias_initializer=None, kernel_initializer=None):
        self._build_bias = build_bias
        if args is None or (nest.is_nested(args) and not args):
            raise ValueError("`args` must be specified")
        self._is_sequence = nest.is_nested(args)
        args = list(args) if self._is_sequence else [args]
        total = 0
        for shape in (a.shape for a in args):
            if shape.rank != 2:
                raise ValueError(f"linear is expecting 2D arguments: {[a.shape for a in args]}")
            if tf.compat.dimension_value(shape[1]) is None:
                raise ValueError(f"linear expects shape[1] to be provided for shape {shape}, but saw None")
            total += tf.compat.dimension_value(shape[1])
        dtype = args[0].dtype
        with _v1.variable_scope(_v1.get_variable_scope()) as outer:
            self._weights = _v1.get_variable("kernel", [total, output_size], dtype=dtype,
                                             initializer=kernel_initializer)
            if build_bias:
                with _v1.variable_scope(outer) as inner:
                    inner.set_partitioner(None)
                    self._biases = _v1.get_variable(
                        "bias", [output_size], dtype=dtype,
                        initializer=bias_initializer or _v1.constant_initializer(0.0, dtype=dtype))

    def __call__(self, args):
        args = list(args) if self._is_sequence else [args]
        res = tf.matmul(args[0] if len(args) == 1 else tf.concat(args, 1), self._weights)
        return tf.nn.bias_add(res, self._biases) if self._build_bias else res


class _Wrapper(RNNCell):
    """A cell around `self._cell`: its state, its output and zero state unless changed."""

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size, dtype):
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)


class EmbeddingWrapper(_Wrapper):
    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        super().__init__(_reuse=reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(f"Both embedding_classes and embedding_size must be > 0: "
                             f"{embedding_classes}, {embedding_size}.")
        self._cell = cell
        self._embedding_classes = embedding_classes
        self._embedding_size = embedding_size
        self._initializer = initializer

    def call(self, inputs, state):
        with tf.device("/cpu:0"):
            initializer = self._initializer or _v1.get_variable_scope().initializer or \
                _v1.random_uniform_initializer(-math.sqrt(3), math.sqrt(3))
            dtype = state[0].dtype if isinstance(state, tuple) else state.dtype
            embedding = _v1.get_variable("embedding", [self._embedding_classes, self._embedding_size],
                                         initializer=initializer, dtype=dtype)
            embedded = tf.nn.embedding_lookup(embedding, tf.reshape(inputs, [-1]))
        return self._cell(embedded, state)


class InputProjectionWrapper(_Wrapper):
    def __init__(self, cell, num_proj, activation=None, input_size=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._cell, self._num_proj, self._activation, self._linear = cell, num_proj, activation, None

    def call(self, inputs, state):
        if self._linear is None:
            self._linear = Linear(inputs, self._num_proj, True)
        projected = self._linear(inputs)
        if self._activation:
            projected = self._activation(projected)
        return self._cell(projected, state)


class OutputProjectionWrapper(_Wrapper):
    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        if output_size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {output_size}.")
        self._cell, self._output_size, self._activation, self._linear = cell, output_size, activation, None

    output_size = property(lambda self: self._output_size)

    def call(self, inputs, state):
        output, res_state = self._cell(inputs, state)
        if self._linear is None:
            self._linear = Linear(output, self._output_size, True)
        projected = self._linear(output)
        if self._activation:
            projected = self._activation(projected)
        return projected, res_state

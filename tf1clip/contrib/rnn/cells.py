"""tf.contrib.rnn's extra cells (TF 1.15), on tf-keras' legacy LayerRNNCell and TF's own kernels.

- `LSTMBlockCell`: TF's fused `LSTMBlockCell` kernel (still in TF 2.21): gates [i, ci, f, o]
  from [x, h] W + b, f += forget_bias, optional peepholes and cell clip; state (c, h).
  Variables `kernel`, `bias` (and `w_i_diag`, `w_f_diag`, `w_o_diag`), scope `lstm_cell`.
- `GRUBlockCell`: TF's `GRUBlockCell` kernel: [r, u] = sigmoid([x, h] w_ru + b_ru) (b_ru starts
  at 1), c = tanh([x, r h] w_c + b_c), h' = u h + (1 - u) c. Variables `w_ru`, `b_ru`, `w_c`, `b_c`.
- `LayerNormBasicLSTMCell`: gates [i, j, f, o] = [x, h] kernel (a bias only without layer norm),
  each layer-normalized (scopes input/transform/forget/output, then state for the new c, with
  `gamma`/`beta` starting at norm_gain/norm_shift, epsilon 1e-12), recurrent dropout on j.
- `stack_bidirectional_dynamic_rnn` / `stack_bidirectional_rnn`: bidirectional layers, each
  fed the concatenated outputs of the one below (scopes `cell_0`, `cell_1`, ...).
"""
from __future__ import annotations

import tensorflow as tf

_v1 = tf.compat.v1
LSTMStateTuple = _v1.nn.rnn_cell.LSTMStateTuple
# The base of tf.compat.v1.nn.rnn_cell.BasicLSTMCell & co (TF 1.x's rnn_cell_impl.LayerRNNCell):
# variables are made in build(), under the cell's own scope.
LayerRNNCell = _v1.nn.rnn_cell.BasicLSTMCell.__mro__[1]


class LSTMBlockCell(LayerRNNCell):
    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, dtype=None, reuse=None,
                 name="lstm_cell"):
        super().__init__(_reuse=reuse, dtype=dtype, name=name)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._use_peephole = use_peephole
        self._cell_clip = cell_clip if cell_clip is not None else -1

    state_size = property(lambda self: LSTMStateTuple(self._num_units, self._num_units))
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape):
        input_size = tf.compat.dimension_value(tf.TensorShape(inputs_shape)[1])
        if not input_size:
            raise ValueError(f"Expecting inputs_shape[1] to be set: {inputs_shape}")
        self._kernel = self.add_weight("kernel", [input_size + self._num_units, self._num_units * 4])
        self._bias = self.add_weight("bias", [self._num_units * 4], initializer=_v1.constant_initializer(0.0))
        if self._use_peephole:
            self._w_i_diag = self.add_weight("w_i_diag", [self._num_units])
            self._w_f_diag = self.add_weight("w_f_diag", [self._num_units])
            self._w_o_diag = self.add_weight("w_o_diag", [self._num_units])
        self.built = True

    def call(self, inputs, state):
        if len(state) != 2:
            raise ValueError("Expecting state to be a tuple with length 2.")
        cell_state, h_prev = state
        if self._use_peephole:
            wci, wcf, wco = self._w_i_diag, self._w_f_diag, self._w_o_diag
        else:
            wci = wcf = wco = tf.zeros([self._num_units], dtype=self.dtype)
        outs = tf.raw_ops.LSTMBlockCell(x=inputs, cs_prev=cell_state, h_prev=h_prev, w=self._kernel, wci=wci, wcf=wcf,
                                        wco=wco, b=self._bias, forget_bias=self._forget_bias,
                                        cell_clip=self._cell_clip, use_peephole=self._use_peephole)
        cs, h = outs[1], outs[6]
        return h, LSTMStateTuple(cs, h)


class GRUBlockCell(LayerRNNCell):
    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        super().__init__(_reuse=reuse, name=name)
        if (cell_size is None) == (num_units is None):
            raise ValueError("Exactly one of num_units or cell_size must be provided.")
        self._cell_size = num_units if num_units is not None else cell_size

    state_size = property(lambda self: self._cell_size)
    output_size = property(lambda self: self._cell_size)

    def build(self, inputs_shape):
        input_size = tf.compat.dimension_value(tf.TensorShape(inputs_shape)[1])
        if not input_size:
            raise ValueError(f"Expecting input_size to be set, got {inputs_shape}")
        self._gate_kernel = self.add_weight("w_ru", [input_size + self._cell_size, self._cell_size * 2])
        self._gate_bias = self.add_weight("b_ru", [self._cell_size * 2], initializer=_v1.constant_initializer(1.0))
        self._candidate_kernel = self.add_weight("w_c", [input_size + self._cell_size, self._cell_size])
        self._candidate_bias = self.add_weight("b_c", [self._cell_size], initializer=_v1.constant_initializer(0.0))
        self.built = True

    def call(self, inputs, h_prev):
        new_h = tf.raw_ops.GRUBlockCell(x=inputs, h_prev=h_prev, w_ru=self._gate_kernel, w_c=self._candidate_kernel,
                                        b_ru=self._gate_bias, b_c=self._candidate_bias)[3]
        return new_h, new_h


class LayerNormBasicLSTMCell(_v1.nn.rnn_cell.RNNCell):
    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=tf.tanh, layer_norm=True,
                 norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0, dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._activation = activation
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    state_size = property(lambda self: LSTMStateTuple(self._num_units, self._num_units))
    output_size = property(lambda self: self._num_units)

    def _norm(self, inp, scope, dtype=tf.float32):
        shape = inp.shape[-1:]
        with _v1.variable_scope(scope):
            gamma = _v1.get_variable("gamma", shape=shape, dtype=dtype,
                                     initializer=_v1.constant_initializer(self._norm_gain))
            beta = _v1.get_variable("beta", shape=shape, dtype=dtype,
                                    initializer=_v1.constant_initializer(self._norm_shift))
            # contrib.layers.layer_norm over the last axis: variance_epsilon 1e-12.
            mean, variance = tf.nn.moments(inp, [1], keepdims=True)
            return tf.nn.batch_normalization(inp, mean, variance, offset=beta, scale=gamma, variance_epsilon=1e-12)

    def _linear(self, args):
        out_size = 4 * self._num_units
        weights = _v1.get_variable("kernel", [tf.compat.dimension_value(args.shape[-1]), out_size], dtype=args.dtype)
        out = tf.matmul(args, weights)
        if not self._layer_norm:
            out = tf.nn.bias_add(out, _v1.get_variable("bias", [out_size], dtype=args.dtype))
        return out

    def call(self, inputs, state):
        c, h = state
        args = tf.concat([inputs, h], 1)
        i, j, f, o = tf.split(self._linear(args), num_or_size_splits=4, axis=1)
        dtype = args.dtype
        if self._layer_norm:
            i, j = self._norm(i, "input", dtype), self._norm(j, "transform", dtype)
            f, o = self._norm(f, "forget", dtype), self._norm(o, "output", dtype)
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = _v1.nn.dropout(g, keep_prob=self._keep_prob, seed=self._seed)
        new_c = c * tf.sigmoid(f + self._forget_bias) + tf.sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state", dtype)
        new_h = self._activation(new_c) * tf.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None,
                                    dtype=None, sequence_length=None, parallel_iterations=None, time_major=False,
                                    scope=None, swap_memory=False):
    _check_stack(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw, prev_layer = [], [], inputs
    with _v1.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with _v1.variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = _v1.nn.bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, prev_layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, parallel_iterations=parallel_iterations, dtype=dtype,
                    swap_memory=swap_memory, time_major=time_major)
                prev_layer = tf.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None, initial_states_bw=None, dtype=None,
                            sequence_length=None, scope=None):
    _check_stack(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    if not inputs:
        raise ValueError("inputs must not be empty")
    states_fw, states_bw, prev_layer = [], [], inputs
    with _v1.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with _v1.variable_scope(f"cell_{i}") as cell_scope:
                prev_layer, state_fw, state_bw = _v1.nn.static_bidirectional_rnn(
                    cell_fw, cell_bw, prev_layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, dtype=dtype, scope=cell_scope)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)


def _check_stack(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list) or not isinstance(cells_bw, list):
        raise ValueError("cells_fw and cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")
    if initial_states_fw is not None and (not isinstance(initial_states_fw, list)
                                          or len(initial_states_fw) != len(cells_fw)):
        raise ValueError("initial_states_fw must be a list of state tensors (one per layer).")
    if initial_states_bw is not None and (not isinstance(initial_states_bw, list)
                                          or len(initial_states_bw) != len(cells_bw)):
        raise ValueError("initial_states_bw must be a list of state tensors (one per layer).")

"""Exact TF 2 twins of TF 1.x optimizers whose Keras 3 counterpart differs in the last digits.

TF 1.x's `tf.train.AdamOptimizer` ran the ApplyAdam kernel with `1 - beta` computed in float32
and the beta powers kept as variables multiplied once per update. Keras 3's Adam rounds
`1 - beta` from float64 and takes `beta ** t` by `pow`: last-digit differences that Adam's
normalized steps turn into visible drift on some models (parity fails on
fixtures/legacy/r07_mnist_mlp.py). The twin is a Keras 3 optimizer (so `apply_gradients`,
checkpoints and `tf.distribute` treat it as one) whose update is TF 1.x's kernel,
`tf.raw_ops.ResourceApplyAdam`, with TF 1.x's beta powers: the same numbers, bit for bit.
Its slots are named as TF 1.x named them (`m`, `v`).

TF 1.x's `tf.train.RMSPropOptimizer` started its mean-square slot at ones; Keras 3's RMSprop at
zeros (the update is otherwise the same). Its twin is Keras' class, its slot made with ones, so
it holds for every way the optimizer is used: minimize, apply_gradients of any list, two lists.

TF 1.x's `tf.train.MomentumOptimizer` keeps `accum = m * accum + g` and steps `lr * accum`; Keras 3's
SGD keeps the velocity `-lr * accum`. With a constant rate they are one update; with a rate that
changes, Keras' velocity carries the rates of past steps. Its twin runs TF 1.x's ApplyMomentum kernel.
"""
from __future__ import annotations

from functools import lru_cache

import libcst as cst
from libcst.helpers import parse_template_module

ADAM = '''

class {name}({tf}.keras.optimizers.Optimizer):
    """TF 1.x's AdamOptimizer as a Keras optimizer: its ApplyAdam kernel and its beta powers
    (kept as products, updated once per step), so the updates are TF 1.x's to the last digit."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, name="Adam"):
        super().__init__(learning_rate=learning_rate, name=name)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self.m = [self.add_variable_from_reference(v, "m") for v in var_list]
        self.v = [self.add_variable_from_reference(v, "v") for v in var_list]
        self.beta1_power = self.add_variable((), initializer={tf}.constant_initializer(self.beta1), name="beta1_power")
        self.beta2_power = self.add_variable((), initializer={tf}.constant_initializer(self.beta2), name="beta2_power")

    def update_step(self, gradient, variable, learning_rate):
        i = self._get_variable_index(variable)
        if isinstance(gradient, {tf}.IndexedSlices):  # TF 1.x's sparse update: duplicates summed, rows decayed
            indices, positions = {tf}.unique(gradient.indices)
            values = {tf}.math.unsorted_segment_sum(gradient.values, positions, {tf}.shape(indices)[0])
            lr = learning_rate * {tf}.sqrt(1 - self.beta2_power) / (1 - self.beta1_power)
            self.m[i].assign(self.m[i] * self.beta1)
            {tf}.raw_ops.ResourceScatterAdd(
                resource=self.m[i].handle, indices=indices, updates=values * (1 - {tf}.constant(self.beta1)))
            self.v[i].assign(self.v[i] * self.beta2)
            {tf}.raw_ops.ResourceScatterAdd(
                resource=self.v[i].handle, indices=indices, updates=values * values * (1 - {tf}.constant(self.beta2)))
            variable.assign_sub(lr * self.m[i] / ({tf}.sqrt(self.v[i]) + self.epsilon))
            return
        {tf}.raw_ops.ResourceApplyAdam(
            var=variable.handle, m=self.m[i].handle, v=self.v[i].handle, beta1_power=self.beta1_power,
            beta2_power=self.beta2_power, lr=learning_rate, beta1=self.beta1, beta2=self.beta2,
            epsilon=self.epsilon, grad=gradient)

    def apply(self, grads, trainable_variables=None):
        super().apply(grads, trainable_variables)
        self.beta1_power.assign(self.beta1_power * self.beta1)
        self.beta2_power.assign(self.beta2_power * self.beta2)
'''
RMSPROP = '''

class {name}({tf}.keras.optimizers.RMSprop):
    """TF 1.x's RMSPropOptimizer as a Keras optimizer: Keras' RMSprop update, which is TF 1.x's (epsilon inside
    the square root), with TF 1.x's mean-square slot, which starts at ones where Keras' starts at zeros. The
    slots are made when the optimizer is built (its first update, or `build`), whatever the variable list."""

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        if name == "velocity":
            initializer = "ones"
        return super().add_optimizer_variables(trainable_variables, name, initializer)
'''
MOMENTUM = '''

class {name}({tf}.keras.optimizers.Optimizer):
    """TF 1.x's MomentumOptimizer as a Keras optimizer: its ApplyMomentum kernel, accum = momentum * accum + g,
    var -= lr * accum with the rate of this step (Keras' SGD keeps -lr * accum, with the rates of past steps)."""

    def __init__(self, learning_rate, momentum, use_nesterov=False, name="Momentum"):
        super().__init__(learning_rate=learning_rate, name=name)
        self.momentum, self.use_nesterov = momentum, use_nesterov

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self.accumulators = [self.add_variable_from_reference(v, "momentum") for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        accum = self.accumulators[self._get_variable_index(variable)]
        if isinstance(gradient, {tf}.IndexedSlices):  # TF 1.x's sparse update: duplicate rows summed first
            indices, positions = {tf}.unique(gradient.indices)
            values = {tf}.math.unsorted_segment_sum(gradient.values, positions, {tf}.shape(indices)[0])
            {tf}.raw_ops.ResourceSparseApplyMomentum(
                var=variable.handle, accum=accum.handle, lr=learning_rate, grad=values, indices=indices,
                momentum={tf}.cast(self.momentum, variable.dtype), use_nesterov=self.use_nesterov)
            return
        {tf}.raw_ops.ResourceApplyMomentum(
            var=variable.handle, accum=accum.handle, lr=learning_rate, grad=gradient,
            momentum={tf}.cast(self.momentum, variable.dtype), use_nesterov=self.use_nesterov)
'''
SOURCES = {"AdamOptimizer": ADAM, "RMSPropOptimizer": RMSPROP, "MomentumOptimizer": MOMENTUM}


def definitions(twin: str, name: str, alias: str) -> list:
    """The twin class `twin`'s statements, named `name`, with the module's name for TensorFlow."""
    return list(_parsed(twin, name, alias))


@lru_cache(maxsize=32)
def _parsed(twin: str, name: str, alias: str) -> tuple:
    """The template parsed once per spelling of its names (libcst's nodes are immutable, so a
    tree may share them; parsing a twin took about 50 ms a file)."""
    return tuple(parse_template_module(SOURCES[twin], tf=cst.Name(alias), name=cst.Name(name)).body)

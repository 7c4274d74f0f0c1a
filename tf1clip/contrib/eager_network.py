"""`tfe.Network` and `tfe.Sequential`: TF 1.x's eager model containers (TF 1.4-1.15 contrib).

TF 1.15's `Network` was a `tf.layers.Layer` whose `call` uses layers registered with
`track_layer`; it exported their variables (`variables`, `trainable_variables`, ...) in the
order the layers were tracked, and created them under a variable scope named after the network
(`neural_net/dense/kernel`, uniquified per graph: `neural_net_1/...`). TF 2.21 has no such
class; this one keeps that contract on TF 2.21's eager execution and in graph mode, and is
trackable, so `tfe.Checkpoint(model=net)` saves and restores it. `add_variable` was
unsupported in TF 1.15 and is refused here too; so is `save_network_checkpoint` (use
`tfe.Checkpoint`).
"""
from __future__ import annotations

import inspect
import re

import tensorflow as _tf
from tensorflow.python.trackable import autotrackable as _autotrackable

from tf1clip.errors import UnsupportedSymbol


def _snake_case(name: str) -> str:
    """TF 1.x's layer naming: `NeuralNet` → `neural_net`."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
    return "private" + name if name.startswith("_") else name


class Network(_autotrackable.AutoTrackable):
    """A model made of tracked layers; subclasses define `call(inputs, ...)`."""

    def __init__(self, name=None):
        self._given_name = name
        self._tracked = []
        self._scope = None
        self.built = False

    @property
    def name(self) -> str:
        if self._scope is not None:
            return self._scope.name
        return self._given_name or _snake_case(type(self).__name__)

    def track_layer(self, layer):
        """Register `layer` (a tf.layers / tf.keras layer or another Network); returns it."""
        if not (isinstance(layer, Network) or (callable(layer) and hasattr(layer, "trainable_variables"))):
            raise TypeError(f"Network.track_layer() passed type {type(layer).__name__}, not a tf.layers.Layer")
        if any(layer is seen for seen in self._tracked):
            raise ValueError(f"the layer {getattr(layer, 'name', layer)!r} was tracked twice by this Network")
        self._tracked.append(layer)
        return layer

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError("a tfe.Network subclass defines call(inputs)")

    def __call__(self, inputs, *args, **kwargs):
        if self._scope is None:
            with _tf.compat.v1.variable_scope(self._given_name, default_name=_snake_case(type(self).__name__)) as scope:
                self._scope = scope
                outputs = self.call(inputs, *args, **kwargs)
        else:
            with _tf.compat.v1.variable_scope(self._scope, auxiliary_name_scope=False), \
                    _tf.name_scope(self._scope.original_name_scope):
                outputs = self.call(inputs, *args, **kwargs)
        self.built = True
        return outputs

    @property
    def layers(self) -> list:
        return list(self._tracked)

    def get_layer(self, name=None, index=None):
        """A tracked layer by index or by name (TF 1.15: index first; exactly one of them)."""
        if (name is None) == (index is None):
            raise ValueError("Provide either a layer name or layer index.")
        if index is not None:
            if len(self._tracked) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only has "
                                 f"{len(self._tracked)} layers.")
            return self._tracked[index]
        for layer in self._tracked:
            if getattr(layer, "name", None) == name:
                return layer
        raise ValueError(f"No such layer: {name}")

    def _collect(self, attribute: str) -> list:
        seen, out = set(), []
        for layer in self._tracked:
            for item in getattr(layer, attribute):
                if id(item) not in seen:
                    seen.add(id(item))
                    out.append(item)
        return out

    @property
    def variables(self) -> list:
        return self._collect("variables")

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return self._collect("trainable_variables")

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return self._collect("non_trainable_variables")

    non_trainable_weights = non_trainable_variables

    @property
    def losses(self) -> list:
        return [loss for layer in self._tracked for loss in getattr(layer, "losses", [])]

    @property
    def updates(self) -> list:
        return [update for layer in self._tracked for update in getattr(layer, "updates", [])]

    def add_variable(self, *args, **kwargs):
        raise UnsupportedSymbol("tf.contrib.eager.Network.add_variable",
                                "create the variable in a layer and track_layer() it (TF 1.15 refused it too)")

    add_weight = add_variable


class Sequential(Network):
    """Layers (or functions) applied in order; `training` goes to the layers whose call takes it."""

    def __init__(self, layers_funcs=None, name=None):
        super().__init__(name=name)
        self._layers_funcs = []
        for item in layers_funcs or ():
            self.add(item)

    def add(self, layer_func):
        if not callable(layer_func):
            raise TypeError(f"Sequential.add() takes only tf.layers.Layer objects or callables; not {layer_func!r}")
        if isinstance(layer_func, Network) or hasattr(layer_func, "trainable_variables"):
            self.track_layer(layer_func)
        self._layers_funcs.append(layer_func)

    def call(self, inputs, training=None):
        for layer in self._layers_funcs:
            if training is not None and _takes_training(layer):
                inputs = layer(inputs, training=training)
            else:
                inputs = layer(inputs)
        return inputs


def _takes_training(layer) -> bool:
    call = getattr(layer, "call", layer)
    try:
        return "training" in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False

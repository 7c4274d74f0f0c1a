"""Keras 3 optimizers: `BaseOptimizer.apply`, which `apply_gradients` and `fit` call."""
from __future__ import annotations

from tf1clip.parity.post_import import after_import
from tf1clip.parity.updates import on_update
from tf1clip.steps import wrap


def install(rec) -> None:
    """When Keras 3's optimizers are imported (a TF 1.x script never imports them)."""
    after_import("keras.src.optimizers.base_optimizer", lambda module: _install(rec, module))


def _install(rec, base_optimizer) -> None:
    def make_keras3_apply(original):
        def apply(self, grads, trainable_variables=None):
            if trainable_variables is None:
                return original(self, grads, trainable_variables)
            grads = list(grads)
            variables = list(trainable_variables)
            if not self.built:
                # build (creating slots) as apply would, but outside the control dependency
                # on the recording callback: variables made under it cannot be lifted out
                # of a tf.function
                from keras.src import backend as keras_backend

                with keras_backend.name_scope(self.name, caller=self):
                    self.build(variables)
                self.built = True
            kept = [(g, v) for g, v in zip(grads, variables) if g is not None]
            return on_update(rec, self, kept, lambda: original(self, grads, variables),
                             post_fn=lambda gs: self._clip_gradients(gs))
        return apply

    wrap(base_optimizer.BaseOptimizer, "apply", make_keras3_apply)

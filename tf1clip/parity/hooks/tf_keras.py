"""tf-keras (Keras 2) optimizers, what `tf.keras` is under TF_USE_LEGACY_KERAS=1 (the TF 1.x face):
`OptimizerV2.apply_gradients`, with the optimizer's own clipvalue/clipnorm in the post-clip norm."""
from __future__ import annotations

import os

from tf1clip.parity.post_import import after_import
from tf1clip.parity.updates import on_update
from tf1clip.steps import wrap


def install(rec) -> None:
    """When tf-keras's optimizers are imported (a script that uses no tf.keras never imports them)."""
    if os.environ.get("TF_USE_LEGACY_KERAS") not in ("1", "true", "True"):
        return
    after_import("tf_keras.src.optimizers.legacy.optimizer_v2", lambda module: _install(rec, module))


def _install(rec, optimizer_v2) -> None:
    def make_v2_apply(original):
        def apply_gradients(self, grads_and_vars, *args, **kwargs):
            pairs = list(grads_and_vars)
            kept = [(g, v) for g, v in pairs if g is not None]

            def post(gs):
                return [g for g, _ in self._transform_gradients(list(zip(gs, [v for _, v in kept])))]

            return on_update(rec, self, kept, lambda: original(self, pairs, *args, **kwargs), post_fn=post)
        return apply_gradients

    wrap(optimizer_v2.OptimizerV2, "apply_gradients", make_v2_apply)

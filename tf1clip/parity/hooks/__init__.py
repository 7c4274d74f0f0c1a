"""Hooks that let the recorder see a script's training without editing it, one module per family:

- calls.py       TF 2: tf.function calls, NEW's computations (what they return, when they run)
- gradients.py   where gradients come from: compute_gradients, tf.gradients, GradientTape
- graph.py       TF1 graph mode: tf.compat.v1 optimizers' apply_gradients, Session.run / close
- keras3.py      Keras 3 optimizers (apply, used by apply_gradients and fit)
- tf_keras.py    tf-keras (legacy Keras 2) optimizers, under TF_USE_LEGACY_KERAS=1
"""
from __future__ import annotations

from tf1clip.parity.hooks import calls, gradients, graph, keras3, tf_keras


def install_hooks(rec) -> None:
    """Install every family's hooks for `rec` (a Recorder)."""
    calls.install(rec)
    gradients.install(rec)
    graph.install(rec)
    keras3.install(rec)
    tf_keras.install(rec)

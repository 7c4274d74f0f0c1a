"""`tf.app` for TF 1.x scripts: `run` (absl's, as TF 1.15's) and `flags` (tf1clip.v1.flags)."""
import tensorflow as _tf

from tf1clip.v1 import flags

run = _tf.compat.v1.app.run

__all__ = ["flags", "run"]

"""tf.contrib.tensorboard: `plugins.projector` (the embedding projector's config)."""

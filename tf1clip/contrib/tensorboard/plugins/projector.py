"""tf.contrib.tensorboard.plugins.projector (TF 1.15): the embedding projector's configuration.

`ProjectorConfig`, `EmbeddingInfo`, `SpriteMetadata` are the projector's protocol buffers (the
copy tf-keras ships, same fields and text format); `visualize_embeddings(writer, config)`
writes `projector_config.pbtxt` into the summary writer's log directory, as TF 1.15 did, for
TensorBoard's projector to read.
"""
import os

from tf_keras.protobuf.projector_config_pb2 import EmbeddingInfo, ProjectorConfig, SpriteMetadata

PROJECTOR_FILENAME = "projector_config.pbtxt"

__all__ = ["EmbeddingInfo", "ProjectorConfig", "SpriteMetadata", "visualize_embeddings", "PROJECTOR_FILENAME"]


def visualize_embeddings(summary_writer, config):
    from google.protobuf import text_format
    import tensorflow as tf

    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise ValueError("Summary writer must have a logdir")
    with tf.io.gfile.GFile(os.path.join(logdir, PROJECTOR_FILENAME), "w") as f:
        f.write(text_format.MessageToString(config))

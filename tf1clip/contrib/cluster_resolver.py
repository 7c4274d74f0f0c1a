"""tf.contrib.cluster_resolver: TensorFlow's cluster resolvers, but no TPU to resolve.

TF 1.15 re-exported tf.distribute.cluster_resolver here. `TPUClusterResolver` refuses at once
(one line): BERT-style scripts build it only when asked to run on a TPU.
"""
import tensorflow as tf

from tf1clip.contrib import forward
from tf1clip.errors import UnsupportedSymbol


class TPUClusterResolver:
    """Asked for a TPU, which tf1clip cannot reach: stop with one line saying what to do."""

    def __init__(self, tpu=None, *args, **kwargs):
        raise UnsupportedSymbol(f"tf.contrib.cluster_resolver.TPUClusterResolver(tpu={tpu!r})",
                                "run without a TPU (e.g. --use_tpu=False): TPUEstimator code then trains on the CPU",
                                "tf1clip runs on this machine's CPU/GPU and connects to no TPU")


__getattr__ = forward(__name__, "tf.contrib.cluster_resolver", tf.distribute.cluster_resolver)

"""tf.contrib.tpu as BERT-style code uses it with `use_tpu=False`: TPUEstimator on the CPU.

`TPUEstimator`, `TPUEstimatorSpec`, `RunConfig`, `TPUConfig`, `InputPipelineConfig` are
tf1clip.estimator.tpu's. `CrossShardOptimizer` on one shard (there is no TPU here) sums each
gradient over one replica and divides the loss by one: it forwards to the optimizer it wraps.
Anything else in tf.contrib.tpu needs a TPU and stops with one line.
"""
import tensorflow as tf

from tf1clip.contrib import forward
from tf1clip.estimator import tpu as _tpu



class CrossShardOptimizer(tf.compat.v1.train.Optimizer):
    """TF 1.15's CrossShardOptimizer on a single shard: the wrapped optimizer's updates, unchanged."""

    def __init__(self, opt, reduction=tf.compat.v1.losses.Reduction.MEAN, name="CrossShardOptimizer",
                 group_assignment=None):
        if reduction not in (tf.compat.v1.losses.Reduction.SUM, tf.compat.v1.losses.Reduction.MEAN):
            raise ValueError(f"Unsupported reduction: {reduction}.")
        super().__init__(False, name)
        self._opt = opt
        self._reduction = reduction
        self._group_assignment = group_assignment

    def compute_gradients(self, loss, var_list=None, **kwargs):
        return self._opt.compute_gradients(loss, var_list=var_list, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step, name)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()


__getattr__ = forward(__name__, "tf.contrib.tpu", _tpu)  # hints: tf1clip.contrib.hints

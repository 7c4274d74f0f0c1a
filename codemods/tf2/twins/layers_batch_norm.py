"""Twin of `tf.layers.batch_normalization` (TF 1.x's layer, the v1 Keras BatchNormalization).

TF 1.x's defaults: momentum 0.99, epsilon 0.001, a beta and a gamma, training=False. In training it
normalizes by the batch mean and the biased batch variance. Its moving averages move only where the
graph ran its UPDATE_OPS, by `moving -= (moving - batch) * (1 - momentum)`, toward the biased batch
variance for a 2-D input, and toward the unbiased one for a 4-D input: TF 1.x used the fused kernel
there (`fused=True`: the same kernel, FusedBatchNormV3, so the same output and gradients), which returns
the variance with Bessel's correction. The 2-D path is TF 1.x's ops too (moments, then
batch_normalization; a fed switch chooses the statistics with a cond each), so gradients sum alike: a
bias just before the layer has a gradient that is rounding noise, which an adaptive optimizer turns into
steps of its own size, and only the same ops give the same noise.

The output and the update are two calls. The layer's call (`bn(x, training=t)`) gives the output and
changes nothing. `bn.update_moving_averages(x, training=t)` is the update op, run by the step functions
whose TF 1.x run ran it. `training` is a Python bool or a boolean tensor (a fed switch), as in TF 1.x.
Variables `<name>/gamma`, `beta`, `moving_mean`, `moving_variance`, made in that order, as TF 1.x did.

tf-slim's `batch_norm` (`tf.contrib.layers.batch_norm`) is the same twin with its own defaults (decay
0.999, no gamma, training on): a 4-D input went to the core layer above; a 2-D input to slim's own fused
path, reshaped to 4-D, which made beta before gamma (`beta_first`) and took its decay as a Python float
(`float32_decay=False`); `updates_collections=None` moved the averages with the output
(`normalize_and_update`).
"""

CLASS = "LayersBatchNorm"
NEEDS: tuple = ()
TF1 = ("tensorflow.layers.batch_normalization", "slim.batch_norm", "tensorflow.contrib.layers.batch_norm")
KIND = "layer"
SOURCE = '''\
class LayersBatchNorm(tf.keras.layers.Layer):
    """tf.layers.batch_normalization as TF 1.x computed it: batch statistics in training, the moving
    averages otherwise (through the fused kernel for a 4-D input, as TF 1.x did); `update_moving_averages`
    moves them as TF 1.x's UPDATE_OPS did."""

    def __init__(self, momentum=0.99, epsilon=0.001, center=True, scale=True, fused=False, beta_first=False,
                 float32_decay=None, name="batch_normalization", **kwargs):
        super().__init__(name=name, **kwargs)
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.fused = fused
        self.beta_first = beta_first  # tf-slim's own fused path (a 2-D input) made beta before gamma
        self.float32_decay = fused if float32_decay is None else float32_decay

    def build(self, input_shape):
        channels = int(input_shape[-1])
        self.gamma = self.beta = None
        for made in (("beta", "gamma") if self.beta_first else ("gamma", "beta")):
            if made == "gamma" and self.scale:
                self.gamma = self.add_weight(name="gamma", shape=(channels,), initializer="ones")
            if made == "beta" and self.center:
                self.beta = self.add_weight(name="beta", shape=(channels,), initializer="zeros")
        self.moving_mean = self.add_weight(name="moving_mean", shape=(channels,), initializer="zeros",
                                           trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=(channels,), initializer="ones",
                                               trainable=False)

    def _fused(self, inputs, training):
        channels = inputs.shape[-1]
        gamma = tf.ones([channels]) if self.gamma is None else tf.convert_to_tensor(self.gamma)
        beta = tf.zeros([channels]) if self.beta is None else tf.convert_to_tensor(self.beta)
        x = tf.reshape(inputs, [-1, 1, 1, channels]) if len(inputs.shape) == 2 else inputs  # tf-slim's 2-D path
        y, mean, variance, _, _, _ = tf.raw_ops.FusedBatchNormV3(
            x=x, scale=gamma, offset=beta, mean=tf.convert_to_tensor(self.moving_mean),
            variance=tf.convert_to_tensor(self.moving_variance), epsilon=self.epsilon, data_format="NHWC",
            is_training=training)
        y = tf.reshape(y, [-1, channels]) if len(inputs.shape) == 2 else y
        return y, mean, variance  # in training: the batch mean and the variance with Bessel's correction

    def _batch(self, inputs, training):
        """(output, mean, variance) of the batch (training) or of the moving averages."""
        if not tf.is_tensor(training):  # a Python switch (TF 1.x took a bool, or 1 or 0)
            training = bool(training)
        if self.fused:
            if isinstance(training, bool):
                return self._fused(inputs, training)
            return tf.cond(training, lambda: self._fused(inputs, True), lambda: self._fused(inputs, False))
        if training is False:
            mean, variance = tf.convert_to_tensor(self.moving_mean), tf.convert_to_tensor(self.moving_variance)
        else:
            mean, variance = tf.nn.moments(inputs, list(range(len(inputs.shape) - 1)))
            if tf.is_tensor(training):
                mean = tf.cond(training, lambda: mean, lambda: tf.convert_to_tensor(self.moving_mean))
                variance = tf.cond(training, lambda: variance, lambda: tf.convert_to_tensor(self.moving_variance))
        y = tf.nn.batch_normalization(inputs, mean, variance, self.beta, self.gamma, self.epsilon)
        return y, mean, variance

    def call(self, inputs, training=False):
        return self._batch(inputs, training)[0]

    def update_moving_averages(self, inputs, training=False):
        if not tf.is_tensor(training) and not training:
            return tf.constant(False)
        _, mean, variance = self._batch(inputs, training)
        self._move(mean, variance, training)
        return tf.constant(True)

    def normalize_and_update(self, inputs, training=True):
        """The output, its moving averages moved first (tf-slim's updates_collections=None)."""
        y, mean, variance = self._batch(inputs, training)
        if tf.is_tensor(training) or training:
            self._move(mean, variance, training)
        return y

    def _move(self, mean, variance, training):
        # TF 1.x's decay: 1 - momentum, in float32 where the core layer's fused path made the momentum a tensor
        decay = 1.0 - (tf.constant(self.momentum, tf.float32) if self.float32_decay else self.momentum)
        if tf.is_tensor(training):  # a switch that is off leaves them, as TF 1.x's cond did
            decay = tf.where(training, tf.cast(decay, tf.float32), 0.0)
        self.moving_mean.assign_sub((self.moving_mean - mean) * decay)
        self.moving_variance.assign_sub((self.moving_variance - variance) * decay)
'''

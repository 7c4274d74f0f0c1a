"""Twin of tf-slim's `batch_norm` with its TF 1.x defaults (tf.contrib.layers.batch_norm).

slim.batch_norm: decay 0.999, epsilon 0.001, center (beta), no scale (gamma only with
scale=True); Keras' BatchNormalization has momentum 0.99 and a gamma. In training it normalizes
by the batch mean and the biased batch variance, and (the fused kernel slim uses for 2-D and
4-D inputs) moves moving_variance toward the unbiased one: moving -= (moving - batch) * (1 - decay).
Variables `<scope>/BatchNorm/beta`, `gamma`, `moving_mean`, `moving_variance` (a 4-D input makes
gamma before beta, a 2-D input beta before gamma, as TF 1 did). The moving averages move where
TF 1 ran the UPDATE_OPS: `update_moving_averages=False` leaves them (TF 1 without the update ops).
"""

CLASS = "SlimBatchNorm"
NEEDS: tuple = ()
TF1 = ("slim.batch_norm", "slim.layers.batch_norm", "tensorflow.contrib.layers.batch_norm")
KIND = "layer"
PARAMS = (
    ("inputs", "call"),
    ("decay", "init"),
    ("center", "init"),
    ("scale", "init"),
    ("epsilon", "init"),
    ("activation_fn", ("rename", "activation")),
    ("param_initializers", ("only", "None", "custom initializers by name are not converted")),
    ("param_regularizers", ("only", "None", "regularizers are not converted")),
    ("updates_collections", ("drop", "where TF 1 put the update ops: the translator decides update_moving_averages")),
    ("is_training", ("rename_call", "training")),
    ("reuse", ("drop", "variables are reused by reusing the layer object")),
    ("variables_collections", ("only", "None", "graph collections are not converted")),
    ("outputs_collections", ("only", "None", "graph collections are not converted")),
    ("trainable", ("only", "True", "a frozen batch norm is not converted")),
    ("batch_weights", ("only", "None", "weighted moments are not converted")),
    ("fused", ("only_not_false", "slim's unfused path moves moving_variance by the biased variance")),
    ("data_format", ("only", "'NHWC'", "NCHW is not converted")),
    ("zero_debias_moving_mean", ("only", "False", "a zero-debiased moving mean is not converted")),
    ("scope", ("name", "the variable scope names the layer")),
    ("renorm", ("only", "False", "batch renormalization is not converted")),
)
DEFAULT_NAME = "BatchNorm"
SOURCE = '''\
class SlimBatchNorm(tf.keras.layers.Layer):
    """tf-slim's batch_norm (TF 1.x defaults: decay 0.999, epsilon 0.001, beta, no gamma): batch
    statistics in training, moving averages moved toward the batch mean and the unbiased batch
    variance, as slim's fused kernel did. TF 1's variable names (BatchNorm/beta, ...)."""

    def __init__(self, decay=0.999, center=True, scale=False, epsilon=0.001, activation=None,
                 update_moving_averages=True, name="BatchNorm", **kwargs):
        super().__init__(name=name, **kwargs)
        self.decay = decay
        self.center = center
        self.scale = scale
        self.epsilon = epsilon
        self.activation = activation
        self.update_moving_averages = update_moving_averages

    def build(self, input_shape):
        if len(input_shape) not in (2, 4):
            raise ValueError("SlimBatchNorm takes 2-D or 4-D inputs, as slim's fused batch norm did")
        channels = int(input_shape[-1])
        self.gamma = self.beta = None
        if self.scale and len(input_shape) == 4:
            self.gamma = self.add_weight(name="gamma", shape=(channels,), initializer="ones")
        if self.center:
            self.beta = self.add_weight(name="beta", shape=(channels,), initializer="zeros")
        if self.scale and self.gamma is None:
            self.gamma = self.add_weight(name="gamma", shape=(channels,), initializer="ones")
        self.moving_mean = self.add_weight(name="moving_mean", shape=(channels,), initializer="zeros",
                                           trainable=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=(channels,), initializer="ones",
                                               trainable=False)

    def call(self, inputs, training=True):
        if not training:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            axes = list(range(len(inputs.shape) - 1))
            mean, variance = tf.nn.moments(inputs, axes)
            if self.update_moving_averages:
                count = tf.cast(tf.size(inputs) // tf.shape(inputs)[-1], inputs.dtype)
                unbiased = variance * count / tf.maximum(count - 1, 1)
                self.moving_mean.assign_sub((self.moving_mean - mean) * (1 - self.decay))
                self.moving_variance.assign_sub((self.moving_variance - unbiased) * (1 - self.decay))
        outputs = tf.nn.batch_normalization(inputs, mean, variance, self.beta, self.gamma, self.epsilon)
        return self.activation(outputs) if self.activation is not None else outputs
'''

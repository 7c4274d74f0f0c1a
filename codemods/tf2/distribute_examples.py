"""Examples of `codemods.tf2.distribute`: programs before and after (run by
tests/test_tf2_distribute.py, applied twice == once), and programs it refuses, with why."""

# (strategy, before, after): run by tests/test_tf2_distribute.py, with applied-twice == once.
EXAMPLES = [
    ("mirrored",
     '''import tensorflow as tf

layer = tf.keras.layers.Dense(1)
layer.build((None, 2))
optimizer = tf.keras.optimizers.SGD(0.1)
variables = layer.trainable_variables


@tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(layer(x) - y))
    gradients = tape.gradient(loss, variables)
    gradients, _ = tf.clip_by_global_norm(gradients, 1.0)
    optimizer.apply_gradients(zip(gradients, variables))
    return loss
''',
     '''import tensorflow as tf

# variables, layers and the optimizer (its slots too) are created once, mirrored on every replica
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    layer = tf.keras.layers.Dense(1)
    layer.build((None, 2))
    optimizer = tf.keras.optimizers.SGD(0.1)
    variables = layer.trainable_variables
    optimizer.build(variables)


def batch_shard(batch, ctx):
    """This replica's rows of a global batch: contiguous, shard sizes differ by at most one."""
    size = tf.shape(batch)[0]
    i, n = ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync
    return batch[size * i // n:size * (i + 1) // n]


@tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
def train_step(x, y):
    def replica_step(x, y):
        # a sum over the batch: the replicas' sums add up to the global sum
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(x) - y))
        return tape.gradient(loss, variables), loss

    # each replica gets its shard of the global batch
    shards = strategy.experimental_distribute_values_from_function(
        lambda ctx: (batch_shard(x, ctx), batch_shard(y, ctx)))
    replica_gradients, replica_loss = strategy.run(replica_step, args=shards)
    # all-reduce once (cross-replica context): the loss and the gradients of the global batch;
    # the clip below then runs once on them and apply_gradients does not sum again
    loss = strategy.reduce(tf.distribute.ReduceOp.SUM, replica_loss, axis=None)
    gradients = [None if g is None else strategy.reduce(tf.distribute.ReduceOp.SUM, g, axis=None)
                 for g in replica_gradients]
    gradients, _ = tf.clip_by_global_norm(gradients, 1.0)
    optimizer.apply_gradients(zip(gradients, variables))
    return loss
'''),
    ("multi_worker",  # per-tensor clip of a sparse (Embedding) gradient; a scalar argument is replicated
     '''import tensorflow as tf

embedding = tf.keras.layers.Embedding(100, 4)
embedding.build((None,))
head = tf.keras.layers.Dense(1)
head.build((None, 4))
params = embedding.trainable_variables + head.trainable_variables
opt = tf.keras.optimizers.Adam(0.01, epsilon=1e-8)


@tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 1], tf.float32),
                              tf.TensorSpec([], tf.float32)])
def step(ids, target, weight):
    with tf.GradientTape() as g:
        out = head(embedding(ids))
        cost = tf.reduce_mean(weight * tf.square(out - target))
    pairs = list(zip(g.gradient(cost, params), params))
    clipped = [(None if grad is None else tf.clip_by_norm(grad, 1.0), v) for grad, v in pairs]
    opt.apply_gradients(clipped)
    return cost
''',
     '''import tensorflow as tf

# variables, layers and the optimizer (its slots too) are created once, mirrored on every replica
strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    embedding = tf.keras.layers.Embedding(100, 4)
    embedding.build((None,))
    head = tf.keras.layers.Dense(1)
    head.build((None, 4))
    params = embedding.trainable_variables + head.trainable_variables
    opt = tf.keras.optimizers.Adam(0.01, epsilon=1e-8)
    opt.build(params)


def batch_shard(batch, ctx):
    """This replica's rows of a global batch: contiguous, shard sizes differ by at most one."""
    size = tf.shape(batch)[0]
    i, n = ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync
    return batch[size * i // n:size * (i + 1) // n]


@tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None, 1], tf.float32),
                              tf.TensorSpec([], tf.float32)])
def step(ids, target, weight):
    # each replica scales its loss by its share of the global batch
    global_batch_size = tf.shape(ids)[0]

    def replica_step(ids, target, weight):
        # this replica's part of the global-batch mean: its shard's mean * shard size / global size
        with tf.GradientTape() as g:
            out = head(embedding(ids))
            cost = tf.reduce_mean(weight * tf.square(out - target))
            scaled_loss = cost * tf.cast(tf.shape(ids)[0] / global_batch_size, cost.dtype)
        return g.gradient(scaled_loss, params), scaled_loss

    # each replica gets its shard of the global batch
    shards = strategy.experimental_distribute_values_from_function(
        lambda ctx: (batch_shard(ids, ctx), batch_shard(target, ctx), weight))
    replica_gradients, replica_loss = strategy.run(replica_step, args=shards)
    # all-reduce once (cross-replica context): the loss and the gradients of the global batch;
    # the clip below then runs once on them and apply_gradients does not sum again
    cost = strategy.reduce(tf.distribute.ReduceOp.SUM, replica_loss, axis=None)
    gradients = [None if g_2 is None else strategy.reduce(tf.distribute.ReduceOp.SUM, g_2, axis=None)
                 for g_2 in replica_gradients]
    pairs = list(zip(gradients, params))
    clipped = [(None if grad is None else tf.clip_by_norm(grad, 1.0), v) for grad, v in pairs]
    opt.apply_gradients(clipped)
    return cost
'''),
]

# (before, reason fragment): programs that are refused, with why.
_BASE = EXAMPLES[0][1]
REFUSED = [
    ("import tensorflow as tf\nx = tf.constant(1.0)\n", "no train step"),
    (_BASE.replace("tf.reduce_sum(tf.square(layer(x) - y))", "tf.nn.l2_loss(layer(x) - y)"),
     "is not a tf.reduce_mean or tf.reduce_sum over the whole batch"),
    (_BASE.replace("tf.reduce_sum(tf.square(layer(x) - y))", "tf.reduce_sum(tf.square(layer(x) - y), axis=0)"),
     "is not a tf.reduce_mean or tf.reduce_sum over the whole batch"),
    (_BASE.replace("tf.square(layer(x) - y)", "tf.square(layer(x - tf.reduce_mean(x, axis=0)) - y)"),
     "not known to treat each example on its own"),
    (_BASE.replace("tf.square(layer(x) - y)", "tf.square(layer(x) - y + tf.random.normal([1]))"),
     "not known to treat each example on its own"),
    (_BASE.replace("SGD(0.1)", "SGD(0.1, global_clipnorm=1.0)"), "the optimizer clips by itself (global_clipnorm=)"),
    (_BASE.replace("tf.TensorSpec([None, 1], tf.float32)", "tf.TensorSpec([16, 1], tf.float32)"),
     "argument `y` has a fixed first dimension"),
    (_BASE.replace("        loss = tf.reduce_sum", "        pred = layer(x)\n        loss = tf.reduce_sum")
     .replace("return loss", "return loss, pred"), "`pred` is computed per replica"),
    (_BASE.replace("layer.build((None, 2))\n", ""), "layer `layer` is not built up front"),
]

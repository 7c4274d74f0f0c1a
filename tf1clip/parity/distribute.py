"""tf.distribute in the recorder: replica ids, summing replicas' gradient parts, and giving
`MirroredStrategy()` N logical CPU devices (`parity --replicas N`)."""
from __future__ import annotations

from tf1clip.steps import wrap


def replica_id():
    """Static replica id inside a multi-replica strategy's replica context, else None."""
    import tensorflow as tf

    ctx = tf.distribute.get_replica_context()
    if ctx is None or ctx.num_replicas_in_sync <= 1:
        return None
    value = tf.get_static_value(ctx.replica_id_in_sync_group)
    return None if value is None else int(value)


def sum_parts(parts):
    """Sum per-replica (target, grads) parts: the global loss and the global gradient."""
    import tensorflow as tf

    targets = [t for t, _ in parts if t is not None]
    target = None
    if targets:
        target = tf.add_n([tf.reduce_sum(tf.cast(t, tf.float64)) for t in targets])
    grads = []
    for per_var in zip(*[g for _, g in parts]):
        present = [g for g in per_var if g is not None]
        if not present:
            grads.append(None)
        elif any(isinstance(g, tf.IndexedSlices) for g in present):
            grads.append(tf.IndexedSlices(tf.concat([tf.convert_to_tensor(g.values) for g in present], 0),
                                          tf.concat([g.indices for g in present], 0), present[0].dense_shape))
        else:
            grads.append(tf.add_n(present))
    return target, grads


def provide_replicas(rec, n):
    """Split the CPU into n logical devices and make MirroredStrategy() use them by default;
    rec.replicas_seen becomes the largest strategy the script creates."""
    import tensorflow as tf
    from tensorflow.python.distribute import mirrored_strategy

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n)])
    devices = [d.name for d in tf.config.list_logical_devices("CPU")]

    def make_init(original):
        def __init__(self, devices_arg=None, cross_device_ops=None):
            original(self, devices_arg if devices_arg is not None else devices, cross_device_ops)
            rec.replicas_seen = max(rec.replicas_seen, self.num_replicas_in_sync)
        return __init__

    wrap(mirrored_strategy.MirroredStrategy, "__init__", make_init)

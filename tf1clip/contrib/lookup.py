"""tf.contrib.lookup (TF 1.15): it re-exported TensorFlow's lookup_ops, which TF 2.21 still has
(index_table_from_file, index_table_from_tensor, index_to_string_table_from_file, HashTable,
KeyValueTensorInitializer, TextFileInitializer, MutableHashTable, ...): served from there."""
from tf1clip.contrib import forward


def _lookup_ops():
    from tensorflow.python.ops import lookup_ops

    return lookup_ops


__getattr__ = forward(__name__, "tf.contrib.lookup", _lookup_ops)

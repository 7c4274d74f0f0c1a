"""`tf.estimator.inputs`: `numpy_input_fn` and `pandas_input_fn` (TF 1.15).

TF 1.15 fed the arrays through a queue, `batch_size` rows per enqueue, reading them in order
from row 0 across epoch ends (`[8, 9, 0, 1]` is one batch of a 10-row array); with
`num_epochs` the last batch is what remains, without it every batch is full. Here the same
stream of rows comes from a `tf.data` generator (no queue threads, no graph constants the size
of the data): with `shuffle=False` the batches are TF 1.15's, row for row. With
`shuffle=True` TF 1.15 drew from a `RandomShuffleQueue` of `queue_capacity` rows starting at
a random row (never reproducible); here rows go through a shuffle buffer of `queue_capacity`,
reproducible when the graph has a seed (`RunConfig(tf_random_seed=...)`). `num_threads` only
mattered to the queue and is accepted and ignored.
"""
from __future__ import annotations

import collections

import numpy as np
import tensorflow as tf

from tf1clip.errors import ESTIMATOR_GONE, refuse_unknown

_TARGET_KEY = "__target_key__"


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1):
    """An input_fn giving `features` (x's dict keys, or the array) and `targets` from numpy arrays."""
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided and explicitly set as boolean (it is recommended to set it as "
                         f"True for training); got {shuffle}")

    def input_fn():
        columns = _ordered_features(x)
        feature_keys = list(columns)
        if y is None:
            target_keys = None
        elif isinstance(y, dict):
            if not y:
                raise ValueError("y cannot be empty dict, use None instead.")
            ordered_y = collections.OrderedDict(sorted(y.items(), key=lambda t: t[0]))
            target_keys = list(ordered_y)
            duplicate = set(feature_keys) & set(target_keys)
            if duplicate:
                raise ValueError(f"{len(duplicate)} duplicate keys are found in both x and y: {duplicate}")
            columns.update(ordered_y)
        else:
            target_keys = _unique_key(columns)
            columns[target_keys] = y
        if len({v.shape[0] for v in columns.values()}) != 1:
            shapes_x = {k: columns[k].shape for k in feature_keys}
            shapes_y = None if target_keys is None else (
                y.shape if isinstance(target_keys, str) else {k: columns[k].shape for k in target_keys})
            raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y must have the same "
                             f"length.\nShapes in x: {shapes_x}\nShapes in y: {shapes_y}\n")
        batch = _batches(columns, batch_size, num_epochs, shuffle, queue_capacity)
        features = batch[feature_keys[0]] if isinstance(x, np.ndarray) else {k: batch[k] for k in feature_keys}
        if target_keys is None:
            return features
        if isinstance(target_keys, str):
            return features, batch[target_keys]
        return features, {k: batch[k] for k in target_keys}

    return input_fn


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000, num_threads=1,
                    target_column="target"):
    """An input_fn giving a dict of x's columns and the target (y's values) from pandas objects."""
    try:
        import pandas as pd
    except ImportError:
        raise TypeError("pandas_input_fn should not be called without pandas installed") from None
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided and explicitly set as boolean (it is recommended to set it as "
                         f"True for training); got {shuffle}")
    if not isinstance(target_column, str):
        raise TypeError("target_column must be a string type")
    columns = collections.OrderedDict((name, x[name].values) for name in x.columns)
    targets = None
    if y is not None:
        if target_column in x:
            raise ValueError(f"Cannot use name {target_column} for target column: DataFrame already has a column "
                             f"with that name: {x.columns}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}\n")
        if isinstance(y, pd.DataFrame):
            targets = [(name, _unique_key(columns, name)) for name in y.columns]
            for name, key in targets:
                columns[key] = y[name].values
        else:
            columns[target_column] = y.values
    if queue_capacity is None:
        queue_capacity = 4 * len(x) if shuffle else len(x)

    def input_fn():
        batch = _batches(collections.OrderedDict(columns), batch_size, num_epochs, shuffle, queue_capacity)
        features = {name: batch[name] for name in x.columns}
        if y is None:
            return features
        if targets is not None:
            return features, {name: batch[key] for name, key in targets}
        return features, batch[target_column]

    return input_fn


def _ordered_features(x):
    """x as an OrderedDict of arrays, sorted by key (TF 1.15's order), copied shallowly."""
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        return collections.OrderedDict(sorted(x.items(), key=lambda t: t[0]))
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
        return collections.OrderedDict([("__direct_np_input__", x)])
    raise TypeError(f"x must be a dict or array; got {type(x).__name__}")


def _unique_key(columns, key=_TARGET_KEY):
    while key in columns:
        key += "_n"
    return key


def _row_indices(length, batch_size, num_epochs):
    """TF 1.15's feeding order: batches of row indices, in order, across epoch ends."""
    start, emitted = 0, 0
    total = None if num_epochs is None else num_epochs * length
    while total is None or emitted < total:
        size = batch_size if total is None else min(batch_size, total - emitted)
        yield (np.arange(start, start + size) % length).astype(np.int64)
        start = (start + size) % length
        emitted += size


def _batches(columns, batch_size, num_epochs, shuffle, queue_capacity):
    """{key: batch tensor} read from `columns` (equal-length arrays) as described in the module doc."""
    keys = list(columns)
    arrays = [np.asarray(columns[k]) for k in keys]
    length = len(arrays[0])

    def chunks():
        for rows in _row_indices(length, batch_size, num_epochs):
            yield tuple(a[rows] for a in arrays)

    full = num_epochs is None and not shuffle
    signature = tuple(tf.TensorSpec([batch_size if full else None, *a.shape[1:]], tf.as_dtype(a.dtype))
                      for a in arrays)
    dataset = tf.data.Dataset.from_generator(chunks, output_signature=signature)
    if shuffle:
        dataset = dataset.unbatch().shuffle(max(int(queue_capacity), 1)).batch(
            batch_size, drop_remainder=num_epochs is None)
    values = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    return dict(zip(keys, values))


__getattr__ = refuse_unknown("tf.estimator.inputs", ESTIMATOR_GONE,
                             default_hint="use numpy_input_fn, or an input_fn returning a tf.data.Dataset")

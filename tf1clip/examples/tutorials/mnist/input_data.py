"""TF 1.x ``tensorflow.examples.tutorials.mnist.input_data`` for TensorFlow 2, local files only.

Scripts keep writing::

    from tensorflow.examples.tutorials.mnist import input_data
    mnist = input_data.read_data_sets("MNIST_data/", one_hot=True)
    batch_xs, batch_ys = mnist.train.next_batch(100)

and get what TF 1.15 gave them (its ``input_data`` / ``contrib.learn`` ``mnist`` module):
``Datasets(train, validation, test)`` of ``DataSet`` objects, the same validation split,
float32 scaling to [0, 1], ``reshape``/``one_hot`` handling, the same ``next_batch``
shuffling, and numpy's global RNG seeded exactly as TF 1.x seeded it (from ``seed=`` or
the graph-level seed of ``tf.compat.v1.set_random_seed``).

Differences from TF 1.x, on purpose:

* Nothing is ever downloaded. ``source_url`` is accepted and ignored. The four MNIST
  files must already be in ``train_dir``; if any is missing, ``MnistDataMissing`` (a
  ``FileNotFoundError``) says which, and how to get them (copy the real files there, or
  write a synthetic set with ``python fixtures/data/make_mnist.py FOLDER``). ``train_dir``
  is not created.
* Each file may also be present un-gzipped (same name without ``.gz``); the content is
  sniffed, so a raw IDX file is accepted under either name.
* Files are read with ``open`` + ``gzip`` + numpy, not ``gfile``.
* No deprecation warnings are logged, and ``dtype`` defaults to the string
  ``"float32"`` (equivalent to ``tf.float32``) so that importing this module does not
  import TensorFlow. TensorFlow is imported on first ``DataSet`` construction.

Importing this module creates no TensorFlow ops and does not import TensorFlow.
"""
import collections
import gzip
import io
import os
import shlex

import numpy

__all__ = [
    "DEFAULT_SOURCE_URL",
    "SOURCE_URL",
    "MNIST_FILES",
    "DataSet",
    "Datasets",
    "MnistDataMissing",
    "dense_to_one_hot",
    "extract_images",
    "extract_labels",
    "load_mnist",
    "read_data_sets",
]

# Kept for API compatibility only: tf1clip never downloads (see module docstring).
DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
SOURCE_URL = DEFAULT_SOURCE_URL  # the name used by older TF 1.x releases

TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
MNIST_FILES = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)

_IMAGE_MAGIC = 2051
_LABEL_MAGIC = 2049
_GZIP_MAGIC = b"\x1f\x8b"

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])

# Where the synthetic-data generator lives in a source checkout (repo/fixtures/data/).
_REPO_ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)
_MAKE_MNIST = os.path.join(_REPO_ROOT, "fixtures", "data", "make_mnist.py")


class MnistDataMissing(FileNotFoundError):
    """MNIST files are not in the requested folder (tf1clip never downloads them).

    Attributes:
      folder: absolute path of the folder that was searched.
      missing: tuple of the standard file names (with ``.gz``) found in neither
        gzipped nor un-gzipped form.
    """

    def __init__(self, folder, missing):
        self.folder = folder
        self.missing = tuple(missing)
        script = _MAKE_MNIST if os.path.isfile(_MAKE_MNIST) else "fixtures/data/make_mnist.py"
        message = (
            "MNIST data not found: %s is missing %s (looked for each gzipped and un-gzipped). "
            "tf1clip never downloads data (source_url is ignored): put the four MNIST files "
            "(%s) in that folder, or generate a synthetic set with: python %s %s"
            % (folder, ", ".join(self.missing), ", ".join(MNIST_FILES),
               shlex.quote(script), shlex.quote(folder))
        )
        super().__init__(message)

    def __reduce__(self):
        return (type(self), (self.folder, self.missing))


# --------------------------------------------------------------------------- TF access
# TensorFlow is imported lazily, only when a DataSet needs dtypes or seeds.


def _dtypes():
    from tensorflow.python.framework import dtypes

    return dtypes


def _get_seed(op_seed):
    """TF 1.x ``random_seed.get_seed`` semantics, without touching the graph.

    TF 2.x's ``get_seed`` draws the op seed of a seeded graph from a per-graph counter
    that it increments, so calling it here would shift the op seeds of every random op
    the user's script creates afterwards. TF 1.x used the graph's last op id (read-only),
    so reading MNIST never changed the script's random ops. This reads the same state
    (graph ``seed`` / eager global seed) and returns what TF 1.x returned.
    """
    from tensorflow.python.eager import context
    from tensorflow.python.framework import ops, random_seed

    max_int32 = getattr(random_seed, "_MAXINT32", 2**31 - 1)

    def truncate(seed):
        return seed % max_int32

    eager = context.executing_eagerly()
    if eager:
        global_seed = context.global_seed()
    else:
        graph = ops.get_default_graph()
        global_seed = graph.seed

    if global_seed is not None:
        if op_seed is None:
            if eager:
                op_seed = context.internal_operation_seed()  # as TF 1.x did in eager mode
            else:
                last_id = getattr(graph, "_last_id", None)  # TF 1.x graphs had it
                if last_id is None:
                    last_id = len(getattr(graph, "_nodes_by_id", ()))
                op_seed = last_id
        seeds = truncate(global_seed), truncate(op_seed)
    elif op_seed is not None:
        seeds = random_seed.DEFAULT_GRAPH_SEED, truncate(op_seed)
    else:
        seeds = None, None
    if seeds == (0, 0):
        return (0, max_int32)
    return seeds


def __getattr__(name):
    # TF 1.x's module had these names at module level; give them without importing
    # TensorFlow at import time.
    if name == "dtypes":
        return _dtypes()
    if name == "random_seed":
        from tensorflow.python.framework import random_seed

        return random_seed
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


# --------------------------------------------------------------------------- IDX parsing


def _read32(bytestream):
    """Read one big-endian uint32 (as a numpy scalar, like TF 1.x)."""
    raw = bytestream.read(4)
    if len(raw) != 4:
        raise ValueError("Unexpected end of MNIST file while reading its header")
    return numpy.frombuffer(raw, dtype=numpy.dtype(numpy.uint32).newbyteorder(">"))[0]


def _file_name(f):
    return getattr(f, "name", repr(f))


def _decoded_stream(f):
    """A binary stream of the IDX bytes in `f`, gunzipping only if `f` is gzip data."""
    data = f.read()
    if isinstance(data, str):
        raise TypeError("MNIST file %s must be opened in binary mode ('rb')" % _file_name(f))
    if data[:2] == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=io.BytesIO(data))
    return io.BytesIO(data)


def extract_images(f):
    """Extract the images into a 4D uint8 numpy array [index, y, x, depth].

    Args:
      f: A binary file object holding an IDX3 image file, gzipped or not.

    Returns:
      data: A 4D uint8 numpy array [index, y, x, depth].

    Raises:
      ValueError: If the bytestream does not start with 2051, or is truncated.
    """
    print("Extracting", _file_name(f))
    with _decoded_stream(f) as bytestream:
        magic = _read32(bytestream)
        if magic != _IMAGE_MAGIC:
            raise ValueError(
                "Invalid magic number %d in MNIST image file: %s" % (magic, _file_name(f))
            )
        num_images = int(_read32(bytestream))
        rows = int(_read32(bytestream))
        cols = int(_read32(bytestream))
        size = rows * cols * num_images
        buf = bytestream.read(size)
        if len(buf) != size:
            raise ValueError(
                "Truncated MNIST image file: %s: header says %d images of %dx%d (%d bytes), "
                "found %d bytes" % (_file_name(f), num_images, rows, cols, size, len(buf))
            )
        data = numpy.frombuffer(buf, dtype=numpy.uint8)
        return data.reshape(num_images, rows, cols, 1)


def dense_to_one_hot(labels_dense, num_classes):
    """Convert class labels from scalars to one-hot vectors (float64, like TF 1.x)."""
    num_labels = labels_dense.shape[0]
    labels_one_hot = numpy.zeros((num_labels, num_classes))
    labels_one_hot.flat[numpy.arange(num_labels) * num_classes + labels_dense.ravel()] = 1
    return labels_one_hot


def extract_labels(f, one_hot=False, num_classes=10):
    """Extract the labels into a 1D uint8 numpy array [index].

    Args:
      f: A binary file object holding an IDX1 label file, gzipped or not.
      one_hot: Does one hot encoding for the result.
      num_classes: Number of classes for the one hot encoding.

    Returns:
      labels: a 1D uint8 numpy array, or a [index, num_classes] float64 array if
        `one_hot`.

    Raises:
      ValueError: If the bytestream doesn't start with 2049, or is truncated.
    """
    print("Extracting", _file_name(f))
    with _decoded_stream(f) as bytestream:
        magic = _read32(bytestream)
        if magic != _LABEL_MAGIC:
            raise ValueError(
                "Invalid magic number %d in MNIST label file: %s" % (magic, _file_name(f))
            )
        num_items = int(_read32(bytestream))
        buf = bytestream.read(num_items)
        if len(buf) != num_items:
            raise ValueError(
                "Truncated MNIST label file: %s: header says %d labels, found %d"
                % (_file_name(f), num_items, len(buf))
            )
        labels = numpy.frombuffer(buf, dtype=numpy.uint8)
        if one_hot:
            return dense_to_one_hot(labels, num_classes)
        return labels


# --------------------------------------------------------------------------- DataSet


class DataSet(object):
    """Images and labels of one split, served in (re)shuffled minibatches."""

    def __init__(self,
                 images,
                 labels,
                 fake_data=False,
                 one_hot=False,
                 dtype="float32",
                 reshape=True,
                 seed=None):
        """Construct a DataSet.

        `one_hot` is used only if `fake_data` is true. `dtype` can be either `uint8`
        to leave the input as `[0, 255]`, or `float32` to rescale into `[0, 1]` (any
        spelling ``tf.as_dtype`` accepts). `seed` provides for deterministic testing:
        like TF 1.x, this (re)seeds numpy's global RNG, from `seed` if given, otherwise
        from the graph-level seed (if one is set).
        """
        seed1, seed2 = _get_seed(seed)
        # If op level seed is not set, use whatever graph level seed is returned.
        numpy.random.seed(seed1 if seed is None else seed2)
        dtypes = _dtypes()
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype not in (dtypes.uint8, dtypes.float32):
            raise TypeError("Invalid image dtype %r, expected uint8 or float32" % dtype)
        if fake_data:
            self._num_examples = 10000
            self.one_hot = one_hot
        else:
            assert images.shape[0] == labels.shape[0], (
                "images.shape: %s labels.shape: %s" % (images.shape, labels.shape))
            self._num_examples = images.shape[0]
            # [num examples, rows, columns, depth] -> [num examples, rows*columns]
            # (assuming depth == 1)
            if reshape:
                assert images.shape[3] == 1
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == dtypes.float32:
                # [0, 255] -> [0.0, 1.0]
                images = numpy.multiply(images.astype(numpy.float32), 1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self):
        return self._images

    @property
    def labels(self):
        return self._labels

    @property
    def num_examples(self):
        return self._num_examples

    @property
    def epochs_completed(self):
        return self._epochs_completed

    def _shuffle(self):
        perm = numpy.arange(self._num_examples)
        numpy.random.shuffle(perm)
        self._images = self._images[perm]
        self._labels = self._labels[perm]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """Return the next `batch_size` examples from this data set."""
        if fake_data:
            fake_image = [1] * 784
            fake_label = [1] + [0] * 9 if self.one_hot else 0
            return ([fake_image for _ in range(batch_size)],
                    [fake_label for _ in range(batch_size)])
        start = self._index_in_epoch
        # Shuffle for the first epoch.
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self._num_examples:
            # Finished an epoch: the rest of this one, then the start of the next.
            self._epochs_completed += 1
            images_rest_part = self._images[start:self._num_examples]
            labels_rest_part = self._labels[start:self._num_examples]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - (self._num_examples - start)
            end = self._index_in_epoch
            return (numpy.concatenate((images_rest_part, self._images[0:end]), axis=0),
                    numpy.concatenate((labels_rest_part, self._labels[0:end]), axis=0))
        self._index_in_epoch += batch_size
        end = self._index_in_epoch
        return self._images[start:end], self._labels[start:end]


# --------------------------------------------------------------------------- reading


def _local_path(filename, work_directory):
    """Path of `filename` (or its un-gzipped variant) in `work_directory`, or None."""
    names = [filename]
    if filename.endswith(".gz"):
        names.append(filename[: -len(".gz")])
    for name in names:
        path = os.path.join(work_directory, name)
        if os.path.isfile(path):
            return path
    return None


def _maybe_download(filename, work_directory, source_url=None):
    """TF 1.x's helper, minus the download: the local path, or MnistDataMissing."""
    work_directory = os.fspath(work_directory)
    path = _local_path(filename, work_directory)
    if path is None:
        raise MnistDataMissing(os.path.abspath(work_directory), [filename])
    return path


def _locate(train_dir):
    train_dir = os.fspath(train_dir)
    paths = [_local_path(name, train_dir) for name in MNIST_FILES]
    missing = [name for name, path in zip(MNIST_FILES, paths) if path is None]
    if missing:
        raise MnistDataMissing(os.path.abspath(train_dir), missing)
    return paths


def read_data_sets(train_dir,
                   fake_data=False,
                   one_hot=False,
                   dtype="float32",
                   reshape=True,
                   validation_size=5000,
                   seed=None,
                   source_url=DEFAULT_SOURCE_URL):
    """Read MNIST from `train_dir` into ``Datasets(train, validation, test)``.

    The first `validation_size` training examples become the validation set.

    Args:
      train_dir: folder holding train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,
        t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (each may also be
        un-gzipped, named without ``.gz``). Never created, never downloaded into.
      fake_data: return three 10000-example fake DataSets (use
        ``next_batch(n, fake_data=True)``); `train_dir` is not read.
      one_hot: labels as [n, 10] float64 one-hot rows instead of uint8 class ids.
      dtype: ``uint8`` (pixels in [0, 255]) or ``float32`` (pixels in [0, 1]).
      reshape: flatten images to [n, 784] (else [n, 28, 28, 1]).
      validation_size: number of training examples held out, 0..len(train).
      seed: seeds numpy's global RNG used by ``next_batch`` shuffling (see DataSet).
      source_url: accepted for compatibility and ignored: tf1clip has no network.

    Raises:
      MnistDataMissing: a file is in `train_dir` in neither form.
      ValueError: bad magic number, truncated file, or `validation_size` out of range.
    """
    del source_url  # never downloads
    if fake_data:

        def fake():
            return DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)

        return Datasets(train=fake(), validation=fake(), test=fake())

    train_images_path, train_labels_path, test_images_path, test_labels_path = _locate(train_dir)
    with open(train_images_path, "rb") as f:
        train_images = extract_images(f)
    with open(train_labels_path, "rb") as f:
        train_labels = extract_labels(f, one_hot=one_hot)
    with open(test_images_path, "rb") as f:
        test_images = extract_images(f)
    with open(test_labels_path, "rb") as f:
        test_labels = extract_labels(f, one_hot=one_hot)

    if not 0 <= validation_size <= len(train_images):
        raise ValueError(
            "Validation size should be between 0 and {}. Received: {}.".format(
                len(train_images), validation_size))

    validation_images = train_images[:validation_size]
    validation_labels = train_labels[:validation_size]
    train_images = train_images[validation_size:]
    train_labels = train_labels[validation_size:]

    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    train = DataSet(train_images, train_labels, **options)
    validation = DataSet(validation_images, validation_labels, **options)
    test = DataSet(test_images, test_labels, **options)
    return Datasets(train=train, validation=validation, test=test)


def load_mnist(train_dir="MNIST-data"):
    """``read_data_sets(train_dir)`` with all defaults (TF 1.x contrib.learn helper)."""
    return read_data_sets(train_dir)


# Names TF 1.13-1.15's self-contained input_data.py used for the same objects.
_Datasets = Datasets
_DataSet = DataSet
_extract_images = extract_images
_extract_labels = extract_labels
_dense_to_one_hot = dense_to_one_hot

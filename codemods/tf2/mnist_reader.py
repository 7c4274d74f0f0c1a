"""`tensorflow.examples.tutorials.mnist.input_data` (TF 1.x, not shipped with TF 2) → a small local
reader written into the script, giving the same batches in the same order.

TF 1.x's reader (contrib/learn/python/learn/datasets/mnist.py): the four IDX files, the first
`validation_size` training images as the validation set, images scaled to [0, 1] as float32
(or raw uint8) and flattened to 784, labels as uint8 or float64 one-hot; each `DataSet`
reseeds NumPy's global RNG when it is made (from `seed` if given, else from the graph-level
seed, else from the OS) and `next_batch` shuffles at the first batch and at each epoch's end
with `numpy.random.shuffle`. The translator passes the graph-level seed the script set with
`tf.set_random_seed` before reading, so the reseeding is the same. With no seed at all TF 1.x
reseeded from the OS, a stream nobody could reproduce; TF 2 has no public getter of a global
seed set later (by a test harness, say), so the local reader then leaves NumPy's own state as
it is: a script that seeds NumPy itself keeps its stream, and `tf1clip parity`, which seeds
NumPy and the graph alike on both sides, draws the same batches as TF 1.x's reader reseeded
from that graph seed (as long as nothing drew from NumPy before the reader). Files are read
gzipped or not, and never downloaded (put them in `train_dir`).
"""
from __future__ import annotations

from functools import lru_cache

import libcst as cst
from libcst.helpers import parse_template_module

SOURCE = '''

class MnistDataSet:
    """TF 1.x's MNIST DataSet (tensorflow.examples.tutorials.mnist), kept: TF 2 does not ship it."""

    def __init__(self, images, labels, dtype, reshape, seed):
        if seed is not None:  # TF 1.x reseeded NumPy's global RNG for each DataSet (see below)
            numpy.random.seed(seed)
        self.num_examples = images.shape[0]
        if reshape:
            images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
        if {tf}.as_dtype(dtype) == {tf}.float32:
            images = numpy.multiply(images.astype(numpy.float32), 1.0 / 255.0)
        self.images, self.labels = images, labels
        self.epochs_completed = 0
        self._index_in_epoch = 0

    def _shuffle(self):
        perm = numpy.arange(self.num_examples)
        numpy.random.shuffle(perm)
        self.images, self.labels = self.images[perm], self.labels[perm]

    def next_batch(self, batch_size, shuffle=True):
        start = self._index_in_epoch
        if self.epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self.num_examples:
            self.epochs_completed += 1
            images_rest, labels_rest = self.images[start:], self.labels[start:]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = end = batch_size - (self.num_examples - start)
            return (numpy.concatenate((images_rest, self.images[:end]), axis=0),
                    numpy.concatenate((labels_rest, self.labels[:end]), axis=0))
        self._index_in_epoch += batch_size
        return self.images[start:self._index_in_epoch], self.labels[start:self._index_in_epoch]


def {reader}(train_dir, one_hot=False, dtype={tf}.float32, reshape=True, validation_size=5000, seed=None):
    """TF 1.x's input_data.read_data_sets: the four MNIST files in train_dir (gzipped or not, never
    downloaded) → train, validation and test MnistDataSets."""

    def read(name, header):
        path = os.path.join(train_dir, name)
        opened = gzip.open(path, "rb") if os.path.exists(path) else open(path[:-len(".gz")], "rb")
        print("Extracting", path)
        with opened as f:
            dims = numpy.frombuffer(f.read(4 * header), dtype=">u4")[1:]
            return numpy.frombuffer(f.read(), dtype=numpy.uint8).reshape([int(d) for d in dims])

    def labels(name):
        dense = read(name, 2)
        if not one_hot:
            return dense
        hot = numpy.zeros((dense.shape[0], 10))
        hot[numpy.arange(dense.shape[0]), dense] = 1
        return hot

    train_images = read("train-images-idx3-ubyte.gz", 4)[..., None]
    train_labels = labels("train-labels-idx1-ubyte.gz")
    test_images = read("t10k-images-idx3-ubyte.gz", 4)[..., None]
    test_labels = labels("t10k-labels-idx1-ubyte.gz")
    splits = [(train_images[validation_size:], train_labels[validation_size:]),
              (train_images[:validation_size], train_labels[:validation_size]), (test_images, test_labels)]
    data = [MnistDataSet(images, labels, dtype, reshape, seed) for images, labels in splits]
    return collections.namedtuple("Datasets", ["train", "validation", "test"])(*data)
'''
IMPORTS = ("collections", "gzip", "os")


def definitions(alias: str, numpy: str, reader: str) -> list:
    """The reader's statements, with the module's names for TensorFlow and NumPy."""
    return list(_parsed(alias, numpy, reader))


@lru_cache(maxsize=16)
def _parsed(alias: str, numpy: str, reader: str) -> tuple:
    """The template parsed once per spelling of its names (libcst's nodes are immutable, so a
    tree may share them; parsing the 90 lines took 60-90 ms a file)."""
    source = SOURCE.replace("numpy.", "{np}.")
    return tuple(parse_template_module(source, tf=cst.Name(alias), np=cst.Name(numpy), reader=cst.Name(reader)).body)

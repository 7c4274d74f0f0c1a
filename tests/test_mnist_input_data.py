"""tf1clip.examples.tutorials.mnist.input_data against TF 1.15 behaviour, on real TensorFlow.

Data comes from fixtures/data/make_mnist.py (synthetic, written into tmp dirs).
"""
import gzip
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from tf1clip.examples.tutorials.mnist import input_data

from conftest import make_mnist as load_make_mnist

REPO = Path(__file__).resolve().parents[1]
MAKE_MNIST = REPO / "fixtures" / "data" / "make_mnist.py"
FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
N_TRAIN, N_TEST = 5500, 500


make_mnist = load_make_mnist()


def _parse_idx(path):
    """Independent IDX reader (struct + gzip) used as ground truth."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    magic = struct.unpack(">I", data[:4])[0]
    if magic == 2051:
        n, rows, cols = struct.unpack(">III", data[4:16])
        return np.frombuffer(data[16:], np.uint8).reshape(n, rows, cols)
    assert magic == 2049
    (n,) = struct.unpack(">I", data[4:8])
    return np.frombuffer(data[8:], np.uint8).reshape(n)


def _tf1_reference_batches(n, rng, sizes, shuffle=True):
    """TF 1.x DataSet.next_batch, replayed on indices: [(indices, epochs_completed)]."""
    order, index, epochs, out = np.arange(n), 0, 0, []
    for size in sizes:
        start = index
        if epochs == 0 and start == 0 and shuffle:
            perm = np.arange(n)
            rng.shuffle(perm)
            order = order[perm]
        if start + size > n:
            epochs += 1
            rest = order[start:n]
            if shuffle:
                perm = np.arange(n)
                rng.shuffle(perm)
                order = order[perm]
            index = size - (n - start)
            out.append((np.concatenate([rest, order[:index]]), epochs))
        else:
            index += size
            out.append((order[start:index], epochs))
    return out


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mnist")
    make_mnist.write_mnist(str(folder), n_train=N_TRAIN, n_test=N_TEST, seed=0)
    return folder


@pytest.fixture(scope="module")
def raw(mnist_dir):
    return {name: _parse_idx(mnist_dir / name) for name in FILES}


def _copy_dir(src, dst):
    shutil.copytree(src, dst)
    return dst


# ----------------------------------------------------------------------------- generator


def test_make_mnist_files_are_deterministic_idx(tmp_path, mnist_dir, raw):
    assert sorted(os.listdir(mnist_dir)) == sorted(FILES)
    assert raw[FILES[0]].shape == (N_TRAIN, 28, 28) and raw[FILES[0]].dtype == np.uint8
    assert raw[FILES[1]].shape == (N_TRAIN,) and int(raw[FILES[1]].max()) == 9
    assert raw[FILES[2]].shape == (N_TEST, 28, 28)
    assert raw[FILES[3]].shape == (N_TEST,)
    assert set(np.unique(raw[FILES[1]]).tolist()) == set(range(10))
    # Same seed: byte-identical files; other seed: different content.
    make_mnist.write_mnist(str(tmp_path / "again"), n_train=N_TRAIN, n_test=N_TEST, seed=0)
    make_mnist.write_mnist(str(tmp_path / "other"), n_train=N_TRAIN, n_test=N_TEST, seed=1)
    for name in FILES:
        assert (tmp_path / "again" / name).read_bytes() == (mnist_dir / name).read_bytes()
    assert (tmp_path / "other" / FILES[0]).read_bytes() != (mnist_dir / FILES[0]).read_bytes()


def test_make_mnist_cli(tmp_path):
    out = tmp_path / "cli"
    proc = subprocess.run(
        [sys.executable, str(MAKE_MNIST), str(out), "--train", "30", "--test", "7"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    assert "30 train, 7 test" in proc.stdout
    assert _parse_idx(out / FILES[0]).shape == (30, 28, 28)
    assert _parse_idx(out / FILES[3]).shape == (7,)


def test_synthetic_digits_are_learnable(raw):
    # Nearest-centroid on the synthetic set: the classes are separable, not noise.
    x = raw[FILES[0]].reshape(N_TRAIN, -1).astype(np.float64) / 255.0
    y = raw[FILES[1]]
    xt = raw[FILES[2]].reshape(N_TEST, -1).astype(np.float64) / 255.0
    yt = raw[FILES[3]]
    centroids = np.stack([x[y == k].mean(axis=0) for k in range(10)])
    pred = np.argmin(((xt[:, None, :] - centroids[None]) ** 2).sum(-1), axis=1)
    assert (pred == yt).mean() > 0.9


# ----------------------------------------------------------------------------- reading


def test_default_split_shapes_dtype_and_scaling(mnist_dir, raw, capsys):
    data = input_data.read_data_sets(str(mnist_dir))
    out = capsys.readouterr().out.splitlines()
    assert out == ["Extracting %s" % os.path.join(str(mnist_dir), name) for name in FILES]
    assert isinstance(data, input_data.Datasets) and data._fields == ("train", "validation", "test")
    assert isinstance(data.train, input_data.DataSet)
    assert data.train.images.shape == (N_TRAIN - 5000, 784)
    assert data.validation.images.shape == (5000, 784)
    assert data.test.images.shape == (N_TEST, 784)
    assert (data.train.num_examples, data.validation.num_examples, data.test.num_examples) == (
        500, 5000, 500)
    assert data.train.epochs_completed == 0
    assert data.train.images.dtype == np.float32 and data.train.labels.dtype == np.uint8
    assert data.train.labels.shape == (500,)
    # Validation = first 5000 training rows, train = the rest, pixels / 255 (TF1's float32 math).
    images, labels = raw[FILES[0]].reshape(N_TRAIN, 784), raw[FILES[1]]
    expected = np.multiply(images.astype(np.float32), 1.0 / 255.0)
    np.testing.assert_array_equal(data.validation.images, expected[:5000])
    np.testing.assert_array_equal(data.train.images, expected[5000:])
    np.testing.assert_array_equal(data.validation.labels, labels[:5000])
    np.testing.assert_array_equal(data.train.labels, labels[5000:])
    np.testing.assert_array_equal(data.test.labels, raw[FILES[3]])
    assert float(data.train.images.min()) == 0.0
    assert float(data.train.images.max()) == 1.0


def test_uint8_without_reshape(mnist_dir, raw):
    data = input_data.read_data_sets(str(mnist_dir), dtype=tf.uint8, reshape=False,
                                     validation_size=100)
    assert data.train.images.shape == (N_TRAIN - 100, 28, 28, 1)
    assert data.train.images.dtype == np.uint8
    np.testing.assert_array_equal(data.validation.images[..., 0], raw[FILES[0]][:100])
    np.testing.assert_array_equal(data.test.images[..., 0], raw[FILES[2]])


def test_one_hot(mnist_dir, raw):
    data = input_data.read_data_sets(str(mnist_dir), one_hot=True)
    for split, dense in ((data.train, raw[FILES[1]][5000:]),
                         (data.validation, raw[FILES[1]][:5000]),
                         (data.test, raw[FILES[3]])):
        assert split.labels.shape == (len(dense), 10)
        assert split.labels.dtype == np.float64  # numpy.zeros default, as in TF1
        np.testing.assert_array_equal(split.labels.sum(axis=1), np.ones(len(dense)))
        np.testing.assert_array_equal(split.labels.argmax(axis=1), dense)
    np.testing.assert_array_equal(
        input_data.dense_to_one_hot(np.array([2, 0, 1], np.uint8), 3),
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def test_invalid_dtype_is_type_error(mnist_dir):
    with pytest.raises(TypeError) as info:
        input_data.read_data_sets(str(mnist_dir), dtype=tf.int32)
    assert str(info.value) == "Invalid image dtype tf.int32, expected uint8 or float32"


def test_validation_size_out_of_range(mnist_dir):
    with pytest.raises(ValueError) as info:
        input_data.read_data_sets(str(mnist_dir), validation_size=N_TRAIN + 1)
    assert str(info.value) == "Validation size should be between 0 and 5500. Received: 5501."
    with pytest.raises(ValueError) as info:
        input_data.read_data_sets(str(mnist_dir), validation_size=-1)
    assert str(info.value) == "Validation size should be between 0 and 5500. Received: -1."
    data = input_data.read_data_sets(str(mnist_dir), validation_size=N_TRAIN)
    assert (data.train.num_examples, data.validation.num_examples) == (0, N_TRAIN)


# ----------------------------------------------------------------------------- batching


def test_next_batch_wraparound_matches_tf1(mnist_dir, raw):
    data = input_data.read_data_sets(str(mnist_dir), dtype="uint8", validation_size=N_TRAIN - 10,
                                     seed=11)
    train = data.train
    assert train.num_examples == 10
    images = raw[FILES[0]].reshape(N_TRAIN, 784)[N_TRAIN - 10:]
    labels = raw[FILES[1]][N_TRAIN - 10:]
    sizes = [4, 4, 4, 4, 4, 7]
    # seed given, no graph seed: numpy was seeded with seed2 == 11.
    expected = _tf1_reference_batches(10, np.random.RandomState(11), sizes)
    got = []
    for size, (idx, epochs) in zip(sizes, expected):
        bx, by = train.next_batch(size)
        assert bx.shape == (size, 784) and by.shape == (size,)
        np.testing.assert_array_equal(bx, images[idx])
        np.testing.assert_array_equal(by, labels[idx])
        assert train.epochs_completed == epochs
        got.append(idx)
    # TF1 quirk kept: a batch ending exactly at the epoch end (batch 5) does not bump
    # epochs_completed; the next call does, with an empty "rest" part.
    assert [e for _, e in expected] == [0, 0, 1, 1, 1, 2]
    assert train.epochs_completed == 2
    # The first epoch (4 + 4 + first 2 of batch 3) is a permutation of all 10 examples.
    assert sorted(np.concatenate([got[0], got[1], got[2][:2]]).tolist()) == list(range(10))
    assert got[0].tolist() != [0, 1, 2, 3]  # it was shuffled


def test_next_batch_without_shuffle_is_sequential(mnist_dir, raw):
    data = input_data.read_data_sets(str(mnist_dir), dtype="uint8", validation_size=N_TRAIN - 10)
    labels = raw[FILES[1]][N_TRAIN - 10:]
    _, b1 = data.train.next_batch(6, shuffle=False)
    _, b2 = data.train.next_batch(6, shuffle=False)
    _, b3 = data.train.next_batch(3, shuffle=False)
    np.testing.assert_array_equal(b1, labels[[0, 1, 2, 3, 4, 5]])
    np.testing.assert_array_equal(b2, labels[[6, 7, 8, 9, 0, 1]])
    np.testing.assert_array_equal(b3, labels[[2, 3, 4]])
    assert data.train.epochs_completed == 1


def _batch_labels(data, n=3, size=64):
    return np.concatenate([data.train.next_batch(size)[1] for _ in range(n)])


def test_seed_argument_is_deterministic(mnist_dir, raw):
    with tf.Graph().as_default():
        a = _batch_labels(input_data.read_data_sets(str(mnist_dir), seed=42))
        b = _batch_labels(input_data.read_data_sets(str(mnist_dir), seed=42))
        c = _batch_labels(input_data.read_data_sets(str(mnist_dir), seed=43))
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(7)  # an explicit seed= wins over the graph seed
        d = _batch_labels(input_data.read_data_sets(str(mnist_dir), seed=42))
    expected = _tf1_reference_batches(500, np.random.RandomState(42), [64, 64, 64])
    train_labels = raw[FILES[1]][5000:]
    np.testing.assert_array_equal(a, np.concatenate([train_labels[i] for i, _ in expected]))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, d)
    assert not np.array_equal(a, c)


def test_graph_level_seed_drives_shuffling_without_touching_the_graph(mnist_dir, raw):
    def run(graph_seed, load=True):
        graph = tf.Graph()
        with graph.as_default():
            if graph_seed is not None:
                tf.compat.v1.set_random_seed(graph_seed)
            labels = None
            if load:
                data = input_data.read_data_sets(str(mnist_dir))
                assert graph.get_operations() == []  # get_seed added no ops
                labels = _batch_labels(data)
            seed2 = tf.random.uniform([1]).op.get_attr("seed2")
        return labels, seed2

    a, a_seed2 = run(1234)
    b, _ = run(1234)
    c, _ = run(99)
    expected = _tf1_reference_batches(500, np.random.RandomState(1234), [64, 64, 64])
    train_labels = raw[FILES[1]][5000:]
    np.testing.assert_array_equal(a, np.concatenate([train_labels[i] for i, _ in expected]))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # Like TF1, reading MNIST does not shift the op seeds of later random ops.
    _, untouched_seed2 = run(1234, load=False)
    assert a_seed2 == untouched_seed2
    # No graph seed and no seed=: numpy is reseeded from OS entropy each time.
    u1, _ = run(None)
    u2, _ = run(None)
    assert not np.array_equal(u1, u2)


def test_fake_data():
    data = input_data.read_data_sets("/nonexistent/never/read", fake_data=True, one_hot=True)
    assert data.train.num_examples == 10000 and data.test.num_examples == 10000
    xs, ys = data.train.next_batch(3, fake_data=True)
    assert xs == [[1] * 784] * 3
    assert ys == [[1, 0, 0, 0, 0, 0, 0, 0, 0, 0]] * 3
    dense = input_data.read_data_sets("", fake_data=True)
    assert dense.validation.next_batch(2, fake_data=True)[1] == [0, 0]


# ----------------------------------------------------------------------------- errors / formats


def test_missing_folder_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(input_data.MnistDataMissing) as info:
        input_data.read_data_sets("MNIST_data", one_hot=True, source_url="http://example.invalid/")
    err = info.value
    assert isinstance(err, FileNotFoundError)
    folder = os.path.join(os.getcwd(), "MNIST_data")
    message = str(err)
    assert "\n" not in message
    assert err.folder == folder and err.missing == FILES
    assert message.startswith("MNIST data not found: %s is missing %s (" % (folder, ", ".join(FILES)))
    assert "never downloads" in message
    assert message.endswith("make_mnist.py %s" % folder)
    assert not os.path.exists(folder)  # not created
    assert capsys.readouterr().out == ""  # failed before reading anything


def test_one_missing_file_is_named(mnist_dir, tmp_path):
    folder = _copy_dir(mnist_dir, tmp_path / "partial")
    os.remove(folder / "t10k-labels-idx1-ubyte.gz")
    with pytest.raises(input_data.MnistDataMissing) as info:
        input_data.read_data_sets(str(folder))
    assert info.value.missing == ("t10k-labels-idx1-ubyte.gz",)
    assert "%s is missing t10k-labels-idx1-ubyte.gz (" % folder in str(info.value)


def test_ungzipped_files_are_accepted(mnist_dir, raw, tmp_path, capsys):
    plain = tmp_path / "plain"
    make_mnist.write_mnist(str(plain), n_train=N_TRAIN, n_test=N_TEST, seed=0, compress=False)
    assert sorted(os.listdir(plain)) == sorted(name[:-3] for name in FILES)
    capsys.readouterr()
    data = input_data.read_data_sets(str(plain), one_hot=True, validation_size=1000)
    assert capsys.readouterr().out.splitlines()[0] == "Extracting %s" % (plain / FILES[0][:-3])
    assert data.train.images.shape == (N_TRAIN - 1000, 784)
    np.testing.assert_array_equal(data.validation.labels.argmax(1), raw[FILES[1]][:1000])
    np.testing.assert_array_equal(
        data.test.images, raw[FILES[2]].reshape(N_TEST, 784).astype(np.float32) * (1.0 / 255.0))
    # A raw IDX file that still carries the .gz name is sniffed and read too.
    mixed = _copy_dir(mnist_dir, tmp_path / "mixed")
    shutil.copy(plain / FILES[3][:-3], mixed / FILES[3])
    data = input_data.read_data_sets(str(mixed))
    np.testing.assert_array_equal(data.test.labels, raw[FILES[3]])


def _write_gz(path, payload):
    with gzip.open(path, "wb") as f:
        f.write(payload)


def test_bad_magic_numbers(mnist_dir, tmp_path):
    folder = _copy_dir(mnist_dir, tmp_path / "badimg")
    path = os.path.join(str(folder), FILES[0])
    _write_gz(path, struct.pack(">IIII", 2050, 1, 28, 28) + bytes(784))
    with pytest.raises(ValueError) as info:
        input_data.read_data_sets(str(folder))
    assert str(info.value) == "Invalid magic number 2050 in MNIST image file: %s" % path

    folder = _copy_dir(mnist_dir, tmp_path / "badlbl")
    path = os.path.join(str(folder), FILES[3])
    shutil.copy(folder / FILES[2], path)  # an image file where labels belong
    with pytest.raises(ValueError) as info:
        input_data.read_data_sets(str(folder))
    assert str(info.value) == "Invalid magic number 2051 in MNIST label file: %s" % path


def test_truncated_file(mnist_dir, tmp_path):
    folder = _copy_dir(mnist_dir, tmp_path / "short")
    _write_gz(folder / FILES[1], struct.pack(">II", 2049, N_TRAIN) + bytes(5))
    with pytest.raises(ValueError, match=r"Truncated MNIST label file: .*header says 5500 labels, "
                                         r"found 5$"):
        input_data.read_data_sets(str(folder))


def test_extract_functions_on_open_files(mnist_dir, raw):
    with open(mnist_dir / FILES[2], "rb") as f:
        images = input_data.extract_images(f)
    assert images.shape == (N_TEST, 28, 28, 1) and images.dtype == np.uint8
    np.testing.assert_array_equal(images[..., 0], raw[FILES[2]])
    with open(mnist_dir / FILES[3], "rb") as f:
        labels = input_data.extract_labels(f, one_hot=True, num_classes=10)
    np.testing.assert_array_equal(labels.argmax(1), raw[FILES[3]])
    # TF 1.13-1.15 spelled these with a leading underscore.
    assert input_data._DataSet is input_data.DataSet
    assert input_data._extract_images is input_data.extract_images


def test_import_does_not_load_tensorflow():
    code = (
        "import sys; import tf1clip.examples.tutorials.mnist.input_data as m; "
        "print(sorted(k for k in sys.modules if k.split('.')[0] == 'tensorflow'))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(REPO), check=True, timeout=60)
    assert proc.stdout.strip() == "[]"

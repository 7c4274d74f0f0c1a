"""The TF2 tier's output binds every name the code it writes reads: a module that reaches
TensorFlow only through `tensorflow.examples` (a data helper of a larger repository) gets
`import tensorflow as tf` for the MNIST reader written into it, in each spelling of that import;
a module whose own `tf` is something else is refused rather than shadowed."""
import sys
from pathlib import Path

import pytest

from conftest import assert_parity, make_mnist, run_python

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tf1clip.migrate.engine import migrate  # noqa: E402

BODY = '''

def load(one_hot=True):
    return input_data.read_data_sets("MNIST_data/", one_hot=one_hot)
'''
DRIVER = "import datasets; d = datasets.load(); print(d.train.images.shape, float(d.train.images.max()))"
SPELLINGS = {
    "import_as": "import tensorflow.examples.tutorials.mnist.input_data as input_data\n",
    "from_import": "from tensorflow.examples.tutorials.mnist import input_data\n",
    "after_a_star_import": "from os.path import *\nfrom tensorflow.examples.tutorials.mnist import input_data\n",
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_mnist_reader_in_a_module_without_tensorflow_imports_it(spelling, tmp_path):
    source = SPELLINGS[spelling] + BODY
    outcome = migrate(source, "datasets.py", to="tf2")
    assert outcome.tier == "tf2", outcome.notes
    assert "import tensorflow as tf\n" in outcome.text
    assert migrate(outcome.text, "datasets.py", to="tf2").text == outcome.text  # twice = once
    (tmp_path / "datasets.py").write_text(outcome.text)
    make_mnist().write_mnist(tmp_path / "MNIST_data")
    if spelling != "import_as":
        return  # one run proves the reader; the others differ only in the import line checked above
    ran = run_python("-c", DRIVER, cwd=tmp_path, timeout=300)  # the repository's script that uses it
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split()[-1] == "1.0"  # images scaled to [0, 1], as TF 1.x's reader gave them


def test_a_module_whose_tf_is_something_else_is_refused(tmp_path):
    source = "import numpy as tf\n" + SPELLINGS["from_import"] + BODY
    outcome = migrate(source, "datasets.py", to="tf2")
    assert outcome.tier == "compat"
    reasons = [n.message for n in outcome.notes if "not converted to the TF2 tier" in n.message]
    assert reasons and "a name this module binds to numpy" in reasons[0], outcome.notes


LOCAL_IMPORT = '''import numpy as np
import tensorflow as tf


def model():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(tf.ones([3, 1]) * 0.5)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    return x, loss


def main():
    {local_import}
    x, loss = model()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    xs = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs}})
        print(i, l)


main()
'''


def test_a_function_that_imports_tensorflow_again_reads_the_same_tf(tmp_path):
    """pkmital's tutorials: `model()` reads the module's `tf`, `main()` imports it again itself. Both
    names are the same import, so reading `model`'s body inside `main` means the same."""
    source = LOCAL_IMPORT.format(local_import="import tensorflow as tf")
    outcome = migrate(source, "train.py", to="tf2")
    assert outcome.tier == "tf2", outcome.notes
    assert_parity(tmp_path, source, outcome.text)


def test_a_function_that_binds_tf_to_another_import_is_refused():
    source = LOCAL_IMPORT.format(local_import="import numpy as tf")
    outcome = migrate(source, "train.py", to="tf2")
    assert outcome.tier == "compat"
    reasons = [(n.line, n.message) for n in outcome.notes if "not converted to the TF2 tier" in n.message]
    assert reasons and reasons[0][0] == 13, reasons
    assert "`tf` names an import of TensorFlow and is also bound here" in reasons[0][1], reasons


# `tf.layers` imported under a name of its own: each `L.dense` becomes Keras', and the import, which TF 2
# lacks (`from tensorflow import layers`), goes once nothing reads the name. (`import tensorflow.layers` is
# not among them: the module does not exist for the compat runtime, so TF 1.x's side cannot run it here.)
LAYER_IMPORTS = {
    "from_compat_v1_as": ("from tensorflow.compat.v1 import layers as L\n", "L.dense"),
    "from_tensorflow_as": ("from tensorflow import layers as L\n", "L.dense"),
    "the_function": ("from tensorflow.compat.v1.layers import dense\n", "dense"),
    "assigned": ("L = tf.layers\n", "L.dense"),
}


@pytest.mark.parametrize("spelling", sorted(LAYER_IMPORTS))
def test_tf_layers_under_an_imported_name_converts(spelling, tmp_path):
    from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output
    head, dense = LAYER_IMPORTS[spelling]
    model = (f"h = {dense}(x, 3, kernel_initializer=tf.constant_initializer(0.1), name='d')\n"
             "loss = tf.reduce_mean(tf.square(tf.matmul(h, V) - y))\n")
    text = SMALL_TRAINING.format(head=head, model=model, after="")
    out = tier_output(text)
    assert head not in out and "tf.keras.layers.Dense(" in out
    if spelling in sampled(LAYER_IMPORTS, ("from_tensorflow_as",)):  # parity on CI for one; all in full proofs
        assert_prints_and_trains_alike(tmp_path, text, 4)


# TensorFlow imported inside the function that uses it (pkmital's `def test_mnist(): import tensorflow as tf;
# import tensorflow.examples.tutorials.mnist.input_data as input_data`): the same names, the same translation,
# and the reader's import goes once nothing reads it
LOCAL_READER = '''import numpy as np
import tensorflow as tf


def main():
    import tensorflow as tf
    import tensorflow.examples.tutorials.mnist.input_data as input_data
    mnist = input_data.read_data_sets('MNIST_data', one_hot=True)
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.float32, [None, 10])
    W = tf.Variable(tf.zeros([784, 10]))
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, W)))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], feed_dict={x: mnist.test.images[:20], y: mnist.test.labels[:20]})
        print(i, round(float(l), 5))


if __name__ == '__main__':
    main()
'''


def test_a_functions_own_import_of_the_mnist_reader_converts(tmp_path):
    from conftest import assert_prints_and_trains_alike
    out = migrate(LOCAL_READER, "train.py", to="tf2")
    assert out.tier == "tf2", out.notes
    assert "import tensorflow.examples" not in out.text
    assert "    mnist = read_data_sets('MNIST_data', one_hot=True)\n" in out.text  # the reader written into the file
    make_mnist().write_mnist(tmp_path / "MNIST_data")
    assert_prints_and_trains_alike(tmp_path, LOCAL_READER, 7)  # the reader says "Extracting" four times, as TF 1.x did


def test_a_name_imported_in_functions_from_two_modules_is_not_read_as_either():
    text = LOCAL_READER.replace("import tensorflow as tf\n    import tensorflow.examples", "import tensorflow as tf\n"
                                "    import tensorflow.examples").replace(
        "if __name__", "def other():\n    import numpy as input_data\n    return input_data\n\n\nif __name__")
    out = migrate(text, "train.py", to="tf2")
    assert out.tier == "compat", out.notes

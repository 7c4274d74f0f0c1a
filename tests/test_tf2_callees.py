"""A script's calls into the user's other modules: graph code there is copied or refused, host code is not.

The wrong conversion this guards against: `W = make_w([3, 1])` with `make_w` in `mylib.py`
making a `tf.Variable`. TF 1.x trains W and b; the TF2 tier used to see `make_w(...)` as a plain
Python call and trained b alone. A spelling that imports the function by name (`from mylib import
make_w`, a star import, a package's module) has its definition copied into the script
(`imported_functions`), and the output trains W and b like the original. Every other spelling must
be refused at the line of the script that reads the name (or the import that could not be copied),
with the module, the line there, and what stopped it; a helper module of plain NumPy (or of
TensorFlow's file and logging helpers) converts, and trains like the original.
"""
import sys
from pathlib import Path

import pytest

from conftest import assert_parity, line_of, refusal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

GRAPH_LIB = '''import tensorflow as tf


def make_w(shape):
    return tf.Variable(tf.ones(shape) * 0.5)
'''
HOST_LIB = '''import numpy as np
import tensorflow as tf


def make_w(shape):
    assert tf.io.gfile.exists(".")
    return np.full(shape, 0.5, np.float32)


def with_tf(shape):
    return tf.Variable(tf.ones(shape))
'''
SCRIPT = '''import numpy as np
import tensorflow as tf
{imports}
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
{make}
b = tf.Variable(tf.zeros([1]))
loss = tf.reduce_mean(tf.square(tf.matmul(x, {w}) + b - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
sess = tf.Session()
sess.run(tf.global_variables_initializer())
xs = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0
ys = np.ones((4, 1), np.float32)
for i in range(3):
    _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
    print(i, l)
'''
# the same call, spelt as real scripts spell it: (imports, the statement that makes W, how the graph reads W)
SPELLINGS = {
    "from_import": ("from mylib import make_w", "W = make_w([3, 1])", "W"),
    "module": ("import mylib", "W = mylib.make_w([3, 1])", "W"),
    "module_alias": ("import mylib as lib", "W = lib.make_w([3, 1])", "W"),
    "star": ("from mylib import *", "W = make_w([3, 1])", "W"),
    "function_bound_to_a_name": ("import mylib", "f = mylib.make_w\nW = f([3, 1])", "W"),
    "in_a_dict": ("from mylib import make_w", "weights = {'w': make_w([3, 1])}", "weights['w']"),
    "in_a_list": ("from mylib import make_w", "ws = [make_w([3, 1])]", "ws[0]"),
    "package": ("from pkg.layers import make_w", "W = make_w([3, 1])", "W"),
    "through_a_second_module": ("from wrap import build", "W = build()", "W"),
}


def write_libs(folder: Path, lib: str) -> None:
    (folder / "mylib.py").write_text(lib)
    (folder / "pkg").mkdir(exist_ok=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "layers.py").write_text(lib)
    (folder / "wrap.py").write_text("from mylib import make_w\n\n\ndef build():\n    return make_w([3, 1])\n")


COPIED = ("from_import", "star", "in_a_dict", "in_a_list", "package", "through_a_second_module")


@pytest.mark.parametrize("spelling", sorted(set(SPELLINGS) - set(COPIED)))
def test_graph_code_of_another_module_is_refused_at_the_reading_line(spelling, tmp_path):
    write_libs(tmp_path, GRAPH_LIB)
    imports, make, w = SPELLINGS[spelling]
    source = SCRIPT.format(imports=imports, make=make, w=w)
    (tmp_path / "train.py").write_text(source)
    line, message = refusal(translate(source, str(tmp_path / "train.py")))
    reading = make.splitlines()[0]
    assert line == line_of(source, reading), (line, message)
    assert "comes from another module" in message, message
    assert "reads `tf.Variable`, TensorFlow's" in message and "(mylib.py:4)" in message, message


@pytest.mark.parametrize("spelling", COPIED)
def test_graph_code_imported_by_name_is_copied_and_trains_w_too(spelling, tmp_path):
    write_libs(tmp_path, GRAPH_LIB)
    imports, make, w = SPELLINGS[spelling]
    source = SCRIPT.format(imports=imports, make=make, w=w)
    (tmp_path / "train.py").write_text(source)
    result = translate(source, str(tmp_path / "train.py"))
    assert result.text is not None, [n.message for n in result.notes if n.kind == "human"]
    assert any("copied here from" in n.message and n.line == 3 for n in result.notes)
    # W is made in the TF 2 program (the helper read in place, its list argument its shape), and trained
    assert "tf.Variable(tf.ones([3, 1]) * 0.5)" in result.text
    if spelling in ("from_import", "through_a_second_module"):  # on CI; the others convert the same way
        assert_parity(tmp_path, source, result.text)


def test_a_function_that_imports_the_module_itself_is_refused(tmp_path):
    write_libs(tmp_path, GRAPH_LIB)
    source = SCRIPT.format(imports="", make="W = None", w="W").replace(
        "W = None", "def build():\n    from mylib import make_w\n    return make_w([3, 1])\n\n\nW = build()")
    (tmp_path / "train.py").write_text(source)
    line, message = refusal(translate(source, str(tmp_path / "train.py")))
    assert line == line_of(source, "return make_w([3, 1])"), (line, message)
    assert "`make_w` (mylib.py:4) reads `tf.Variable`" in message, message


def test_a_script_in_a_folder_below_its_package_finds_it(tmp_path):
    """A repository run from its root keeps its packages above the script (`baselines/deepq/...`)."""
    write_libs(tmp_path, GRAPH_LIB)
    (tmp_path / "experiments").mkdir()
    source = SCRIPT.format(imports="from pkg.layers import make_w", make="W = make_w([3, 1])", w="W")
    (tmp_path / "experiments" / "train.py").write_text(source)
    result = translate(source, str(tmp_path / "experiments" / "train.py"))
    assert result.text is not None, [n.message for n in result.notes if n.kind == "human"]
    assert any("copied here from ../pkg/layers.py" in n.message for n in result.notes)


def test_a_module_that_is_not_found_is_refused_with_that_reason(tmp_path):
    source = SCRIPT.format(imports="from mylib import make_w", make="W = make_w([3, 1])", w="W")
    (tmp_path / "train.py").write_text(source)  # no mylib.py next to it
    line, message = refusal(translate(source, str(tmp_path / "train.py")))
    assert line == line_of(source, "W = make_w([3, 1])")
    assert "module `mylib` is neither Python's standard library, nor a package known to stay out of " \
           "TensorFlow, nor a file next to the script" in message, message


def test_host_code_of_the_module_converts_and_trains_like_the_original(tmp_path):
    """`mylib.make_w` makes a NumPy array (it asks tf.io.gfile: host code); the module's other
    function makes a variable, but the script does not read that one."""
    write_libs(tmp_path, HOST_LIB)
    source = SCRIPT.format(imports="import mylib", make="W = mylib.make_w([3, 1])", w="W")
    old = tmp_path / "train.py"
    old.write_text(source)
    result = translate(source, str(old))
    assert result.text is not None, result.notes
    assert_parity(tmp_path, source, result.text)
    # and the name the module's graph function has is refused where the script reads it
    graph = source.replace("mylib.make_w([3, 1])", "mylib.with_tf([3, 1])")
    _, message = refusal(translate(graph, str(old)))
    assert "`with_tf` (mylib.py:10) reads `tf.Variable`" in message, message


def test_a_file_that_uses_no_tensorflow_itself_is_left_as_it_is(tmp_path):
    write_libs(tmp_path, GRAPH_LIB)
    source = "from mylib import make_w\n\nW = make_w([3, 1])\n"
    result = translate(source, str(tmp_path / "train.py"))
    assert result.text == source, result.notes


@pytest.mark.parametrize("spelling", ["import mylib", "from mylib import load", "from mylib import *"])
def test_a_module_whose_import_runs_graph_code_is_refused_at_the_import(spelling, tmp_path):
    """Importing `mylib` makes a variable (TF 1.x's default graph has it, its lists include it),
    even though the function the script calls is plain NumPy."""
    (tmp_path / "mylib.py").write_text("import numpy as np\nimport tensorflow as tf\n\nSHARED = tf.Variable(1.0)\n\n\n"
                                       "def load():\n    return np.full([3, 1], 0.5, np.float32)\n")
    call = "mylib.load()" if spelling == "import mylib" else "load()"
    source = SCRIPT.format(imports=spelling, make=f"W = {call}", w="W")
    (tmp_path / "train.py").write_text(source)
    line, message = refusal(translate(source, str(tmp_path / "train.py")))
    assert line == line_of(source, spelling), (line, message)
    assert message.startswith("not converted to the TF2 tier: importing `mylib` runs mylib.py:4, which reads "
                              "`tf.Variable`, TensorFlow's"), message


def test_reading_the_module_object_itself_reads_all_of_it(tmp_path):
    write_libs(tmp_path, HOST_LIB)  # the module's `tf` and `with_tf`: `getattr` could reach them
    source = SCRIPT.format(imports="import mylib", make="W = getattr(mylib, 'make_w')([3, 1])", w="W")
    (tmp_path / "train.py").write_text(source)
    line, message = refusal(translate(source, str(tmp_path / "train.py")))
    assert line == line_of(source, "getattr(mylib"), (line, message)
    assert "`mylib` comes from another module: `tf` (mylib.py:2), an import of `tensorflow`" in message, message


def test_the_main_guard_of_the_module_does_not_run_on_import(tmp_path):
    (tmp_path / "mylib.py").write_text("import numpy as np\nimport tensorflow as tf\n\n\ndef load():\n"
                                       "    return np.full([3, 1], 0.5, np.float32)\n\n\n"
                                       "if __name__ == '__main__':\n    tf.app.run()\n")
    source = SCRIPT.format(imports="import mylib", make="W = mylib.load()", w="W")
    (tmp_path / "train.py").write_text(source)
    result = translate(source, str(tmp_path / "train.py"))
    assert result.text is not None, result.notes

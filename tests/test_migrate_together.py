"""`migrate --to tf2` over a tree: modules that import each other share a tier.

The compat tier's output calls `tf.disable_v2_behavior()` when it is imported, for the whole
process. Before this rule, a script the TF2 tier converted, importing a host function from a
module the same run left on the compat tier, crashed on its first step (`.numpy()` of a symbolic
tensor). Each case runs the migrated tree and compares what it prints with the original under
`tf1clip run`.
"""
import json
import textwrap

from conftest import run_python, run_tf1clip

from tf1clip.migrate.together import ImportGraph, code_of, demotions, switches_graph_mode

SCRIPT = textwrap.dedent("""\
    import numpy as np
    import tensorflow as tf
    from helper import batch

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    W = tf.Variable(tf.ones([4, 1]) * 0.1)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, W) - y))
    opt = tf.train.GradientDescentOptimizer(0.1)
    gvs = opt.compute_gradients(loss)
    train_op = opt.apply_gradients([(tf.clip_by_norm(g, 1.0), v) for g, v in gvs])
    X = batch(8)
    Y = np.arange(8, dtype=np.float32).reshape(8, 1) / 8.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(4):
            _, l = sess.run([train_op, loss], feed_dict={x: X, y: Y})
            print("loss %.6f" % l)
    """)

HOST = textwrap.dedent("""\
    import numpy as np
    import tensorflow as tf


    def batch(n):
        return np.linspace(-1.0, 1.0, n * 4, dtype=np.float32).reshape(n, 4)
    """)

# graph code the TF2 tier refuses: the module stays on the compat tier
QUEUES = textwrap.dedent("""\


    def read_lines(files):
        queue = tf.train.string_input_producer(files)
        return tf.TextLineReader().read(queue)
    """)

# a library the TF2 tier rewrites (tf.random_uniform -> tf.random.uniform)
RENAMES = textwrap.dedent("""\


    def corrupt(x):
        return x * tf.cast(tf.random_uniform(tf.shape(x), 0, 2, dtype=tf.int32), tf.float32)
    """)

# a script the TF2 tier refuses, importing the library
QUEUE_SCRIPT = textwrap.dedent("""\
    import tensorflow as tf
    from helper import corrupt

    queue = tf.train.string_input_producer(["a.txt"])
    key, value = tf.TextLineReader().read(queue)
    noisy = corrupt(tf.ones([2, 2]))
    print("built", noisy.shape)
    """)


def _migrate(tmp_path, files: dict):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in files.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    out, report = tmp_path / "out", tmp_path / "report.json"
    proc = run_tf1clip("migrate", "src", "--to", "tf2", "--outtree", out, "--report", report, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(report.read_text())
    return src, out, {f["path"].split("src/", 1)[1]: f for f in doc["files"] if f["kind"] in ("python", "notebook")}


def _prints(folder, name="train.py", original=False):
    proc = run_tf1clip("run", name, cwd=folder) if original else run_python(name, cwd=folder)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [line for line in proc.stdout.splitlines() if line.startswith("loss")]


def test_a_script_importing_a_compat_module_stays_with_it_and_runs(tmp_path):
    src, out, files = _migrate(tmp_path, {"train.py": SCRIPT, "helper.py": HOST + QUEUES})
    assert files["helper.py"]["tier"] == "compat"
    assert files["train.py"]["tier"] == "compat"
    note = files["train.py"]["left_for_human"][0]
    assert note["line"] == 3  # `from helper import batch`
    assert "imports src/helper.py, which stays TF 1.x graph code" in note["message"]
    assert "src/train.py:3 → src/helper.py" in note["message"]
    assert "disable_v2_behavior()" in (out / "train.py").read_text()
    want = _prints(src, original=True)
    assert len(want) == 4 and _prints(out) == want


def test_without_a_compat_module_the_script_reaches_the_tf2_tier(tmp_path):
    src, out, files = _migrate(tmp_path, {"train.py": SCRIPT, "helper.py": HOST + RENAMES})
    assert files["train.py"]["tier"] == "tf2" and files["helper.py"]["tier"] == "tf2"
    assert "GradientTape" in (out / "train.py").read_text()
    want = _prints(src, original=True)
    assert _prints(out) == want


def test_graph_code_importing_a_tf2_library_takes_it_and_its_other_importers_along(tmp_path):
    files = {"train.py": SCRIPT, "helper.py": HOST + RENAMES, "reader.py": QUEUE_SCRIPT}
    src, out, report = _migrate(tmp_path, files)
    assert report["reader.py"]["tier"] == "compat"
    assert report["helper.py"]["tier"] == "compat"
    assert "src/reader.py imports it and stays TF 1.x graph code" in report["helper.py"]["left_for_human"][0]["message"]
    assert report["helper.py"]["left_for_human"][0]["line"] == 0
    assert report["train.py"]["tier"] == "compat"
    assert "imports src/helper.py" in report["train.py"]["left_for_human"][0]["message"]
    assert _prints(out) == _prints(src, original=True)
    ran = run_python("reader.py", cwd=out)
    assert ran.returncode == 0 and "built (2, 2)" in ran.stdout, ran.stderr[-2000:]


def test_through_a_package_and_a_module_in_between(tmp_path):
    """train.py imports pkg.data (relative import of .io), which imports the compat module."""
    script = SCRIPT.replace("from helper import batch", "from pkg.data import batch")
    files = {
        "train.py": script,
        "pkg/__init__.py": "",
        "pkg/data.py": "from .io import read_lines\n" + HOST,
        "pkg/io.py": "import tensorflow as tf" + QUEUES,
    }
    src, out, report = _migrate(tmp_path, files)
    assert report["pkg/io.py"]["tier"] == "compat"
    assert report["train.py"]["tier"] == "compat"
    message = report["train.py"]["left_for_human"][0]["message"]
    assert "src/train.py:3 → src/pkg/data.py:1 → src/pkg/io.py" in message
    assert _prints(out) == _prints(src, original=True)


def test_a_notebook_importing_a_compat_module_stays_with_it(tmp_path):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": SCRIPT.splitlines(keepends=True)}]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 2})
    _, out, report = _migrate(tmp_path, {"train.ipynb": notebook, "helper.py": HOST + QUEUES})
    assert report["train.ipynb"]["tier"] == "compat"
    assert "disable_v2_behavior" in (out / "train.ipynb").read_text()


def test_import_graph_resolves_as_python_does(tmp_path):
    files = {
        "repo/run.py": "import numpy\nfrom models import net\nfrom utils.io import load\n",
        "repo/models/__init__.py": "",
        "repo/models/net.py": "from ..utils import io\nfrom . import layers\n",
        "repo/models/layers.py": "import tensorflow as tf\n",
        "repo/utils/__init__.py": "from .io import load\n",
        "repo/utils/io.py": "def load():\n    return 1\n",
        "repo/scripts/go.py": "import models.layers\n",  # found from the folder above
    }
    codes = {}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        codes[str(path)] = (name, text)
    graph = ImportGraph(codes)

    def imports(name):
        return sorted(codes[p][0] for p in graph.modules[str(tmp_path / name)].imports)

    assert imports("repo/run.py") == ["repo/models/__init__.py", "repo/models/net.py", "repo/utils/__init__.py",
                                      "repo/utils/io.py"]
    assert imports("repo/models/net.py") == ["repo/models/__init__.py", "repo/models/layers.py",
                                             "repo/utils/__init__.py", "repo/utils/io.py"]
    assert imports("repo/scripts/go.py") == ["repo/models/__init__.py", "repo/models/layers.py"]
    assert str(tmp_path / "repo/models/layers.py") in graph.reaches(str(tmp_path / "repo/run.py"))


def test_graph_switches_and_demotions_are_read_from_code():
    assert switches_graph_mode("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n")
    assert switches_graph_mode("from tensorflow.compat.v1 import disable_eager_execution\ndisable_eager_execution()\n")
    assert not switches_graph_mode("import tensorflow as tf\n# tf.disable_v2_behavior()\nx = 'disable_v2_behavior'\n")
    assert not switches_graph_mode("def broken(:\n")
    notebook = json.dumps({"cells": [{"cell_type": "code", "source": ["%matplotlib inline\n", "tf.disable_v2_behavior()"]},
                                     {"cell_type": "markdown", "source": "tf.disable_v2_behavior()"}]})
    assert code_of("nb.ipynb", "notebook", notebook).strip() == "tf.disable_v2_behavior()"
    # a -> b -> c; c graph code; a and b TF2: both demoted, b first reason the chain from a
    codes = {"/t/a.py": ("a.py", "import b\n"), "/t/b.py": ("b.py", "import c\n"), "/t/c.py": ("c.py", "x = 1\n"),
             "/t/d.py": ("d.py", "import numpy\n")}
    graph = ImportGraph(codes)
    seen = []
    why = demotions(graph, {"/t/c.py"}, {"/t/a.py", "/t/b.py", "/t/d.py"},
                    lambda path, reason, line: seen.append((path, line)) or True)
    assert sorted(why) == ["/t/a.py", "/t/b.py"]
    assert ("/t/a.py", 1) in seen and "a.py:1 → b.py:1 → c.py" in why["/t/a.py"]

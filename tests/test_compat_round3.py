"""Issue 31's compat-tier items, each on a fixture of our own (fixtures/runtime), through the real CLI:
a contrib import with one name nobody provides, on a branch the run does not take; Keras 2's
optimizer arguments and generator methods; the summary's counts. Real TensorFlow, real subprocesses.
"""
import io
import json
import re
import shutil
import textwrap
import tokenize

from conftest import FIXTURES, run_python, run_tf1clip, tail

from codemods import COMPAT_RULES
from codemods.engine import apply
from tf1clip.contrib.hints import not_provided

RUNTIME = FIXTURES / "runtime"
NAS = not_provided("tf.contrib.rnn.NASCell")[1]


def _code(text):
    """`text` without its strings and comments: what the module runs."""
    drop = (tokenize.STRING, tokenize.COMMENT)
    return " ".join(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in drop)


def _migrate(source, out, cwd, to="compat"):
    proc = run_tf1clip("migrate", source, "--to", to, "--outtree", out, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def _parity(old, new, cwd, tmp_path, steps=3):
    result_file = tmp_path / f"parity-{new.parent.name}.json"
    proc = run_tf1clip("parity", old, new, "--steps", steps, "--json", result_file, cwd=cwd, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    return json.loads(result_file.read_text())


# -- a contrib name nobody provides ----------------------------------------------------------------
def test_unmapped_contrib_name_on_an_unused_branch(tmp_path):
    """`from tensorflow.contrib import rnn` with `rnn.NASCell` on one branch: the module imports
    and trains as under `tf1clip run` (same printed losses, parity); the branch stops with the
    runtime's own message; the use is counted as left for a human."""
    work = tmp_path / "original"
    work.mkdir()
    shutil.copy(RUNTIME / "contrib_unmapped_branch.py", work)
    report = _migrate(work, tmp_path / "compat", tmp_path)
    script = tmp_path / "compat" / "contrib_unmapped_branch.py"
    text = script.read_text()
    assert "contrib" not in _code(text)
    assert f"    cell_fn = _tf1clip_not_provided({NAS!r})\n" in text
    assert "import tf1clip" not in text and "from tf1clip" not in text
    assert "contrib_unmapped_branch.py:14: needs a human [contrib_symbols]: rnn.NASCell" in report
    assert "0 errors; 7 changes, 1 places left for a human" in report, report

    original = run_tf1clip("run", "contrib_unmapped_branch.py", cwd=work)
    migrated = run_python(script, cwd=work)
    assert original.returncode == migrated.returncode == 0, tail(migrated.stderr)
    assert migrated.stdout == original.stdout and len(original.stdout.splitlines()) == 6

    stopped = run_tf1clip("run", "contrib_unmapped_branch.py", "nas", cwd=work)
    raised = run_python(script, "nas", cwd=work)
    assert stopped.returncode == 2 and raised.returncode == 1
    assert stopped.stderr.strip().splitlines()[-1] == f"contrib_unmapped_branch.py:14: {NAS}"
    assert raised.stderr.strip().splitlines()[-1] == f"AttributeError: {NAS}"

    result = _parity(work / "contrib_unmapped_branch.py", script, work, tmp_path)
    assert result["passed"] and len(result["optimizers"][0]["rows"]) == 3


_VARIANTS = {
    # import ... as Y; `from M import A, B`; a chain through tf; an alias; the name rebound later
    "as_module": "import tensorflow as tf\nimport tensorflow.contrib.rnn as crnn\n\n\n"
                 "def make(kind):\n    return crnn.NASCell(3) if kind == 'nas' else crnn.GRUCell(3)\n",
    "from_names": "import tensorflow as tf\nfrom tensorflow.contrib.rnn import NASCell, GRUCell\n\n\n"
                  "def make(kind):\n    return NASCell(3) if kind == 'nas' else GRUCell(3)\n",
    "chain": "import tensorflow as tf\n\n\ndef make(kind):\n"
             "    return tf.contrib.rnn.NASCell(3) if kind == 'nas' else tf.contrib.rnn.GRUCell(3)\n",
    "alias": "import tensorflow as tf\nfrom tensorflow.contrib.rnn import NASCell as Cell\nfrom tensorflow.contrib import rnn\n\n\n"
             "def make(kind):\n    return Cell(3) if kind == 'nas' else rnn.GRUCell(3)\n\n\nGRU = rnn.GRUCell\nrnn = None  # rebound\n",
    "submodule": "import tensorflow as tf\nfrom tensorflow.contrib import distributions as tfd\n\n\n"
                 "def make(kind):\n    return tfd.Normal(0.0, 1.0) if kind == 'nas' else tf.nn.rnn_cell.GRUCell(3)\n",
}


def test_unmapped_contrib_variants_import_and_raise_only_where_used(tmp_path):
    """Each variant's compat output imports; the mapped branch builds its cell, the other raises the
    runtime's message; one place left for a human per unmapped use."""
    for name, code in _VARIANTS.items():
        result = apply(code, COMPAT_RULES, f"{name}.py")
        assert "contrib" not in _code(result.text), (name, result.text)
        humans = [n for n in result.notes if n.kind == "human"]
        assert len(humans) == 1 and "rewrite it by hand" in humans[0].message, (name, result.notes)
        (tmp_path / f"{name}.py").write_text(result.text)
    check = textwrap.dedent(f"""
        import importlib
        for name in {sorted(_VARIANTS)!r}:
            module = importlib.import_module(name)
            print(name, type(module.make("gru")).__name__)
            try:
                module.make("nas")
            except AttributeError as error:
                print(name, error)
    """)
    proc = run_python("-c", check, cwd=tmp_path)
    assert proc.returncode == 0, tail(proc.stderr)
    lines = proc.stdout.splitlines()
    gone = not_provided("tf.contrib.distributions.Normal")[1]
    assert lines == [line for name in sorted(_VARIANTS) for line in
                     (f"{name} GRUCell", f"{name} {gone if name == 'submodule' else NAS}")]


def test_contrib_module_used_whole_is_left_and_counted():
    """`f(rnn)` needs the module itself: the import stays, and the report says the module fails
    at import until a human rewrites it (the truth, not 0 places)."""
    code = "from tensorflow.contrib import rnn\n\ncells = build(rnn)\nextra = rnn.NASCell(3)\n"
    result = apply(code, COMPAT_RULES, "whole.py")
    assert "from tensorflow.contrib import rnn\n" in result.text
    kept = [n for n in result.notes if n.kind == "human" and "kept" in n.message]
    assert len(kept) == 1 and kept[0].line == 1 and "fails at import" in kept[0].message


# -- Keras 2's spellings --------------------------------------------------------------------------------
def test_keras2_optimizer_arguments_in_graph_code(tmp_path):
    """Adam(lr=, clipvalue=, decay=) and SGD(lr, decay=, momentum=, nesterov=) in a TF 1.x graph
    program: the compat output keeps them (tf-keras builds Keras 2's own optimizer in graph mode)
    and prints what `tf1clip run` prints; the TF2 tier writes Keras 3's spellings and passes parity."""
    work = tmp_path / "original"
    work.mkdir()
    shutil.copy(RUNTIME / "keras2_optimizer_args.py", work)
    _migrate(work, tmp_path / "compat", tmp_path)
    _migrate(work, tmp_path / "tf2", tmp_path, to="tf2")
    compat = tmp_path / "compat" / "keras2_optimizer_args.py"
    tf2 = tmp_path / "tf2" / "keras2_optimizer_args.py"
    assert "tf.keras.optimizers.Adam(lr=0.05, clipvalue=1.0, decay=0.05)" in compat.read_text()
    text = tf2.read_text()
    assert ("tf.keras.optimizers.Adam(learning_rate=tf.keras.optimizers.schedules.InverseTimeDecay(0.05, "
            "decay_steps=1, decay_rate=0.05), clipvalue=1.0)") in text
    assert ("tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.InverseTimeDecay(0.002, decay_steps=1, "
            "decay_rate=0.1), momentum=0.9, nesterov=True)") in text

    original = run_tf1clip("run", "keras2_optimizer_args.py", cwd=work)
    migrated = run_python(compat, cwd=work)
    assert original.returncode == migrated.returncode == 0, tail(migrated.stderr)
    assert migrated.stdout == original.stdout and len(original.stdout.splitlines()) == 9

    result = _parity(work / "keras2_optimizer_args.py", tf2, work, tmp_path, steps=4)
    assert result["passed"] and [len(o["rows"]) for o in result["optimizers"]] == [4, 4]


def test_keras2_fit_generator_in_tf2_code(tmp_path):
    """TF 2 code with Keras 2's optimizer arguments and generator methods: Keras 3 rejects it; the
    compat output (the TF2 tier's is the same) runs on Keras 3 and prints `tf1clip run`'s numbers,
    which are Keras 2's (tf-keras' optimizer_v2 in graph mode)."""
    work = tmp_path / "original"
    work.mkdir()
    shutil.copy(RUNTIME / "keras2_fit_generator.py", work)
    report = _migrate(work, tmp_path / "compat", tmp_path)
    _migrate(work, tmp_path / "tf2", tmp_path, to="tf2")
    compat = tmp_path / "compat" / "keras2_fit_generator.py"
    text = compat.read_text()
    assert text == (tmp_path / "tf2" / "keras2_fit_generator.py").read_text()
    assert "_generator" not in _code(text) and "lr =" not in _code(text) and "decay =" not in _code(text)
    assert "sgd_model.fit(batches(), steps_per_epoch=4, epochs=3, verbose=0)" in text
    assert "0 errors; 6 changes, 0 places left for a human" in report, report

    rejected = run_python("keras2_fit_generator.py", cwd=work)
    assert rejected.returncode == 1 and "Argument(s) not recognized: {'lr': 0.05}" in rejected.stderr
    original = run_tf1clip("run", "keras2_fit_generator.py", cwd=work)
    migrated = run_python(compat, cwd=work)
    assert original.returncode == migrated.returncode == 0, tail(migrated.stderr)
    old, new = (re.findall(r"-?\d+\.\d+", p.stdout) for p in (original, migrated))
    assert len(old) == len(new) == 9
    # Keras 2's fused Adam kernel and Keras 3's Adam round differently: 5e-7 relative here
    assert all(abs(float(a) - float(b)) <= 1e-5 * abs(float(a)) + 1e-4 for a, b in zip(old, new)), (old, new)
    assert original.stdout.splitlines()[1] == migrated.stdout.splitlines()[1]  # SGD with decay: exact


def test_inverse_time_decay_is_keras2_decay():
    """By hand and against Keras 2's own optimizer (tf-keras' optimizer_v2): SGD(0.1, decay=0.5)
    steps a variable with gradient 1 by 0.1 / (1 + 0.5 t), t = 0, 1, 2, 3; Keras 3's SGD with
    InverseTimeDecay(0.1, decay_steps=1, decay_rate=0.5) by the same."""
    check = textwrap.dedent("""
        import keras, tf_keras, tensorflow as tf
        k2 = tf_keras.optimizers.legacy.SGD(0.1, decay=0.5)
        k3 = keras.optimizers.SGD(keras.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=1, decay_rate=0.5))
        v2, v3 = tf.Variable(0.0), keras.Variable(0.0)
        for step in range(4):
            before2, before3 = float(v2.numpy()), float(v3.numpy())
            k2.apply_gradients([(tf.constant(1.0), v2)])
            k3.apply_gradients([(tf.constant(1.0), v3)])
            print("%.7f %.7f" % (before2 - float(v2.numpy()), before3 - float(v3.numpy())))
    """)
    proc = run_python("-c", check)
    assert proc.returncode == 0, tail(proc.stderr)
    rows = [tuple(map(float, line.split())) for line in proc.stdout.splitlines()]
    assert len(rows) == 4
    for t, (keras2, keras3) in enumerate(rows):
        assert abs(keras2 - 0.1 / (1 + 0.5 * t)) < 1e-6 and abs(keras3 - keras2) < 1e-7, rows


# -- counts ---------------------------------------------------------------------------------------------
def test_counts_a_file_without_tensorflow_apart(tmp_path):
    """`--to tf2` on a NumPy-only file and a file the TF2 tier converts: the first is counted as
    having no TensorFlow, and "not convertible" appears only when a file fell back."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "utils.py").write_text("import numpy as np\n\nx = np.zeros(3, dtype=np.float)\n")
    shutil.copy(FIXTURES / "legacy" / "r02_clip_by_global_norm.py", tree)
    proc = run_tf1clip("migrate", tree, "--to", "tf2", "--report", tmp_path / "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "utils.py (no TensorFlow: NumPy or Keras spellings only)" in proc.stderr
    summary = proc.stderr.strip().splitlines()[-1]
    assert summary.endswith("; 1 to the TF2 tier, 0 to the compat tier; 1 with no TensorFlow (NumPy or Keras "
                            "spellings only)"), summary
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["summary"]["tf2_tier"] == 1 and doc["summary"]["no_tensorflow"] == 1

    # a graph program the TF2 tier refuses (a Keras model built in a graph): it falls back
    (tree / "graph.py").write_text("import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 3])\n"
                                   "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\ny = model(x)\n")
    proc = run_tf1clip("migrate", tree, "--to", "tf2", cwd=tmp_path)
    summary = proc.stderr.strip().splitlines()[-1]
    fell_back = re.search(r"(\d+) to the compat tier", summary)
    assert fell_back and int(fell_back.group(1)) == 1, summary
    assert summary.count("not convertible to TF2 exactly: the places left for a human say why") == 1, summary

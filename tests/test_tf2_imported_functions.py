"""Definitions a script imports from its own modules, in the TF2 tier (`codemods/tf2/imported_functions.py`).

`from helpers import leaky` where helpers.py defines `leaky` over TensorFlow: the definition is copied to
the import's line and read as the script's own, so the TF 2 program has it in TF 2 form; helpers.py is
left as it is. Variants: a pure function, the same through an alias (`as act`), one making state with
what it reads in its module (another function, a constant), a star import, a class, a module of a
package, a function needing an import the script lacks, one reading a function of a second module
(copied too), a config module by attribute and a host function of a third (imported as it did). Each prints what the original printed and
trains like it (a sample on CI). Refused at the import, with what stopped the copy: a module that runs
code when imported, a function reading a mutable global of its module, one declaring `global`, a name
the script binds too, the module's own `__file__`. A refusal inside a copy says where the code is. In a
tree, a script whose imports of the module were all copied no longer imports it, so it keeps its tier.
"""
import sys
from pathlib import Path

import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, run_python, run_tf1clip, sampled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codemods.tf2.translator import translate  # noqa: E402

HELPERS = '''"""Helpers of the model."""
import tensorflow as tf

SCALE = 0.3


def leaky(t, alpha=0.2):
    return tf.maximum(t, alpha * t)


def weight(shape, step):
    size = shape[0] * shape[1]
    return tf.Variable(tf.ones(shape) * SCALE - tf.reshape(tf.range(size, dtype=tf.float32), shape) * step)


def layer(inp, shape, step=0.05):
    return leaky(tf.matmul(inp, weight(shape, step)))


class Model(object):
    def __init__(self, width):
        self.x = tf.placeholder(tf.float32, [None, 4])
        self.y = tf.placeholder(tf.float32, [None, 1])
        self.W = weight([4, width], 0.05)
        self.V = tf.Variable(tf.ones([width, 1]) * -0.2)
        pred = tf.matmul(leaky(tf.matmul(self.x, self.W)), self.V)
        self.loss = tf.reduce_mean(tf.square(pred - self.y))
        self.train_op = tf.train.AdamOptimizer(0.05).minimize(self.loss)


def scaled(t):
    return tf.identity(t) / math.sqrt(4.0)
'''
HELPERS_WITH_MATH = HELPERS.replace("import tensorflow as tf\n", "import math\n\nimport tensorflow as tf\n")

# a model class of the module, built by the script and trained through its attributes
CLASS_SCRIPT = '''import numpy as np
import tensorflow as tf
from helpers import Model
model = Model(3)
xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([model.train_op, model.loss], {model.x: xs, model.y: ys})
        print("step", i, round(float(l), 5))
    print(len(tf.trainable_variables()), [v.round(4).tolist() for v in sess.run([model.W, model.V])])
'''


def _script(variant_import: str, model: str) -> str:
    return SMALL_TRAINING.format(head=variant_import, after="",
                                 model=model + "loss = tf.reduce_mean(tf.square(pred - y))\n")


# variant: (the script, {module file: text})
CONVERTS = {
    "a_pure_function": ("from helpers import leaky",
                        "pred = tf.matmul(leaky(tf.matmul(x, W)), V)\n", {"helpers.py": HELPERS}),
    "through_an_alias": ("from helpers import leaky as act",
                         "pred = tf.matmul(act(tf.matmul(x, W)), V)\n", {"helpers.py": HELPERS}),
    "making_state_with_what_it_reads": ("from helpers import layer",
                                        "h = layer(x, [4, 3]) + tf.matmul(x, W)\npred = tf.matmul(h, V)\n",
                                        {"helpers.py": HELPERS}),
    "a_star_import": ("from helpers import *",
                      "pred = tf.matmul(leaky(tf.matmul(x, W)), V)\n", {"helpers.py": HELPERS}),

    "a_star_import_read_by_dir": ("from helpers import *",
                                  "assert 'leaky' in dir()\npred = tf.matmul(leaky(tf.matmul(x, W)), V)\n",
                                  {"helpers.py": HELPERS}),
    "a_module_of_a_package": ("from lib.helpers import leaky",
                              "pred = tf.matmul(leaky(tf.matmul(x, W)), V)\n",
                              {"lib/__init__.py": "", "lib/helpers.py": HELPERS}),
    "an_import_the_script_lacks": ("from helpers import scaled",
                                   "pred = tf.matmul(scaled(tf.matmul(x, W)), V)\n",
                                   {"helpers.py": HELPERS_WITH_MATH}),
}
# a definition of a second module, imported by the first: copied too; a config module read by attribute and
# a host function of a user module: imported as the module did
LAYERS = '''import tensorflow as tf
from helpers import weight
import config
from shapes import width


def layer(inp, shape):
    return tf.nn.relu(tf.matmul(inp, weight(shape, config.STEP))) * width(shape)
'''
CONVERTS["through_a_second_module"] = ("from layers import layer", "pred = tf.matmul(layer(x, [4, 3]) + tf.matmul(x, W), V)\n",
                                       {"helpers.py": HELPERS, "layers.py": LAYERS, "config.py": "STEP = 0.05\n",
                                        "shapes.py": "def width(shape):\n    return 1.0 / shape[1]\n"})
CONVERTS = {variant: (_script(head, model), modules) for variant, (head, model, modules) in CONVERTS.items()}
CONVERTS["a_class"] = (CLASS_SCRIPT, {"helpers.py": HELPERS})


def _tree(folder: Path, modules: dict, text: str) -> Path:
    for name, source in modules.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(source)
    script = folder / "old.py"
    script.write_text(text)
    return script


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_an_imported_definition_is_copied_and_converts(variant, tmp_path):
    text, modules = CONVERTS[variant]
    script = _tree(tmp_path, modules, text)
    result = translate(text, str(script))
    assert result.text is not None, [n.message for n in result.notes if n.kind == "human"]
    assert translate(result.text, str(script)).text == result.text  # twice equals once
    copies = [n for n in result.notes if "copied here from" in n.message]
    assert copies and all(n.line == 3 for n in copies)  # said at the import's line
    if variant == "through_a_second_module":  # what the copies read of other modules is imported as they did
        assert "import config\nfrom shapes import width\n" in result.text and "layers import" not in result.text
    elif variant == "a_star_import_read_by_dir":  # the names it binds may be read: kept, the copies after it
        assert "from helpers import *\n" in result.text
    else:
        assert "helpers import" not in result.text  # the script no longer imports the module
    assert "random" not in result.text and "tf.Session" not in result.text
    for name, source in modules.items():
        assert (tmp_path / name).read_text() == source  # the module is left as it is


# run and parity on CI: a function through a second module, state made with what it reads;
# the others in benchmarks/full_proofs.py
@pytest.mark.parametrize("variant", sampled(sorted(CONVERTS), ("through_a_second_module",
                                                               "making_state_with_what_it_reads")))
def test_an_imported_definition_trains_like_tf1(variant, tmp_path):
    text, modules = CONVERTS[variant]
    _tree(tmp_path, modules, text)
    assert_prints_and_trains_alike(tmp_path, text, 4)


REFUSED = {
    "a_module_running_code_when_imported": (HELPERS.replace("SCALE = 0.3\n", "SCALE = 0.3\nprint('helpers loaded')\n"),
                                            "leaky", "importing helpers.py runs line 5"),
    "a_mutable_global_of_its_module": (HELPERS.replace("SCALE = 0.3\n", "SCALE = [0.3]\n").replace(
        "* SCALE", "* SCALE[0]"), "layer", "reads `SCALE`, which is a mutable value of helpers.py (a copy would "
                                           "be another object)"),
    "a_function_declaring_global": (HELPERS.replace("def leaky(t, alpha=0.2):\n", "def leaky(t, alpha=0.2):\n    global SCALE\n    SCALE = alpha\n"),
                                    "layer", "a function of helpers.py declares `global`"),
    "a_mutable_default_value": (HELPERS.replace("def leaky(t, alpha=0.2):", "def leaky(t, alpha=0.2, seen=[]):"),
                                "leaky", "has a default value that is a mutable object"),
    "its_module_file": (HELPERS.replace("return tf.maximum(t, alpha * t)", "return tf.maximum(t, alpha * t, name=__file__[-3:])"),
                        "leaky", "reads `__file__`, which is the module's own"),
}


@pytest.mark.parametrize("variant", sorted(REFUSED))
def test_an_imported_definition_that_cannot_be_copied_is_refused_at_the_import(variant, tmp_path):
    helpers, name, reason = REFUSED[variant]
    model = {"leaky": "pred = tf.matmul(leaky(tf.matmul(x, W)), V)\n",
             "layer": "h = layer(x, [4, 3]) + tf.matmul(x, W)\npred = tf.matmul(h, V)\n"}[name]
    text = _script(f"from helpers import {name}", model)
    script = _tree(tmp_path, {"helpers.py": helpers}, text)
    result = translate(text, str(script))
    assert result.text is None
    human = [n for n in result.notes if n.kind == "human"]
    assert human[0].line == 3, human
    assert f"`{name}` comes from helpers.py" in human[0].message and reason in human[0].message, human[0].message


def test_a_name_the_script_binds_too_is_not_copied_over_it(tmp_path):
    text = _script("from helpers import layer",
                   "def weight(shape, step):\n    return None\nh = layer(x, [4, 3]) + tf.matmul(x, W)\n"
                   "pred = tf.matmul(h, V)\n")
    script = _tree(tmp_path, {"helpers.py": HELPERS}, text)
    result = translate(text, str(script))
    assert result.text is None
    human = [n for n in result.notes if n.kind == "human"][0]
    assert human.line == 3 and "`weight` of helpers.py is copied with it as `weight`, a name the script uses too" \
        in human.message, human.message


def test_a_module_the_script_binds_to_something_else_is_not_read_as_the_copy_reads_it(tmp_path):
    text = _script("from helpers import scaled", "pred = tf.matmul(scaled(tf.matmul(x, W)), V)\n") + "math = None\n"
    script = _tree(tmp_path, {"helpers.py": HELPERS_WITH_MATH}, text)
    result = translate(text, str(script))
    assert result.text is None
    human = [n for n in result.notes if n.kind == "human"][0]
    assert human.line == 3 and "reads `math`, which helpers.py imports as `math`, and the script binds it at line " \
        f"{len(text.splitlines())} to something else" in human.message, human.message


def test_a_module_the_script_imports_after_the_copy_is_imported_with_it(tmp_path):
    text, modules = CONVERTS["an_import_the_script_lacks"]
    text += "import math\n"
    script = _tree(tmp_path, modules, text)
    result = translate(text, str(script))
    assert result.text is not None, [n.message for n in result.notes if n.kind == "human"]
    assert result.text.count("import math\n") == 2  # with the copy, and where the script had it


def test_a_refusal_inside_a_copy_says_where_the_code_is(tmp_path):
    helpers = HELPERS + '''

def scoped(t, name):
    with tf.variable_scope(name):
        return tf.maximum(t, 0.2 * t)
'''
    text = _script("from helpers import scoped", "pred = tf.matmul(scoped(tf.matmul(x, W), 'a' + 'b'), V)\n")
    script = _tree(tmp_path, {"helpers.py": helpers}, text)
    result = translate(text, str(script))
    assert result.text is None
    human = [n for n in result.notes if n.kind == "human"][0]
    assert human.line == 3 and "(in the definition imported, `scoped` (helpers.py:" in human.message, human.message


def test_a_tree_whose_script_no_longer_imports_the_module_keeps_the_tf2_tier(tmp_path):
    text, _ = CONVERTS["making_state_with_what_it_reads"]
    _tree(tmp_path / "src", {"helpers.py": HELPERS}, text)
    proc = run_tf1clip("migrate", tmp_path / "src", "--to", "tf2", "--outtree", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    said = proc.stdout + proc.stderr
    assert "old.py (TF2 tier)" in said and "1 to the TF2 tier, 1 to the compat tier" in said, said[-3000:]
    out = (tmp_path / "out" / "old.py").read_text()
    assert "import helpers" not in out and "from helpers" not in out
    old = run_tf1clip("run", tmp_path / "src" / "old.py", cwd=tmp_path / "src")
    new = run_python(tmp_path / "out" / "old.py", cwd=tmp_path / "out")
    assert old.returncode == 0 and new.returncode == 0, old.stderr[-2000:] + new.stderr[-2000:]
    assert new.stdout == old.stdout and len(old.stdout.splitlines()) == 4

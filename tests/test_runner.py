"""`tf1clip run`: unmodified TF1 scripts in real subprocesses, checked by output and exit code."""
import re
import textwrap

import pytest

from conftest import run_python, run_tf1clip


def write(path, text):
    path.write_text(textwrap.dedent(text).lstrip())
    return path


# TensorFlow's C++ start-up lines (oneDNN, CUDA probing) come before any Python runs and
# ignore TF_CPP_MIN_LOG_LEVEL; they are not tf1clip's output.
TF_NATIVE_LOG = re.compile(r"^(WARNING: All log messages before absl|[IWE]\d{4} \d\d:\d\d:\d\d)")


def stderr_lines(proc):
    return [line for line in proc.stderr.splitlines() if line.strip() and not TF_NATIVE_LOG.match(line)]


def test_missing_script_is_one_line_exit_2(tmp_path):
    proc = run_tf1clip("run", tmp_path / "nope.py", "x")
    assert proc.returncode == 2
    assert stderr_lines(proc) == [f"tf1clip: error: {tmp_path / 'nope.py'}: no such file"]


@pytest.mark.parametrize("source, line, construct", [
    ("import tensorflow as tf\n\nprint 'loss', 1\n", 3, "print statement"),
    ("try:\n    x = 1\nexcept ValueError, e:\n    pass\n", 3, "'except X, e:'"),
    ("x = 0777\n", 1, "Python 2 octal literal"),
])
def test_python2_source_is_one_line_with_file_and_line(tmp_path, source, line, construct):
    script = tmp_path / "old.py"
    script.write_text(source)
    proc = run_tf1clip("run", script)
    assert proc.returncode == 2
    lines = stderr_lines(proc)
    assert len(lines) == 1
    assert lines[0].startswith(f"{script}:{line}: Python 2 syntax ({construct})")
    assert "2to3" in lines[0]


def test_broken_python3_is_a_syntax_error_not_python2(tmp_path):
    script = write(tmp_path / "broken.py", """
        import tensorflow as tf
        def f(:
            pass
    """)
    proc = run_tf1clip("run", script)
    assert proc.returncode == 2
    lines = stderr_lines(proc)
    assert len(lines) == 1 and lines[0].startswith(f"{script}:2: syntax error")


def test_argv_main_sibling_imports_and_exit_status(tmp_path):
    write(tmp_path / "model.py", """
        import tensorflow as tf

        def build():
            x = tf.placeholder(tf.float32, [None, 2], name="x")
            return x, tf.reduce_sum(x * 2.0)
    """)
    script = write(tmp_path / "train.py", """
        import sys
        import tensorflow as tf
        import model

        x, y = model.build()
        with tf.Session() as sess:
            print("y", sess.run(y, {x: [[1.0, 2.0]]}))
        print("argv", sys.argv)
        print("name", __name__, "file", __file__.endswith("train.py"))
        if __name__ == "__main__":
            sys.exit(int(sys.argv[1]))
    """)
    proc = run_tf1clip("run", script, "7", "--flag", cwd=tmp_path)
    assert proc.returncode == 7, proc.stderr
    assert "y 6.0" in proc.stdout
    assert f"argv ['{script}', '7', '--flag']" in proc.stdout
    assert "name __main__ file True" in proc.stdout


def test_script_exception_prints_its_traceback_and_exits_1(tmp_path):
    script = write(tmp_path / "crash.py", """
        import tensorflow as tf

        def step():
            raise RuntimeError("loss exploded")

        step()
    """)
    proc = run_tf1clip("run", script)
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith("RuntimeError: loss exploded")
    assert f'File "{script}", line 4, in step' in proc.stderr
    assert "runner.py" not in proc.stderr


@pytest.mark.parametrize("line, symbol", [
    ("est = tf.contrib.learn.Estimator", "tf.contrib.learn.Estimator"),
    ("from tensorflow.contrib.layers import no_such_layer", "tensorflow.contrib.layers.no_such_layer"),
    ("import tensorflow.contrib.graph_editor as ge", "tensorflow.contrib.graph_editor"),
    ("cell = tf.contrib.rnn.NASCell(4)", "tf.contrib.rnn.NASCell"),
])
def test_unprovided_contrib_symbol_fails_with_one_line_naming_it(tmp_path, line, symbol):
    script = tmp_path / "uses_contrib.py"
    script.write_text(f"import tensorflow as tf\nx = 1\n{line}\n")
    proc = run_tf1clip("run", script)
    assert proc.returncode == 2
    lines = stderr_lines(proc)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{script}:3: {symbol} is not provided by tf1clip")


def test_all_contrib_forms_resolve(tmp_path):
    script = write(tmp_path / "forms.py", """
        import tensorflow as tf
        import tensorflow.contrib.slim as slim
        from tensorflow.contrib.estimator import clip_gradients_by_norm
        from tensorflow.contrib import layers as contrib_layers
        from tensorflow.contrib.layers import optimize_loss, xavier_initializer, l2_regularizer
        from tensorflow.examples.tutorials.mnist import input_data
        from tensorflow.python.ops import math_ops
        names = [
            slim.learning.create_train_op, slim.learning.clip_gradient_norms, slim.fully_connected,
            clip_gradients_by_norm, contrib_layers.fully_connected, optimize_loss, xavier_initializer,
            l2_regularizer, tf.contrib.rnn.BasicLSTMCell, tf.contrib.rnn.LSTMStateTuple,
            tf.contrib.rnn.MultiRNNCell, tf.contrib.rnn.DropoutWrapper, tf.contrib.rnn.static_rnn,
            tf.contrib.framework.get_global_step, tf.contrib.framework.arg_scope,
            tf.contrib.training.clip_gradient_norms, tf.contrib.layers.variance_scaling_initializer,
            tf.clip_by_average_norm, tf.train.AdamOptimizer, input_data.read_data_sets, math_ops.add,
        ]
        print("resolved", len(names), all(callable(n) for n in names))
    """)
    proc = run_tf1clip("run", script)
    assert proc.returncode == 0, proc.stderr
    assert "resolved 21 True" in proc.stdout


SEEDED_BODY = """
tf.set_random_seed(1234)
_ = getattr(getattr(getattr(tf, "contrib", None), "layers", None), "xavier_initializer", None)
x = tf.placeholder(tf.float32, [None, 4])
w = tf.get_variable("w", [4, 3])
h = tf.layers.dense(tf.matmul(x, w), 5, activation=tf.nn.relu)
noise = tf.random_normal([2, 5])
out = tf.nn.dropout(h + noise, keep_prob=0.5)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run([w, out], {x: [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0]]}))
"""


def test_runtime_does_not_change_random_numbers(tmp_path):
    under_runtime = tmp_path / "seeded.py"
    under_runtime.write_text("import tensorflow as tf\n" + SEEDED_BODY)
    reference = tmp_path / "seeded_ref.py"
    reference.write_text("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n" + SEEDED_BODY)
    ran = run_tf1clip("run", under_runtime)
    ref = run_python(reference, env={"TF_USE_LEGACY_KERAS": "1"})
    assert ran.returncode == 0, ran.stderr
    assert ref.returncode == 0, ref.stderr
    assert "array(" in ran.stdout
    assert ran.stdout == ref.stdout


def test_in_code_face_import_under_plain_python(tmp_path):
    script = write(tmp_path / "incode.py", """
        import tf1clip.v1 as tf
        from tf1clip import clip_gradients_by_norm

        x = tf.placeholder(tf.float32, [])
        v = tf.get_variable("v", initializer=3.0)
        opt = clip_gradients_by_norm(tf.train.GradientDescentOptimizer(1.0), 0.5)
        train = opt.minimize(tf.square(v * x))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: 1.0})
            print("v", round(float(sess.run(v)), 6), tf.executing_eagerly(), opt.get_name())
    """)
    proc = run_python(script)
    assert proc.returncode == 0, proc.stderr
    # gradient 6.0 clipped to global norm 0.5 -> v = 3 - 0.5
    assert "v 2.5 False ClipByNormGradientDescent" in proc.stdout


def test_skip_nonfinite_in_tf1_graph_mode(tmp_path):
    script = write(tmp_path / "skip.py", """
        import tensorflow as tf
        from tf1clip import ClippedOptimizer

        scale = tf.placeholder(tf.float32, [])
        v = tf.get_variable("v", initializer=[3.0, -1.0])
        step = tf.train.get_or_create_global_step()
        opt = ClippedOptimizer(tf.train.AdamOptimizer(0.1), "global_norm", 1.0, skip_nonfinite=True)
        train = opt.minimize(tf.reduce_sum(tf.square(v)) * scale, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for s in (float("inf"), float("nan"), 1.0):
                _, norm = sess.run([train, opt.global_norm], {scale: s})
                print("norm", norm, "v", [round(float(a), 4) for a in sess.run(v)], "step", sess.run(step))
    """)
    proc = run_tf1clip("run", script)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "norm inf v [3.0, -1.0] step 0"
    assert lines[1] == "norm nan v [3.0, -1.0] step 0"
    assert lines[2].startswith("norm 6.32") and lines[2].endswith("step 1")
    assert "[2.9, -0.9]" in lines[2]  # Adam's first step moves each weight by lr against its sign

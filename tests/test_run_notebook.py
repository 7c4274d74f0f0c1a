"""`tf1clip run NOTEBOOK.ipynb`: the code cells run in order, as a kernel runs them.

Real subprocesses through the CLI, real TensorFlow. The fixture's losses are recomputed here by
hand (full-batch gradient descent on y = 2x + 1); tracebacks and one-line errors must name the
cell and its line.
"""
from __future__ import annotations

import json

from conftest import FIXTURES, run_tf1clip, tail

NOTEBOOK = FIXTURES / "runtime" / "notebook_linreg.ipynb"


def _by_hand(steps):
    """Losses and final (w, b) of GradientDescent(0.05) on mean((w x + b - y)^2)."""
    xs = [0.0, 1.0, 2.0, 3.0]
    ys = [2 * x + 1 for x in xs]
    w = b = 0.0
    losses = []
    for _ in range(steps):
        errors = [w * x + b - y for x, y in zip(xs, ys)]
        losses.append(sum(e * e for e in errors) / 4)
        gw = sum(2 * e * x for e, x in zip(errors, xs)) / 4
        gb = sum(2 * e for e in errors) / 4
        w, b = w - 0.05 * gw, b - 0.05 * gb
    return losses, w, b


def _notebook(path, *sources):
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": source.splitlines(keepends=True)} for source in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 2}, indent=1))
    return path


def _notes(stderr):
    return [line for line in stderr.splitlines() if line.startswith("tf1clip:")]


def test_notebook_cells_run_in_order_with_ipython_lines_reported(tmp_path):
    proc = run_tf1clip("run", NOTEBOOK, cwd=tmp_path)
    assert proc.returncode == 0, tail(proc.stderr)
    losses, w, b = _by_hand(5)
    lines = proc.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:5]] == [["step", str(k)] for k in range(5)]
    for line, expected in zip(lines[:5], losses):
        assert abs(float(line.split()[3]) - expected) < 1e-4, (line, expected)
    assert losses[0] == 21.0 and lines[0] == "step 0 loss 21.0"
    _, w_text, _, b_text = lines[5].split()
    assert abs(float(w_text) - w) < 1e-4 and abs(float(b_text) - b) < 1e-4
    # the value of the cell's last expression is shown, as a kernel shows it; `steps_run;` is not
    assert abs(float(lines[6]) - (w + b)) < 1e-4 and len(lines) == 7
    where = f"{NOTEBOOK} cell"
    assert _notes(proc.stderr) == [
        f"tf1clip: {where} 2:1: skipped the IPython line '%matplotlib inline' (not Python)",
        f"tf1clip: {where} 2:2: skipped the IPython line '!pip install tensorflow==1.15' (not Python)",
        f"tf1clip: {where} 5:1: ran the body of the %%time cell once (not timed or captured)",
        f"tf1clip: {where} 6:1: skipped the %%bash cell (not Python)",
    ]


def test_notebook_steps_stop_after_n_updates(tmp_path):
    proc = run_tf1clip("run", "--steps", "2", NOTEBOOK, cwd=tmp_path)
    assert proc.returncode == 0, tail(proc.stderr)
    losses, _, _ = _by_hand(2)
    assert [line.split()[:2] for line in proc.stdout.splitlines()] == [["step", "0"], ["step", "1"]]
    assert abs(float(proc.stdout.split()[7]) - losses[1]) < 1e-4
    assert f"tf1clip run: {NOTEBOOK}: stopped after 2 updates (--steps 2)" in proc.stderr


def test_a_crash_points_at_the_cell_and_the_kernel_folder_is_the_notebooks(tmp_path):
    """%%writefile writes into the notebook's folder (the kernel's working directory), the next
    cell imports it, the third fails: exit 1 and a traceback naming cell 3, line 2."""
    folder = tmp_path / "nb"
    folder.mkdir()
    notebook = _notebook(folder / "crash.ipynb", "%%writefile helper.py\nVALUE = 3\n",
                         "import helper\nprint('value', helper.VALUE)",
                         "import tensorflow as tf\nratio = 1 / (helper.VALUE - 3)\n")
    proc = run_tf1clip("run", notebook, cwd=tmp_path)
    assert proc.returncode == 1, tail(proc.stderr)
    assert proc.stdout.splitlines() == ["Writing helper.py", "value 3"]
    assert (folder / "helper.py").read_text() == "VALUE = 3\n"
    assert f'File "{notebook} cell 3", line 2, in <module>' in proc.stderr
    assert "    ratio = 1 / (helper.VALUE - 3)" in proc.stderr and "ZeroDivisionError" in proc.stderr
    assert "notebook_run.py" not in proc.stderr and "runner.py" not in proc.stderr


def test_unsupported_contrib_and_python2_cells_stop_with_one_line(tmp_path):
    contrib = _notebook(tmp_path / "contrib.ipynb", "import tensorflow as tf",
                        "x = 1\nhelper = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper")
    proc = run_tf1clip("run", contrib, cwd=tmp_path)
    assert proc.returncode == 2, tail(proc.stderr)
    assert _notes(proc.stderr) == [] and proc.stderr.strip().splitlines()[-1].startswith(
        f"{contrib} cell 2:2: tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper is not provided by tf1clip")
    old = _notebook(tmp_path / "old.ipynb", "print('fine')", "x = 1\nprint 'old'")
    proc = run_tf1clip("run", old, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""  # nothing ran: the check comes first
    assert proc.stderr.strip().startswith(f"{old} cell 2:2: Python 2 syntax (print statement)")
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    proc = run_tf1clip("run", broken, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip().startswith(f"{broken}:1: not a valid notebook (JSON)")

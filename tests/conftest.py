"""Shared test helpers: run tf1clip / python in real subprocesses."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# The whole proof or CI's sample: a family of long proofs (every fixture of a kind through parity)
# runs a fixed sample of its cases on every CI run, and all of them under TF1CLIP_FULL_PROOF=1
# (benchmarks/full_proofs.py runs those files so).
FULL_PROOF = os.environ.get("TF1CLIP_FULL_PROOF") == "1"


def sampled(every, sample, key=lambda case: case):
    """`every` case under TF1CLIP_FULL_PROOF=1, else those whose `key` is one of `sample` (each of which
    must be some case's), in `every`'s order."""
    every = list(every)
    missing = set(sample) - {key(case) for case in every}
    assert not missing, f"sampled cases that are not cases: {sorted(missing)}"
    return every if FULL_PROOF else [case for case in every if key(case) in sample]


# Quiet TensorFlow's C++ start-up chatter so stderr assertions see only what matters.
QUIET_ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"}


def _env(extra=None):
    env = dict(os.environ)
    env.update(QUIET_ENV)
    env.pop("TF_USE_LEGACY_KERAS", None)
    if extra:
        env.update(extra)
    return env


def run_tf1clip(*args, cwd=None, env=None, timeout=300, input=None):
    """`python -m tf1clip ARGS` in a subprocess; returns CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "tf1clip", *map(str, args)], cwd=cwd, env=_env(env),
                          capture_output=True, text=True, timeout=timeout, input=input)


def run_python(*args, cwd=None, env=None, timeout=300):
    """Plain `python ARGS` in a subprocess; returns CompletedProcess (text)."""
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=_env(env),
                          capture_output=True, text=True, timeout=timeout)


def make_mnist():
    """fixtures/data/make_mnist.py as a module (it is a script, not a package member)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_mnist", FIXTURES / "data" / "make_mnist.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tail(text, n=25):
    """The last n lines of a process' output, for assertion messages."""
    return "\n".join(text.splitlines()[-n:])


@pytest.fixture
def tf1clip_cli():
    return run_tf1clip


def refusal(result) -> tuple:
    """(line, message) of the first place a TF2-tier conversion left for a human (it converted nothing)."""
    humans = [n for n in result.notes if n.kind == "human"]
    assert result.text is None and humans, result.notes
    return humans[0].line, humans[0].message


def line_of(text: str, fragment: str) -> int:
    """The 1-based line of `text` holding `fragment`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


def assert_parity(folder: Path, old_source: str, new_source: str, name: str = "train.py") -> dict:
    """`tf1clip parity` of OLD (the TF 1.x script) against NEW (its migration) in `folder` passes; what
    each side printed under it (its `--json`'s `printed`)."""
    old, new = folder / f"old_{name}", folder / f"new_{name}"
    old.write_text(old_source)
    new.write_text(new_source)
    report = folder / f"parity_{name}.json"
    proc = run_tf1clip("parity", old, new, "--json", report, cwd=folder, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("PASS")
    return json.loads(report.read_text())["printed"]


def step_source(out: str, name: str) -> tuple:
    """(the text of step function `name` in the TF2 output `out`, its return statements)."""
    step = out[out.index(f"def {name}():"):]
    step = step[:step.index("get_concrete_function")]
    return step, [line.strip() for line in step.splitlines() if line.strip().startswith("return")]


def tier_output(text: str, name: str = "t.py") -> str:
    """The TF2 tier's output for `text`, which must convert, and convert to itself again (idempotent)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from codemods.tf2.translator import translate
    result = translate(text, name)
    assert result.text is not None, [n for n in result.notes if n.kind == "human"]
    assert translate(result.text, name).text == result.text
    return result.text


# A small TF 1.x training script with fixed start values, for constructs written into it: `head` after the
# imports (line 3), `model` binding `loss` from `x`, `y`, `W`, `V`, `after` after the update op. It prints
# 4 lines: three losses, then the number of trainable variables and the final W and V.
# its parts, for scripts of other shapes: the inputs and the two variables (fixed start values), and the data
FIXED_START = '''x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.ones([4, 3]) * 0.3 - tf.reshape(tf.range(12, dtype=tf.float32), [4, 3]) * 0.05, name="W")
V = tf.Variable(tf.ones([3, 1]) * -0.2, name="V")
'''
FIXED_DATA = '''xs = np.arange(32, dtype=np.float32).reshape(8, 4) / 32 - 0.3
ys = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
'''
SMALL_TRAINING = "import numpy as np\nimport tensorflow as tf\n{head}\n" + FIXED_START + '''{model}train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
{after}
''' + FIXED_DATA + '''with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys}})
        print("step", i, round(float(l), 5))
    print(len(tf.trainable_variables()), [v.round(4).tolist() for v in sess.run([W, V])])
'''


def assert_prints_and_trains_alike(folder: Path, text: str, lines: int) -> str:
    """The TF2 tier converts `text` (idempotently); its output, run by plain Python, prints exactly what
    `text` printed under the compat runtime (`lines` lines: the script's start values must be fixed in
    it; the TF 1.x side of the parity run, which `tf1clip run` runs alike) and passes `tf1clip parity`;
    the output."""
    (folder / "old.py").write_text(text)
    out = tier_output(text, str(folder / "old.py"))  # read where it runs: modules next to it are the script's
    (folder / "new.py").write_text(out)
    new = run_python(folder / "new.py", cwd=folder)
    assert new.returncode == 0, new.stderr[-2000:]
    printed = assert_parity(folder, text, out)["old"].splitlines()
    assert len(printed) == lines and new.stdout.splitlines() == printed
    return out


def assert_converts_and_trains_alike(folder: Path, text: str) -> str:
    """The TF2 tier converts `text` (idempotently) and its output passes `tf1clip parity`; the output."""
    out = tier_output(text)
    assert_parity(folder, text, out)
    return out

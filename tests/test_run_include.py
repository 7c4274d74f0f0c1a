"""`tf1clip run --include PACKAGE`: a TF 1.x project pip-installed into site-packages gets the face.

The runner tells the user's code from libraries by location, so a legacy project installed
(not editable) into site-packages would get real TF 2 and fail on `tf.placeholder`. The test
builds a tiny project, installs it with pip into a temporary `site-packages` folder, and runs
a script that uses it, without and with `--include`.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import run_tf1clip
from test_runner import stderr_lines


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("include")
    project = root / "project"
    (project / "legacymodel").mkdir(parents=True)
    (project / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='legacymodel', version='0.1', packages=['legacymodel'])\n")
    (project / "legacymodel" / "__init__.py").write_text(textwrap.dedent("""
        import numpy as np
        import tensorflow as tf


        def build():
            x = tf.placeholder(tf.float32, [None, 2], name="x")
            w = tf.Variable(np.ones((2, 1), dtype=np.float).astype(np.float32))  # NumPy 1.x name: the view too
            return x, tf.matmul(x, w)
    """))
    site = root / "site-packages"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                          "--no-build-isolation", "--target", str(site), str(project)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    assert (site / "legacymodel" / "__init__.py").is_file()
    script = root / "train.py"
    script.write_text(textwrap.dedent("""
        import tensorflow as tf
        import legacymodel

        x, y = legacymodel.build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            print("y", sess.run(y, {x: [[1.0, 2.0]]}).tolist())
    """))
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return script, env


def test_installed_project_gets_real_tf2_without_include(installed):
    script, env = installed
    proc = run_tf1clip("run", script, env=env)
    assert proc.returncode == 1
    assert "module 'tensorflow' has no attribute 'placeholder'" in proc.stderr


def test_include_gives_the_installed_project_the_face(installed):
    script, env = installed
    proc = run_tf1clip("run", "--include", "legacymodel", script, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "y [[3.0]]" in proc.stdout  # 1*1 + 2*1


def test_include_of_a_missing_package_is_a_usage_error(installed):
    script, env = installed
    proc = run_tf1clip("run", "--include=no_such_pkg_xyz", script, env=env)
    assert proc.returncode == 2
    assert stderr_lines(proc) == ["tf1clip: error: run: --include no_such_pkg_xyz: no such importable package"]

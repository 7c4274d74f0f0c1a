"""Parity on real repository layouts (issue 27): data outside the working folder, an optimizer
built and never applied, two optimizers sharing variables. Real scripts, real TensorFlow,
the real CLI in subprocesses (tf1clip/parity/layout.py, workdir.py, membership.py)."""
import json
import os
import shutil
import subprocess

from conftest import FIXTURES, make_mnist, run_tf1clip, tail
from tf1clip.parity.workdir import find_root, mirror

LAYOUT = FIXTURES / "parity" / "layout"
COMPAT_HEAD = "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n"


def _repository(tmp_path, git=True):
    """A repository around fixtures/parity/layout: experiments/mnist/train.py reads data/ two
    levels up; the data are made here."""
    repo = tmp_path / "proj"
    shutil.copytree(LAYOUT, repo)
    data = repo / "data"
    data.mkdir()
    make_mnist().write_mnist(data / "MNIST_data", n_train=5100, n_test=100)
    (data / "scale.txt").write_text("0.5")
    (data / "log.txt").write_text("log\n")
    if git:
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo, repo / "experiments" / "mnist"


def _parity(old, new, cwd, *options):
    report = cwd.parent / f"parity-{new.stem}.json"
    proc = run_tf1clip("parity", old, new, "--json", report, *options, cwd=cwd, timeout=600)
    return proc, (json.loads(report.read_text()) if report.exists() else None)


def test_find_root_is_the_work_tree_holding_the_working_directory(tmp_path):
    (tmp_path / "repo" / "a" / "b").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "loose" / "c").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()
    (tmp_path / "repo" / "sub" / ".git").write_text("gitdir: elsewhere\n")  # a submodule or a worktree
    assert find_root(tmp_path / "repo" / "a" / "b") == str(tmp_path / "repo")
    assert find_root(tmp_path / "loose" / "c") == str(tmp_path / "loose" / "c")
    assert find_root(tmp_path / "repo" / "sub") == str(tmp_path / "repo" / "sub")
    # a script of the superproject, run from the submodule: the superproject is the root
    assert find_root(tmp_path / "repo" / "sub", [tmp_path / "repo" / "a" / "t.py"]) == str(tmp_path / "repo")


def test_files_away_from_the_scripts_are_links_and_near_ones_copies(tmp_path):
    source = tmp_path / "src"
    (source / "exp" / "deep").mkdir(parents=True)
    (source / "data").mkdir()
    for name in ("exp/train.py", "exp/deep/conf.txt", "data/a.bin", "README"):
        (source / name).write_text(name)
    made = mirror(source, tmp_path / "copy", copy_under=[source / "exp"], count_limit=1)
    copy = tmp_path / "copy"
    assert (made.copied, made.linked) == (1, 3)
    assert not (copy / "exp" / "train.py").is_symlink()  # the folder's own file first
    for name in ("exp/deep/conf.txt", "data/a.bin", "README"):
        assert os.readlink(copy / name) == str(source / name)


def test_script_reading_data_two_levels_up_passes_from_its_folder_in_a_git_repository(tmp_path):
    repo, here = _repository(tmp_path)
    script = here / "train.py"
    proc, result = _parity(script, script, here, "--keep")
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    assert result["root"] == str(repo)
    assert [len(opt["rows"]) for opt in result["optimizers"]] == [4]
    try:
        for side in result["kept"].values():
            # each side ran from experiments/mnist in its own copy of the repository
            assert os.path.isfile(os.path.join(side, "experiments", "mnist", "train.py"))
            assert os.path.isfile(os.path.join(side, "runs", "model.index"))  # written outside its folder
            assert open(os.path.join(side, "data", "log.txt")).read() == "log\ntrained\n"
            data = os.path.join(side, "data", "MNIST_data", "train-images-idx3-ubyte.gz")
            assert os.readlink(data) == str(repo / "data" / "MNIST_data" / "train-images-idx3-ubyte.gz")
        assert (repo / "data" / "log.txt").read_text() == "log\n"  # the user's files are untouched
        assert not (repo / "runs").exists()
    finally:
        shutil.rmtree(os.path.dirname(os.path.dirname(result["kept"]["old"])))


def test_outside_a_work_tree_the_error_names_the_users_path_and_the_root_to_give(tmp_path):
    repo, here = _repository(tmp_path, git=False)
    script = here / "train.py"
    proc = run_tf1clip("parity", script, script, cwd=here)
    assert proc.returncode == 2
    wanted = (f"tf1clip parity: error: {script}: OLD crashed: FileNotFoundError: [Errno 2] No such file or "
              f"directory: '{here}/../../data/scale.txt' (parity ran this side in a copy of {here}; "
              f"{repo}/data/scale.txt is outside it, so the script could not see it, whatever it holds: run "
              f"parity with --root {repo})")
    assert wanted in proc.stderr.splitlines(), proc.stderr
    wrong = run_tf1clip("parity", script, script, "--root", tmp_path / "elsewhere", cwd=here)
    assert wrong.returncode == 2 and wrong.stderr.strip().endswith(f"--root {tmp_path / 'elsewhere'}: no such folder")
    proc, result = _parity(script, script, here, "--root", "../..", "--steps", "2")
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    assert result["root"] == str(repo) and [len(opt["rows"]) for opt in result["optimizers"]] == [2]


def test_optimizer_built_and_never_applied_is_named_not_compared(tmp_path):
    script = FIXTURES / "parity" / "optimizer_never_applied.py"
    proc, result = _parity(script, script, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    assert "note: optimizer 1 (RMSProp) was built and never stepped on OLD and NEW: not compared" in proc.stdout
    assert [(o["index"], o["old_name"], len(o["rows"])) for o in result["optimizers"]] == [(0, "Adam", 6)]
    # a migration that builds the unused optimizer first (so numbers it 0) still pairs Adam with Adam
    other = tmp_path / "built_first.py"
    text = script.read_text().replace("import tensorflow as tf\n", COMPAT_HEAD)
    adam = "train_adam = tf.train.AdamOptimizer(0.01).minimize(cost)\n"
    rms = "train_rmsprop = tf.train.RMSPropOptimizer(0.01, 0.9).minimize(cost)  # built, never run\n"
    other.write_text(text.replace(adam + rms, rms + adam))
    proc, result = _parity(script, other, tmp_path, "--steps", "3")
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    assert [(o["index"], o["new_name"], len(o["rows"])) for o in result["optimizers"]] == [(0, "Adam", 3)]
    assert {(u["side"], u["name"]) for u in result["unstepped"]} == {("OLD", "RMSProp"), ("NEW", "RMSProp")}


def test_two_optimizers_sharing_variables_pass_and_a_wrong_variable_list_fails(tmp_path):
    script = FIXTURES / "parity" / "gan_shared_variables.py"
    proc, result = _parity(script, script, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    assert [len(o["rows"]) for o in result["optimizers"]] == [5, 5, 5]
    q_solver = result["optimizers"][2]
    assert [w["name"] for w in q_solver["weights"]] == ["G_W1:0", "G_W2:0", "G_b1:0", "G_b2:0",
                                                         "Q_W1:0", "Q_W2:0", "Q_b1:0", "Q_b2:0"]
    assert all(w["ok"] and w["max_abs_diff"] == 0.0 for o in result["optimizers"] for w in o["weights"])
    # NEW's Q solver updates theta_Q only: parity stops NEW at that update and names both lists
    wrong = tmp_path / "q_without_g.py"
    wrong.write_text(script.read_text().replace("import tensorflow as tf\n", COMPAT_HEAD)
                     .replace("var_list=theta_G + theta_Q)", "var_list=theta_Q)"))
    proc = run_tf1clip("parity", script, wrong, cwd=tmp_path, timeout=600)
    assert proc.returncode == 2, proc.stdout[-2000:] + tail(proc.stderr)
    assert f"{wrong}: variables of optimizer 2 do not match OLD's" in proc.stderr
    assert "G_W1:0 opt1/var0 (5, 8)   Q_W1:0 (6, 8)" in proc.stderr


def test_a_sides_paths_are_told_as_the_users_and_those_outside_the_root_say_so():
    from tf1clip.parity.layout import UserPaths

    paths = UserPaths("/home/u/repo", "/tmp/tf1clip-parity-x/old/work", "/home/u/repo/GAN/infogan")
    inside = paths.told("MNIST data not found: /tmp/tf1clip-parity-x/old/work/GAN/MNIST_data is missing a.gz")
    assert inside == "MNIST data not found: /home/u/repo/GAN/MNIST_data is missing a.gz"
    above = paths.told("MNIST data not found: /tmp/tf1clip-parity-x/old/MNIST_data is missing a.gz")
    assert above == ("MNIST data not found: /home/u/MNIST_data is missing a.gz (parity ran this side in a copy of "
                     "/home/u/repo; /home/u/MNIST_data is outside it, so the script could not see it, whatever it "
                     "holds: run parity with --root /home/u)")
    relative = paths.told("FileNotFoundError: [Errno 2] No such file or directory: '../../../data/x.npy'")
    assert relative.endswith("'../../../data/x.npy' (parity ran this side in a copy of /home/u/repo; "
                             "../../../data/x.npy (from the working directory: /home/u/data/x.npy) is outside it, "
                             "so the script could not see it, whatever it holds: run parity with --root /home/u)")
    assert paths.told("No such file: '../../data/x.npy'") == "No such file: '../../data/x.npy'"  # inside the root


def test_the_tf2_tiers_output_passes_in_the_repository_and_saves_where_tf1_saved(tmp_path):
    """`saver.save(sess, "../../runs/model")` (no global_step) reaches the TF2 tier: the converted script,
    run from its folder in its copy of the repository, trains as TF 1.x did and writes `runs/model.index`
    and the `checkpoint` state file two levels up, where TF 1.x wrote them."""
    repo, here = _repository(tmp_path)
    new = here / "train_tf2.py"
    proc = run_tf1clip("migrate", here / "train.py", "--to", "tf2", "--outtree", tmp_path / "out", cwd=here)
    assert proc.returncode == 0 and "(TF2 tier)" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    new.write_text((tmp_path / "out" / "train.py").read_text())
    assert "save_checkpoint(saver, \"../../runs/model\", 5)" in new.read_text()
    proc, result = _parity(here / "train.py", new, here, "--keep")
    assert proc.returncode == 0, proc.stdout[-2000:] + tail(proc.stderr)
    try:
        old_side, new_side = result["kept"]["old"], result["kept"]["new"]
        for side in (old_side, new_side):
            assert os.path.isfile(os.path.join(side, "runs", "model.index"))
        states = [open(os.path.join(side, "runs", "checkpoint")).read() for side in (old_side, new_side)]
        assert states[0] == states[1] == 'model_checkpoint_path: "model"\nall_model_checkpoint_paths: "model"\n'
    finally:
        for side in result["kept"].values():
            shutil.rmtree(side, ignore_errors=True)

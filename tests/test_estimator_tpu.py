"""TPUEstimator code with use_tpu=False, and the ways scripts reach tf.estimator, under `tf1clip run`.

The BERT-style fixture trains through a hand-written weight-decay Adam with warmup, polynomial
decay and clip_by_global_norm; the learning rates it prints are checked against the schedule
computed here. Refusals are one line with the user's file:line and exit 2.
"""
import json

import numpy as np
import pytest
import tensorflow as tf

from conftest import FIXTURES, run_python, run_tf1clip, tail
from tf1clip.contrib import tpu as contrib_tpu
from tf1clip.estimator import tpu as est_tpu

v1 = tf.compat.v1
BERT_STYLE = FIXTURES / "estimator" / "tpu_bert_style.py"


def test_bert_style_tpu_estimator_trains_evaluates_predicts_on_cpu(tmp_path):
    proc = run_tf1clip("run", BERT_STYLE, "--output_dir", tmp_path / "m", cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, tail(proc.stderr)
    lines = proc.stdout.splitlines()
    lrs = [float(line.split()[0].split("=")[1]) for line in lines if line.startswith("lr=")]
    init, warmup, total = 5e-3, 4, 12
    expected = [init * k / warmup if k < warmup else init * (1 - k / total) for k in range(total)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-5, atol=1e-9)
    assert "global_step=12" in lines
    # params["batch_size"] per mode, params["use_tpu"] False, as TPUEstimator handed them on the CPU
    assert "input_fn batch_size=8" in lines and lines.count("input_fn batch_size=4") == 2
    assert "model_fn mode=train batch_size=8 use_tpu=False" in lines
    assert "model_fn mode=eval batch_size=4 use_tpu=False" in lines
    eval_line = next(line for line in lines if line.startswith("eval "))
    metrics = dict(item.split("=") for item in eval_line.split()[1:])
    assert metrics["global_step"] == "12" and 0.0 <= float(metrics["eval_accuracy"]) <= 1.0
    assert float(metrics["eval_loss"]) == pytest.approx(float(metrics["loss"]))  # mean per-example = mean batch
    assert "predicted=40" in lines


@pytest.mark.parametrize("flags, symbol", [
    (["--use_tpu=true", "--tpu_name=my-tpu"], "TPUClusterResolver(tpu='my-tpu')"),
    (["--use_tpu=true"], "TPUEstimator(use_tpu=True)"),
])
def test_asking_for_a_tpu_stops_in_one_line(tmp_path, flags, symbol):
    proc = run_tf1clip("run", BERT_STYLE, *flags, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, tail(proc.stderr)
    (line,) = [x for x in proc.stderr.splitlines() if "is not provided by tf1clip" in x]
    assert line.startswith(f"{BERT_STYLE}:") and symbol in line and "use_tpu=False" in line
    assert "Traceback" not in proc.stderr


def test_cross_shard_optimizer_is_its_optimizer_off_tpu():
    results = []
    for wrap in (False, True):
        with tf.Graph().as_default():
            w = v1.get_variable("w", initializer=tf.constant([1.0, -2.0]))
            loss = tf.reduce_sum(tf.square(w - [3.0, 4.0]))
            inner = v1.train.MomentumOptimizer(0.1, 0.9)
            opt = contrib_tpu.CrossShardOptimizer(inner) if wrap else inner
            train = opt.minimize(loss)
            with v1.Session() as sess:
                sess.run(v1.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                results.append(sess.run(w))
                if wrap:
                    assert opt.get_slot_names() == ["momentum"] and opt.get_slot(w, "momentum") is not None
    np.testing.assert_array_equal(results[0], results[1])


def test_tpu_estimator_spec_becomes_estimator_spec_with_metrics_and_scaffold():
    with tf.Graph().as_default():
        labels = tf.constant([1, 0, 1])
        logits = tf.constant([[0.1, 0.9], [0.8, 0.2], [0.7, 0.3]])
        loss = tf.constant(0.5)
        scaffolds = []

        def metric_fn(label_ids, logits):
            return {"accuracy": v1.metrics.accuracy(label_ids, tf.argmax(logits, -1, output_type=tf.int32))}

        def scaffold_fn():
            scaffolds.append(v1.train.Scaffold())
            return scaffolds[-1]

        for tensors in ([labels, logits], {"label_ids": labels, "logits": logits}):
            spec = est_tpu.TPUEstimatorSpec("eval", loss=loss, eval_metrics=(metric_fn, tensors),
                                            scaffold_fn=scaffold_fn).as_estimator_spec()
            value, update = spec.eval_metric_ops["accuracy"]
            with v1.Session() as sess:
                sess.run(v1.local_variables_initializer())
                sess.run(update)
                assert sess.run(value) == pytest.approx(2 / 3)
            assert spec.scaffold is scaffolds[-1]
        with pytest.raises(ValueError, match="should have two elements"):
            est_tpu.TPUEstimatorSpec("eval", loss=loss, eval_metrics=(metric_fn,))


def test_tpu_estimator_needs_params_in_input_fn_and_a_tpu_run_config(tmp_path):
    def model_fn(features, labels, mode, params):
        raise AssertionError("not reached")

    config = est_tpu.RunConfig(model_dir=str(tmp_path), tpu_config=est_tpu.TPUConfig(iterations_per_loop="10m"))
    estimator = est_tpu.TPUEstimator(model_fn=model_fn, config=config, use_tpu=False, train_batch_size=4)
    with pytest.raises(ValueError, match='params\\["batch_size"\\]'):
        estimator.train(lambda: ({"x": tf.zeros([4, 1])}, tf.zeros([4])), steps=1)
    with pytest.raises(ValueError, match="tpu_config.RunConfig"):
        est_tpu.TPUEstimator(model_fn=model_fn, config=None, use_tpu=False)
    with pytest.raises(ValueError, match="reserved keys"):
        est_tpu.TPUEstimator(model_fn=model_fn, config=config, params={"batch_size": 3}, use_tpu=False)


def test_the_ways_scripts_import_estimator_all_reach_it(tmp_path):
    script = tmp_path / "imports.py"
    script.write_text(
        "import numpy as np\n"
        "import tensorflow.compat.v1 as tf\n"
        "import tensorflow as tf1\n"
        "import tensorflow.estimator as est_module\n"
        "from tensorflow.estimator import RunConfig\n"
        "from tensorflow.compat.v1.estimator.inputs import numpy_input_fn\n"
        "from tensorflow.contrib.tpu import TPUEstimator, TPUEstimatorSpec\n"
        "from tensorflow.contrib.data import map_and_batch\n"
        "assert tf.estimator is tf1.estimator is tf1.compat.v1.estimator is est_module\n"
        "assert TPUEstimator is tf1.estimator.tpu.TPUEstimator and map_and_batch is tf.data.experimental.map_and_batch\n"
        "def model_fn(features, labels, mode):\n"
        "    w = tf.get_variable('w', [1, 1], initializer=tf.zeros_initializer())\n"
        "    loss = tf.reduce_mean(tf.square(tf.matmul(features['x'], w) - labels))\n"
        "    op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())\n"
        "    mean_x = tf.keras.metrics.Mean(); mean_x.update_state(features['x'])  # a Keras Metric object\n"
        "    return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=op, eval_metric_ops={'mean_x': mean_x})\n"
        "e = est_module.Estimator(model_fn, 'm', config=RunConfig(save_checkpoints_steps=2))\n"
        "x = np.ones((4, 1), np.float32)\n"
        "e.train(numpy_input_fn({'x': x}, 2 * x, batch_size=2, shuffle=False, num_epochs=1))\n"
        "print('w=%.4f step=%d' % (e.get_variable_value('w')[0, 0], e.get_variable_value('global_step')))\n"
        "print('mean_x=%.4f' % e.evaluate(numpy_input_fn({'x': 3 * x}, x, shuffle=False))['mean_x'])\n"
        "tf.estimator.LinearRegressor\n")
    proc = run_tf1clip("run", script, cwd=tmp_path)
    # two steps of gradient descent on (w - 2)^2 from 0: 0.4, then 0.4 + 0.2 * 1.6 = 0.72
    assert proc.stdout.strip().splitlines()[-2:] == ["w=0.7200 step=2", "mean_x=3.0000"], tail(proc.stderr)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(
        f"{script}:22: tf.estimator.LinearRegressor is not provided by tf1clip (TensorFlow 2.21 ships no Estimator")


def test_bert_data_generator_writes_what_bert_reads(tmp_path):
    proc = run_python(FIXTURES / "estimator" / "make_bert_data.py", tmp_path / "d", cwd=tmp_path)
    assert proc.returncode == 0, tail(proc.stderr)
    config = json.loads((tmp_path / "d" / "bert_config.json").read_text())
    vocab = (tmp_path / "d" / "vocab.txt").read_text().split()
    assert config["vocab_size"] == len(vocab) and vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    rows = (tmp_path / "d" / "MRPC" / "train.tsv").read_text().splitlines()
    assert len(rows) == 41 and all(len(r.split("\t")) == 5 and r[0] in "01" for r in rows[1:])
    squad = json.loads((tmp_path / "d" / "squad.json").read_text())
    for article in squad["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answer = qa["answers"][0]
                assert paragraph["context"][answer["answer_start"]:].startswith(answer["text"])
    records = list(tf.data.TFRecordDataset(str(tmp_path / "d" / "pretrain.tfrecord")).as_numpy_iterator())
    example = tf.train.Example.FromString(records[0]).features.feature
    assert len(records) == 32 and len(example["input_ids"].int64_list.value) == 32
    assert len(example["masked_lm_positions"].int64_list.value) == 5

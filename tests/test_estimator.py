"""tf1clip.estimator against TF 1.15's Estimator semantics, with numbers computed by hand.

A linear model trained by clipped gradient descent: numpy repeats the updates (the global-norm
clip included), so resumed training, evaluation metrics and predictions are checked against
independent arithmetic, not against the code under test. Real TensorFlow, real checkpoints.
"""
import os

import numpy as np
import pytest
import tensorflow as tf

from tf1clip import estimator as est
from tf1clip.errors import UnsupportedSymbol

v1 = tf.compat.v1

X = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0], [2.0, 1.0, -1.0], [0.0, 3.0, 1.0], [1.0, 1.0, 1.0],
              [-2.0, 0.5, 0.0], [1.5, -0.5, 2.0], [0.0, 0.0, -1.0], [3.0, 1.0, 0.5], [-1.0, 2.0, 1.0]],
             dtype=np.float32)
Y = (X @ np.array([[2.0], [-1.0], [0.5]]) + 1.0).astype(np.float32)
LR, CLIP, BATCH = 0.05, 4.0, 4


def model_fn(features, labels, mode, params):
    w = v1.get_variable("w", [3, 1], initializer=v1.zeros_initializer())
    b = v1.get_variable("b", [1], initializer=v1.constant_initializer(0.5))
    pred = tf.matmul(features["x"], w) + b
    if mode == est.ModeKeys.PREDICT:
        return est.EstimatorSpec(mode, predictions={"pred": pred, "double": 2.0 * pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    optimizer = v1.train.GradientDescentOptimizer(params["lr"])
    grads, variables = zip(*optimizer.compute_gradients(loss))
    grads, _ = tf.clip_by_global_norm(grads, params["clip"])
    train_op = optimizer.apply_gradients(zip(grads, variables), global_step=v1.train.get_global_step())
    return est.EstimatorSpec(mode, loss=loss, train_op=train_op,
                             eval_metric_ops={"mae": v1.metrics.mean_absolute_error(labels, pred)})


def make(model_dir, **config):
    config.setdefault("save_checkpoints_steps", 2)
    return est.Estimator(model_fn, model_dir=str(model_dir), params={"lr": LR, "clip": CLIP},
                         config=est.RunConfig(**config))


def train_input(num_epochs=None):
    return est.inputs.numpy_input_fn({"x": X}, Y, batch_size=BATCH, num_epochs=num_epochs, shuffle=False)


def batches(num_epochs=None):
    """TF 1.15 numpy_input_fn's batches (shuffle=False): rows in order, across epoch ends."""
    rows, start = [], 0
    total = None if num_epochs is None else num_epochs * len(X)
    while total is None or start < total:
        size = BATCH if total is None else min(BATCH, total - start)
        rows.append(np.arange(start, start + size) % len(X))
        start += size
        if total is None and len(rows) > 50:
            break
    return rows


def reference(steps_per_call, w=None, b=None):
    """Clipped gradient descent in float64; each train() call restarts input_fn at row 0."""
    w = np.zeros((3, 1)) if w is None else w
    b = np.full((1,), 0.5) if b is None else b
    for steps in steps_per_call:
        for rows in batches()[:steps]:
            x, y = X[rows].astype(np.float64), Y[rows].astype(np.float64)
            r = x @ w + b - y
            gw, gb = 2.0 * x.T @ r / len(rows), 2.0 * r.sum(0) / len(rows)
            norm = np.sqrt(np.sum(gw ** 2) + np.sum(gb ** 2))
            scale = CLIP / max(norm, CLIP)
            w, b = w - LR * gw * scale, b - LR * gb * scale
    return w, b


def test_numpy_input_fn_batches_are_tf115s_across_epoch_ends():
    for num_epochs, expected in ((None, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [2, 3, 4, 5]]),
                                 (2, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]),
                                 (1, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]])):
        with tf.Graph().as_default():
            features, labels = train_input(num_epochs)()
            seen = []
            with v1.Session() as sess:
                try:
                    while len(seen) < 4 or num_epochs is not None:
                        x, y = sess.run([features["x"], labels])
                        seen.append([int(np.argmin(np.abs(X - row).sum(1))) for row in x])
                        np.testing.assert_array_equal(y, Y[seen[-1]])
                except tf.errors.OutOfRangeError:
                    pass
        assert seen[:len(expected)] == expected and (num_epochs is None or len(seen) == len(expected))


def test_second_train_call_resumes_global_step_and_weights(tmp_path):
    estimator = make(tmp_path / "m")
    estimator.train(train_input(), steps=3)
    assert estimator.get_variable_value("global_step") == 3
    w3, b3 = reference([3])
    np.testing.assert_allclose(estimator.get_variable_value("w"), w3, rtol=1e-5)
    estimator.train(train_input(), steps=2)
    assert estimator.get_variable_value("global_step") == 5  # steps count from where it resumed
    w, b = reference([3, 2])
    np.testing.assert_allclose(estimator.get_variable_value("w"), w, rtol=1e-5)
    np.testing.assert_allclose(estimator.get_variable_value("b"), b, rtol=1e-5)
    assert not np.allclose(w, w3)
    # A new Estimator on the same model_dir continues too (the checkpoint is the state).
    make(tmp_path / "m").train(train_input(), steps=1)
    w6, _ = reference([3, 2, 1])
    np.testing.assert_allclose(v1.train.load_variable(str(tmp_path / "m"), "w"), w6, rtol=1e-5)
    assert os.path.exists(tmp_path / "m" / "graph.pbtxt") and estimator.latest_checkpoint().endswith("-6")


def test_max_steps_and_stop_at_step_hook_stop_at_the_right_step(tmp_path):
    estimator = make(tmp_path / "m")
    estimator.train(train_input(), max_steps=7)
    assert estimator.get_variable_value("global_step") == 7
    estimator.train(train_input(), max_steps=7)  # already there: TF 1.15 skips training
    assert estimator.get_variable_value("global_step") == 7
    estimator.train(train_input(), hooks=[est.StopAtStepHook(last_step=9)])
    assert estimator.get_variable_value("global_step") == 9
    estimator.train(train_input(), hooks=[est.StopAtStepHook(num_steps=2)])
    assert estimator.get_variable_value("global_step") == 11
    estimator.train(train_input(num_epochs=1))  # input runs out after 3 batches (4 + 4 + 2 rows)
    assert estimator.get_variable_value("global_step") == 14
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        estimator.train(train_input(), steps=1, max_steps=20)


def test_evaluate_metrics_by_hand(tmp_path):
    estimator = make(tmp_path / "m")
    estimator.train(train_input(), steps=2)
    w, b = reference([2])
    results = estimator.evaluate(train_input(num_epochs=1), name="check")
    pred = X.astype(np.float64) @ w + b
    batch_losses = [np.mean((pred[rows] - Y[rows]) ** 2) for rows in batches(1)]
    assert results["global_step"] == 2
    assert results["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)  # mean of per-batch losses
    assert results["mae"] == pytest.approx(np.mean(np.abs(pred - Y)), rel=1e-5)  # mean over examples
    assert sorted(results) == ["global_step", "loss", "mae"]
    assert os.listdir(tmp_path / "m" / "eval_check")  # the summary TensorBoard reads
    assert estimator.evaluate(train_input(), steps=1)["loss"] == pytest.approx(batch_losses[0], rel=1e-5)


def test_predict_yields_one_dict_per_example(tmp_path):
    estimator = make(tmp_path / "m")
    estimator.train(train_input(), steps=2)
    w, b = reference([2])
    predict_input = est.inputs.numpy_input_fn({"x": X[:5]}, batch_size=2, num_epochs=1, shuffle=False)
    predictions = list(estimator.predict(predict_input))
    assert len(predictions) == 5 and all(sorted(p) == ["double", "pred"] for p in predictions)
    np.testing.assert_allclose([p["pred"][0] for p in predictions], (X[:5] @ w + b)[:, 0], rtol=1e-5)
    only = list(estimator.predict(predict_input, predict_keys=["double"]))
    np.testing.assert_allclose([p["double"][0] for p in only], 2 * (X[:5] @ w + b)[:, 0], rtol=1e-5)
    assert all(list(p) == ["double"] for p in only)
    whole = list(estimator.predict(predict_input, yield_single_examples=False))
    assert [len(batch["pred"]) for batch in whole] == [2, 2, 1]


def test_dataset_input_fn_with_params_and_mode(tmp_path):
    seen = {}

    def input_fn(params, mode):
        seen["mode"], seen["lr"] = mode, params["lr"]
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(BATCH)

    estimator = make(tmp_path / "m")
    estimator.train(input_fn, steps=3)
    assert seen == {"mode": est.ModeKeys.TRAIN, "lr": LR}
    np.testing.assert_allclose(estimator.get_variable_value("w"), reference([3])[0], rtol=1e-5)


def test_train_and_evaluate_trains_to_max_steps_and_evaluates(tmp_path):
    estimator = make(tmp_path / "m", save_checkpoints_steps=3)
    metrics, exports = est.train_and_evaluate(
        estimator, est.TrainSpec(train_input(), max_steps=7),
        est.EvalSpec(train_input(num_epochs=1), steps=None, throttle_secs=0))
    assert exports == [] and metrics["global_step"] == 7
    w, b = reference([7])
    pred = X.astype(np.float64) @ w + b
    assert metrics["mae"] == pytest.approx(np.mean(np.abs(pred - Y)), rel=1e-5)
    events = os.listdir(tmp_path / "m" / "eval")
    assert events, "evaluations write their summaries under model_dir/eval"


def test_hooks_log_save_summaries_and_checkpoints(tmp_path):
    logged, steps_seen = [], []

    def hooked_model_fn(features, labels, mode, params):
        spec = model_fn(features, labels, mode, params)
        return spec._replace(training_hooks=[
            est.LoggingTensorHook({"loss": spec.loss}, every_n_iter=1, formatter=lambda v: logged.append(v["loss"])),
            est.SummarySaverHook(save_steps=1, output_dir=str(tmp_path / "s"),
                                 summary_op=v1.summary.scalar("my_loss", spec.loss))])

    class Steps(est.SessionRunHook):
        # Fetching the global step in the same run as the train op races with its increment (in TF 1.x
        # too: the read has no control dependency on the update), so the hook reads it after each run.
        def begin(self):
            self.step = v1.train.get_global_step()

        def after_run(self, run_context, run_values):
            steps_seen.append(int(run_context.session.run(self.step)))

    estimator = est.Estimator(hooked_model_fn, model_dir=str(tmp_path / "m"), params={"lr": LR, "clip": CLIP},
                              config=est.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None))
    estimator.train(train_input(), steps=5, hooks=[est.CheckpointSaverHook(str(tmp_path / "m"), save_steps=2), Steps()])
    assert steps_seen == [1, 2, 3, 4, 5]
    expected = []
    for k in range(5):
        w, b = reference([k])
        rows = batches()[k]
        expected.append(np.mean((X[rows] @ w + b - Y[rows]) ** 2))
    np.testing.assert_allclose(logged, expected, rtol=1e-5)
    saved = sorted(int(p.split("-")[1].split(".")[0]) for p in os.listdir(tmp_path / "m") if p.endswith(".index"))
    assert saved == [0, 2, 4, 5]
    summaries = {}
    for name in os.listdir(tmp_path / "s"):
        for event in v1.train.summary_iterator(str(tmp_path / "s" / name)):
            for value in event.summary.value:
                summaries.setdefault(value.tag, {})[event.step] = value.simple_value
    # written at the global step after the update, as TF 1.x's SummarySaverHook did
    np.testing.assert_allclose([summaries["my_loss"][k + 1] for k in range(5)], expected, rtol=1e-5)


def test_run_config_fields_and_seed(tmp_path):
    config = est.RunConfig(model_dir=str(tmp_path / "c"), save_checkpoints_steps=3, keep_checkpoint_max=2,
                           log_step_count_steps=1, save_summary_steps=1, tf_random_seed=7,
                           session_config=v1.ConfigProto(inter_op_parallelism_threads=1))
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs, config.keep_checkpoint_max) == (3, None, 2)
    assert est.RunConfig().save_checkpoints_secs == 600 and est.RunConfig().save_checkpoints_steps is None
    with pytest.raises(ValueError, match="cannot be both set"):
        est.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    values = []

    def random_model_fn(features, labels, mode):
        w = v1.get_variable("w", [3, 1])  # glorot: seeded by the graph seed
        loss = tf.reduce_mean(tf.matmul(features["x"], w))
        values.append(w)
        train_op = v1.train.GradientDescentOptimizer(0.0).minimize(loss, v1.train.get_global_step())
        return est.EstimatorSpec(mode, loss=loss, train_op=train_op)

    firsts = []
    for run in range(2):
        estimator = est.Estimator(random_model_fn, config=config.replace(model_dir=str(tmp_path / f"r{run}")))
        estimator.train(train_input(), steps=1)
        firsts.append(estimator.get_variable_value("w"))
        kept = [p for p in os.listdir(tmp_path / f"r{run}") if p.endswith(".index")]
        assert len(kept) == 2  # steps 0 and 1, at most keep_checkpoint_max
    np.testing.assert_array_equal(firsts[0], firsts[1])
    assert np.abs(firsts[0]).sum() > 0


def test_what_is_not_provided_fails_in_one_line():
    with pytest.raises(UnsupportedSymbol, match=r"^tf\.estimator\.DNNClassifier is not provided by tf1clip "
                                                r"\(TensorFlow 2\.21 ships no Estimator.*write a model_fn"):
        est.DNNClassifier  # noqa: B018
    with pytest.raises(UnsupportedSymbol, match=r"^Estimator\.export_saved_model is not provided"):
        est.Estimator(model_fn, params={}).export_saved_model("x", None)
    with pytest.raises(ValueError, match="does not include params argument"):
        est.Estimator(lambda features, labels, mode: None, params={"a": 1})


def test_model_fn_and_input_fn_get_only_the_arguments_they_name(tmp_path):
    seen = {}

    def config_model_fn(features, labels, config, mode):
        seen["model_dir"], seen["mode"] = config.model_dir, mode
        return model_fn(features, labels, mode, {"lr": LR, "clip": CLIP})

    def input_fn(config):
        seen["input_config"] = config.model_dir
        return train_input()()

    estimator = est.Estimator(config_model_fn, model_dir=str(tmp_path / "m"))
    estimator.train(input_fn, steps=1)
    assert seen == {"model_dir": str(tmp_path / "m"), "mode": "train", "input_config": str(tmp_path / "m")}


def test_pandas_input_fn_without_pandas_says_so():
    # pandas is not a dependency: without it, TF 1.15's own message; with it, the first batch
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(TypeError, match="pandas_input_fn should not be called without pandas installed"):
            est.inputs.pandas_input_fn(None, shuffle=False)
    else:
        frame = pandas.DataFrame({"a": [1.0, 2.0, 3.0]})
        with tf.Graph().as_default():
            features = est.inputs.pandas_input_fn(frame, batch_size=2, shuffle=False)()
            with v1.Session() as sess:
                np.testing.assert_array_equal(sess.run(features)["a"], [1.0, 2.0])

"""`tf.layers.batch_normalization`: the layer, its training switch, and where TF 1.x ran its UPDATE_OPS.

TF 1.x's layer (tf-keras' v1 BatchNormalization under `tf1clip run`) normalizes by the batch's mean and
biased variance in training and by its moving averages otherwise. The moving averages move only in the runs
that reach the layer's update ops, which it put in UPDATE_OPS: a train op made under
`tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))` runs them, one made outside does not.
For a 4-D input TF 1.x used the fused kernel, whose variance for the update has Bessel's correction. Each
variant prints what the moving averages give (an evaluation with the switch off), so a missed, extra or
biased update changes what it prints, and trains like TF 1.x (parity compares the moving averages too).
It was refused ("no TF 2 translation in tf1clip's tables").
"""
import pytest

from conftest import assert_prints_and_trains_alike, refusal, sampled, tier_output

TEXT = '''import numpy as np
import tensorflow as tf
{head}
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
is_training = tf.placeholder(tf.bool, [])
W1 = tf.Variable(tf.reshape(tf.linspace(-0.5, 0.5, 32), [4, 8]))
W2 = tf.Variable(tf.reshape(tf.linspace(0.3, -0.4, 8), [8, 1]))
{model}
loss = tf.reduce_mean(tf.square(pred - y))
{train}
rng = np.random.RandomState(0)
xs = rng.randn(16, 4).astype(np.float32)
ys = rng.randn(16, 1).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(3):
        _, l = sess.run([train_op, loss], {{x: xs, y: ys, is_training: True}})
        print("step", i, round(float(l), 4))
    print("eval", round(float(sess.run(loss, {{x: xs * 0.5, y: ys, is_training: False}})), 4))
'''
SLIM = "import tensorflow.contrib.slim as slim"
DENSE = "h = tf.matmul(x, W1)\nh = tf.layers.batch_normalization(h, momentum=0.5, training=is_training{extra})\n" \
        "pred = tf.matmul(tf.nn.relu(h), W2)"
CONV = ("img = tf.reshape(x, [-1, 2, 2, 1])\n"
        "K = tf.Variable(tf.reshape(tf.linspace(-0.5, 0.5, 36), [3, 3, 1, 4]))\n"
        "h = tf.nn.conv2d(img, K, [1, 1, 1, 1], 'SAME')\n"
        "h = tf.layers.batch_normalization(h, training=is_training, momentum=0.5)\n"
        "h = tf.reshape(tf.nn.relu(h), [-1, 16])\n"
        "pred = tf.matmul(h, tf.Variable(tf.reshape(tf.linspace(0.3, -0.4, 16), [16, 1])))")
WIRED = ("update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n"
         "with tf.control_dependencies(update_ops):\n"
         "    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)")
PLAIN = "train_op = tf.train.AdamOptimizer(0.05).minimize(loss)"
VARIANTS = {  # variant: (head, model, train)
    "dense_wired": ("", DENSE.format(extra=""), WIRED),
    "dense_not_wired": ("", DENSE.format(extra=""), PLAIN),
    "conv_fused_wired": ("", CONV, WIRED),
    # a bias just before the layer: its gradient is rounding noise, which Adam turns into steps of its own size, so
    # only TF 1.x's own ops (moments with a cond per statistic; the fused kernel for 4-D) give the same training
    "bias_before_switch": ("", DENSE.format(extra="").replace("h = tf.matmul(x, W1)\n",
                                                              "h = tf.matmul(x, W1) + tf.Variable(tf.zeros([8]))\n"),
                           WIRED),
    "conv_bias_before_literal_switch": (
        "", CONV.replace("'SAME')\n", "'SAME') + tf.Variable(tf.zeros([4]))\n").replace("training=is_training",
                                                                                        "training=True"), WIRED),
    # the width known through a bias made by `tf.constant(0.1, shape=[8])` (its shape argument: TF 1.x's static shape)
    "width_through_a_constant_bias": ("", DENSE.format(extra="").replace(
        "h = tf.matmul(x, W1)\n", "h = tf.matmul(x, W1) + tf.Variable(tf.constant(0.1, shape=[8]))\n"),
        WIRED),
    "dense_arguments": ("", DENSE.format(extra=", epsilon=1e-5, center=False"), WIRED),
    "collection_inline_gradient_descent": (
        "", DENSE.format(extra=""),
        "opt = tf.train.GradientDescentOptimizer(0.1)\n"
        "with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):\n"
        "    grads = opt.compute_gradients(loss)\n"
        "    train_op = opt.apply_gradients([(tf.clip_by_norm(g, 1.0), v) for g, v in grads])"),
    "collection_by_scope": (
        "", "with tf.variable_scope('net'):\n    " + DENSE.format(extra="").replace("\n", "\n    "),
        WIRED.replace("UPDATE_OPS)", "UPDATE_OPS, scope='net')")),
    "collected_before_the_layer": (
        "", "update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n" + DENSE.format(extra=""),
        "with tf.control_dependencies(update_ops):\n    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)"),
    "in_a_helper": (
        "", "def block(inp, training):\n"
            "    h = tf.matmul(inp, W1)\n"
            "    return tf.nn.relu(tf.layers.batch_normalization(h, training=training, name='bn'))\n"
            "pred = tf.matmul(block(x, is_training), W2)", WIRED),
    "compat_v1_alias": ("from tensorflow.compat.v1 import layers as L",
                        DENSE.format(extra="").replace("tf.layers.", "L."), WIRED),
    "optimize_loss_runs_update_ops": (
        "", DENSE.format(extra=""),
        "gs = tf.train.get_or_create_global_step()\n"
        "train_op = tf.contrib.layers.optimize_loss(loss, gs, 0.05, 'Adam', clip_gradients=1.0)"),
    "in_a_model_class": (
        "", "class Net:\n"
            "    def __init__(self, momentum):\n"
            "        h = tf.layers.batch_normalization(tf.matmul(x, W1), momentum=momentum, training=is_training)\n"
            "        self.out = tf.matmul(tf.nn.relu(h), W2)\n"
            "net = Net(0.5)\n"
            "pred = net.out", WIRED),
    "python_switch": ("TRAIN = True", DENSE.format(extra="").replace("training=is_training", "training=TRAIN"), WIRED),
    "default_switch_is_inference": ("", DENSE.format(extra="").replace(", training=is_training", ""), PLAIN),
    "reused_not_wired": (
        "", "def disc(inp, reuse=False):\n"
            "    h = tf.layers.batch_normalization(tf.matmul(inp, W1), momentum=0.5, training=is_training, "
            "name='bn', reuse=reuse)\n"
            "    return tf.matmul(h, W2)\n"
            "pred = disc(x) + disc(x * 2.0, reuse=True)", PLAIN),
    # tf-slim's batch_norm: a 2-D input through slim's own fused path (beta made first, a Python decay), a 4-D
    # one through the core layer; training on by default; updates_collections=None moves them with the output
    "slim_2d_scale_wired": (SLIM, DENSE.format(extra="").replace(
        "tf.layers.batch_normalization(h, momentum=0.5, training=is_training)",
        "slim.batch_norm(h, decay=0.5, scale=True, is_training=is_training)"), WIRED),
    "contrib_4d_default_switch": ("", CONV.replace(
        "tf.layers.batch_normalization(h, training=is_training, momentum=0.5)",
        "tf.contrib.layers.batch_norm(h, 0.5, scale=True)"), WIRED),
    "slim_forced_updates_activation": (SLIM, DENSE.format(extra="").replace(
        "tf.layers.batch_normalization(h, momentum=0.5, training=is_training)",
        "slim.batch_norm(h, decay=0.5, is_training=is_training, updates_collections=None, "
        "activation_fn=tf.nn.relu)"), PLAIN),
    "slim_create_train_op": ("slim = tf.contrib.slim", DENSE.format(extra="").replace(
        "tf.layers.batch_normalization(h, momentum=0.5, training=is_training)",
        "slim.batch_norm(h, decay=0.5, is_training=is_training)"),
        "train_op = slim.learning.create_train_op(loss, tf.train.AdamOptimizer(0.05))"),
}
SLIM_FORCED = ("slim_forced_updates_activation",)
ALWAYS = ("conv_fused_wired", "bias_before_switch")  # dense_not_wired: proven by the test after this one
# no run reaches an update: none is wired in, or the collection was read before the layer put its update there
NOT_WIRED = ("dense_not_wired", "collected_before_the_layer", "default_switch_is_inference", "reused_not_wired")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_batch_normalization_trains_and_evaluates_like_tf1(variant, tmp_path):
    head, model, train = VARIANTS[variant]
    text = TEXT.format(head=head, model=model, train=train)
    out = tier_output(text)
    assert "LayersBatchNorm(" in out, out
    assert not any(tf1 in out for tf1 in ("layers.batch_normalization(", "slim.batch_norm(", "layers.batch_norm(")), out
    wired = variant not in NOT_WIRED
    # a step runs the update where TF 1.x's run did (slim's forced updates: with the output)
    assert (".update_moving_averages(" in out) == (wired and variant not in SLIM_FORCED), out
    assert (".normalize_and_update(" in out) == (variant in SLIM_FORCED), out
    if variant in sampled(VARIANTS, ALWAYS):
        assert_prints_and_trains_alike(tmp_path, text, 4)


def test_the_moving_averages_move_only_where_tf1_ran_update_ops(tmp_path):
    """The same model wired and not: TF 1.x's evaluation differs between them, and so does the migration's."""
    printed = {}
    for variant in ("dense_wired", "dense_not_wired"):
        head, model, train = VARIANTS[variant]
        folder = tmp_path / variant
        folder.mkdir()
        printed[variant] = assert_prints_and_trains_alike(folder, TEXT.format(head=head, model=model, train=train), 4)
    assert printed["dense_wired"] != printed["dense_not_wired"]


def test_a_layer_updated_twice_in_one_run_is_refused():
    """A GAN's discriminator on real and fake data, both updates wired into one train op: TF 1.x ran the two
    updates of the same moving averages in an order it left open."""
    from codemods.tf2.translator import translate
    model = ("def disc(inp, reuse=False):\n"
             "    return tf.matmul(tf.layers.batch_normalization(tf.matmul(inp, W1), training=True, name='bn', "
             "reuse=reuse), W2)\n"
             "pred = disc(x) + disc(x * 2.0, reuse=True)")
    text = TEXT.format(head="", model=model, train=WIRED)
    line, message = refusal(translate(text, "t.py"))
    assert "twice" in message and "batch normalization layer `bn`" in message, message


def test_control_dependencies_of_other_ops_is_refused():
    from codemods.tf2.translator import translate
    text = TEXT.format(head="", model=DENSE.format(extra=""),
                       train="with tf.control_dependencies([tf.assign(W2, W2 * 0.5)]):\n"
                             "    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)")
    line, message = refusal(translate(text, "t.py"))
    assert text.splitlines()[line - 1].startswith("with tf.control_dependencies("), (line, message)


def test_a_run_of_the_update_ops_themselves_is_refused():
    """`sess.run([train_op, loss, update_ops])`: TF 1.x gave the moving averages after updates it ordered with the
    rest of the run as it liked."""
    from codemods.tf2.translator import translate
    text = TEXT.format(head="", model=DENSE.format(extra=""), train=PLAIN + "\nupdate_ops = tf.get_collection("
                       "tf.GraphKeys.UPDATE_OPS)").replace("_, l = sess.run([train_op, loss]",
                                                           "_, l, _ = sess.run([train_op, loss, update_ops]")
    line, message = refusal(translate(text, "t.py"))
    assert "batch normalization's update ops" in message and "update_ops" in text.splitlines()[line - 1], message

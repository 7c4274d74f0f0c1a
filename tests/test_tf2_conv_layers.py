"""`tf.layers.conv2d_transpose` and `tf.layers.conv1d` → Keras' `Conv2DTranspose` and `Conv1D`, the classes
TF 1.x's functional layers built (tensorflow/python/layers/convolutional.py), made where TF 1.x made their
variables: the same kernels and biases, the same ops. Their static output shapes are TF 1.x's: for the
transpose Keras' `deconv_output_length` (`size * stride`, plus `max(kernel - stride, 0)` when VALID), for
conv1d a convolution's. A flattening after each reads the width TF 1.x knew and prints it, so a wrong shape
shows in the printed lines too. (`tf.layers.conv2d` is proved on the fixtures that use it:
tests/test_tf2_parity.py.)"""
import pytest

from conftest import SMALL_TRAINING, assert_prints_and_trains_alike, sampled, tier_output

IMG = "img = tf.reshape(tf.matmul(x, W), [-1, 1, 3, 1])\n"
FLAT = ("dims = up.get_shape().as_list()\nwidth = dims[1] * dims[2] * dims[3]\nprint('width', width)\n"
        "h = tf.reshape(up, [-1, width])\nV2 = tf.Variable(tf.ones([width, 1]) * 0.05)\n"
        "loss = tf.reduce_mean(tf.square(tf.matmul(h, V2) + tf.matmul(tf.matmul(x, W), V) - y))\n")
INIT = "kernel_initializer=tf.constant_initializer(0.2)"
CONVERTS = {  # variant: (the layer call, its output's height, width and channels, computed by hand)
    "valid": (f"up = tf.layers.conv2d_transpose(img, 2, 3, {INIT})\n", (3, 5, 2)),
    "same_strided": (f"up = tf.layers.conv2d_transpose(img, 2, 2, strides=2, padding='same', {INIT})\n", (2, 6, 2)),
    "valid_strided_positional": (f"up = tf.layers.conv2d_transpose(img, 3, (3, 1), (2, 2), 'valid', {INIT}, "
                                 "activation=tf.nn.relu)\n", (3, 6, 3)),
    "two_of_them": (f"up = tf.layers.conv2d_transpose(img, 2, 2, {INIT})\n"
                    f"up = tf.layers.conv2d_transpose(up, 1, 1, {INIT}, use_bias=False)\n", (2, 4, 1)),
}


@pytest.mark.parametrize("variant", sorted(CONVERTS))
def test_conv2d_transpose_is_kerass_layer_with_tf1s_shape(variant, tmp_path):
    layer, (height, width, channels) = CONVERTS[variant]
    text = SMALL_TRAINING.format(head="", model=IMG + layer + FLAT, after="")
    out = tier_output(text)
    assert "tf.keras.layers.Conv2DTranspose(" in out and "conv2d_transpose(" not in out
    assert f"width = {height} * {width} * {channels}\n" in out  # the static shape, as computed by hand
    # parity on CI for one, every variant in full proofs: TF 1.x printed its own width, the output prints this one
    if variant in sampled(CONVERTS, ("valid_strided_positional",)):
        assert_prints_and_trains_alike(tmp_path, text, 5)


SEQ = "seq = tf.reshape(tf.matmul(x, W), [-1, 3, 1])\n"
FLAT_1D = FLAT.replace("up.get_shape()", "c.get_shape()").replace("dims[1] * dims[2] * dims[3]", "dims[1] * dims[2]") \
    .replace("tf.reshape(up,", "tf.reshape(c,")
CONV1D = {  # variant: (the layer call, its output's length and channels, computed by hand)
    "valid": (f"c = tf.layers.conv1d(seq, 2, 2, {INIT})\n", (2, 2)),
    "same_strided": (f"c = tf.layers.conv1d(seq, 3, 2, strides=2, padding='same', {INIT})\n", (2, 3)),
    "positional_tuple": (f"c = tf.layers.conv1d(seq, 2, (3,), 1, 'valid', {INIT}, activation=tf.nn.relu)\n", (1, 2)),
}


@pytest.mark.parametrize("variant", sorted(CONV1D))
def test_conv1d_is_kerass_layer_with_tf1s_shape(variant, tmp_path):
    layer, (length, channels) = CONV1D[variant]
    text = SMALL_TRAINING.format(head="", model=SEQ + layer + FLAT_1D, after="")
    out = tier_output(text)
    assert "tf.keras.layers.Conv1D(" in out and "conv1d(" not in out
    assert f"width = {length} * {channels}\n" in out  # the static shape, as computed by hand
    if variant in sampled(CONV1D, ("same_strided",)):  # parity on CI for one, every variant in full proofs
        assert_prints_and_trains_alike(tmp_path, text, 5)

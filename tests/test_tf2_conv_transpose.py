"""`tf.layers.conv2d_transpose` → Keras' `Conv2DTranspose`, the class TF 1.x's functional layer built
(tensorflow/python/layers/convolutional.py), made where TF 1.x made its variables: the same kernel
([kh, kw, filters, in]) and bias, the same op (Conv2DBackpropInput). Its static output shape is Keras'
`deconv_output_length` (`size * stride`, plus `max(kernel - stride, 0)` when VALID): a flattening after it
reads the width TF 1.x knew, and prints it, so a wrong shape shows in the printed lines too."""
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

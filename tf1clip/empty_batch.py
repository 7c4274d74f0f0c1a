"""A convolution fed a batch of 0 rows under TF 2.21's oneDNN kernels, named in one line.

TF 1.x's convolution kernels (TensorFlow's own, Eigen) return an empty result of the right
shape for a batch of 0 rows. TF 2.21 on x86 CPUs rewrites convolutions to oneDNN kernels
(on by default since TF 2.9), whose shortcut for an empty batch allocates the output with
the *input's* shape (`mkl_conv_ops.cc`: `AllocateOutputSetMklShape(..., src_tf_shape, ...)`).
The next convolution then stops with "input depth must be evenly divisible by filter depth:
1 vs 64": the classic multi-GPU CNN does that when a tower's slice of the feed is empty
(fewer rows fed than towers x batch size), which TF 1.x ran (the empty tower's mean loss is
NaN, its gradients are zeros).

Nothing in a graph can be changed to avoid it (the rewrite happens inside the runtime, and
`TF_ENABLE_ONEDNN_OPTS` is read once when TensorFlow loads), so `tf1clip run` names the
cause and the two ways out instead of TensorFlow's message.
"""
from __future__ import annotations

import re

from tf1clip.errors import KernelDefect

_DEPTH = re.compile(r"input depth must be evenly divisible by filter depth: (\d+) vs (\d+)")
_CONVS = ("Conv2D", "_FusedConv2D", "Conv3D", "DepthwiseConv2dNative")


def onednn_enabled() -> bool:
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


def explain(exc) -> KernelDefect | None:
    """A one-line KernelDefect for an InvalidArgumentError `exc` raised by a convolution
    whose input had, when it ran, a depth the graph says it cannot have (so an op upstream
    made a tensor of the wrong shape) while oneDNN is on; None for any other error."""
    match = _DEPTH.search(getattr(exc, "message", "") or str(exc))
    if match is None or not onednn_enabled():
        return None
    ran, filter_depth = int(match.group(1)), int(match.group(2))
    conv = _convolution(getattr(exc, "op", None))
    if conv is None:
        return None
    channels_last = conv.get_attr("data_format") in (b"NHWC", b"NDHWC")
    shape = conv.inputs[0].shape
    if shape.rank is None:
        return None
    static = shape.as_list()[-1 if channels_last else 1]  # an int or None (v1 shapes index to Dimension)
    if static is None or static % filter_depth or ran == static:
        return None
    return KernelDefect(
        f"{conv.name}: this convolution's input has depth {static} in the graph but {ran} when it ran: "
        "TF 2.21's oneDNN convolution gives a batch of 0 rows its input's shape (TF 1.x's kernels gave an "
        "empty result), e.g. a tower's slice of a feed with fewer rows than towers x batch size; feed every "
        "tower rows, or run with TF_ENABLE_ONEDNN_OPTS=0 (TensorFlow's own kernels, as TF 1.x used)")


def _convolution(op, hops: int = 4):
    """The convolution op the failing node stands for: itself, or (the remapper fuses
    Conv2D + BiasAdd + Relu into a node named after the Relu) an input a few ops up."""
    for _ in range(hops):
        if op is None:
            return None
        if op.type in _CONVS:
            return op
        op = op.inputs[0].op if op.inputs else None
    return None

"""KB246: with precision low on an ARMv8.2 CPU (fp16 arithmetic), MNN runs its fp16 kernels, and a plain CNN's
outputs drift from torch's: no overflow, no NaN, only fp16's rounding inside each convolution, compounded layer
after layer. The same .mnn with precision normal, on ARMv8.0 or on x86 stays within fp32's rounding.

The model is KB229's (kb.blocks.drift_net): 3x3 Conv + BatchNorm + ReLU blocks, a global average pool and a Linear
head of 4 values, every activation of order 1."""

from kb.blocks import DEEP, WIDE, drift_image as image, drift_net as make
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"], opset=13, dynamo=False)


def cases():
    yield Case("cnn", make(), image(), **IO)
    yield Case("cnn-wide", make(WIDE), image(), **IO)
    yield Case("cnn-deep", make(DEEP), image(), **IO)


def variants():
    # Other draws of the weights and of the input, and the dynamo export: is the drift stable?
    yield Case("seed2", make(seed=2), image(seed=2), **IO)
    yield Case("seed3", make(seed=3), image(seed=3), **IO)
    yield Case("wide-seed2", make(WIDE, seed=2), image(seed=2), **IO)
    yield Case("cnn-dynamo", make(), image(), **{**IO, "opset": 18, "dynamo": True})

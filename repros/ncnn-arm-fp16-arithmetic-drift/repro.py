"""KB229: on ncnn's ARM CPU path with fp16 arithmetic (ARMv8.2: asimdhp, where ncnn turns it on by default), a
plain CNN's outputs drift from torch's by about one to two percent: no overflow, no NaN, only fp16's rounding inside
each convolution, compounded layer after layer. The same .param/.bin on ARMv8.0, or with use_fp16_arithmetic off,
is within fp16 storage's rounding (a few 1e-4).

The model: a small image regressor of the usual kind, 3x3 Conv + BatchNorm + ReLU blocks (three of stride 2), a
global average pool and a Linear head of 4 values (logits or box offsets, about -0.6 to 0.6). The BatchNorm
statistics are those of the training-mode passes over normal images, as a trained model's would be, so every
activation is of order 1: nothing comes near fp16's range."""

from kb.blocks import DEEP, WIDE, drift_image as image, drift_net as make
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    # Exported at opset 11 (the BatchNorms folded into the convolutions) for onnx2ncnn, and traced for pnnx.
    yield Case("cnn", make(), image(), opset=11, dynamo=False, torchscript=True, **IO)
    yield Case("cnn-wide", make(WIDE), image(), opset=11, dynamo=False, torchscript=True, **IO)
    yield Case("cnn-deep", make(DEEP), image(), opset=11, dynamo=False, torchscript=True, **IO)


def variants():
    # Other draws of the weights and of the input (onnx2ncnn), and the wide net through pnnx: is the drift stable?
    yield Case("seed2-onnx2ncnn", make(seed=2), image(seed=2), opset=11, dynamo=False, **IO)
    yield Case("seed3-onnx2ncnn", make(seed=3), image(seed=3), opset=11, dynamo=False, **IO)
    yield Case("seed4-onnx2ncnn", make(seed=4), image(seed=4), opset=11, dynamo=False, **IO)
    yield Case("wide-seed2-onnx2ncnn", make(WIDE, seed=2), image(seed=2), opset=11, dynamo=False, **IO)
    yield Case("wide-pnnx", make(WIDE), image(), opset=11, dynamo=False, torchscript=True, **IO)
    yield Case("deep-pnnx", make(DEEP), image(), opset=11, dynamo=False, torchscript=True, **IO)

"""KB229: on ncnn's ARM CPU path with fp16 arithmetic (ARMv8.2: asimdhp, where ncnn turns it on by default), a
plain CNN's outputs drift from torch's by about one to two percent: no overflow, no NaN, only fp16's rounding inside
each convolution, compounded layer after layer. The same .param/.bin on ARMv8.0, or with use_fp16_arithmetic off,
is within fp16 storage's rounding (a few 1e-4).

The model: a small image regressor of the usual kind, 3x3 Conv + BatchNorm + ReLU blocks (three of stride 2), a
global average pool and a Linear head of 4 values (logits or box offsets, about -0.6 to 0.6). The BatchNorm
statistics are those of the training-mode passes over normal images, as a trained model's would be, so every
activation is of order 1: nothing comes near fp16's range."""

import torch
from torch import nn

from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])
NARROW = (16, 32, 32, 64, 64, 128, 128, 128)
WIDE = (32, 64, 64, 128, 128, 256, 256, 256)
DEEP = (16, 32, 32, 32, 64, 64, 64, 128, 128, 128, 128, 128)


class Net(nn.Module):
    """Conv3x3 + BatchNorm + ReLU blocks of the given widths (the 2nd, 4th and 6th of stride 2), a global average
    pool and nn.Linear(width, 4)."""

    def __init__(self, widths=NARROW, outputs=4):
        super().__init__()
        layers, cin = [], 3
        for i, w in enumerate(widths):
            layers += [nn.Conv2d(cin, w, 3, 2 if i in (1, 3, 5) else 1, 1, bias=False),
                       nn.BatchNorm2d(w, momentum=None), nn.ReLU()]
            cin = w
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(cin, outputs)

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


def make(widths=NARROW, seed=0):
    """The net with torch's default initialisation, BatchNorm scales in [0.5, 1.5] and shifts N(0, 0.2), and running
    statistics from four training-mode passes over batches of two 64x64 normal images (momentum None: their mean),
    the same on every CPU."""
    torch.manual_seed(seed)
    net = Net(widths)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.2)
        # in float64, then rounded: float32 passes differ in the last bit from one x86 CPU to another (AVX2 or
        # AVX-512 kernels), and a last bit of a weight moves the fp16 drift (0.00434 here, 0.00176 on CI's CPU)
        net.double().train()
        for _ in range(4):
            net(torch.randn(2, 3, 64, 64, dtype=torch.float64))
    return net.float().eval()


def image(seed=1):
    """A normalised 64x64 RGB input: N(0, 1)."""
    torch.manual_seed(seed)
    return (torch.randn(1, 3, 64, 64),)


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

"""KB103: a Conv without the optional kernel_shape attribute (ONNX lets a reader take it from the weight's
shape). torch.onnx.export(dynamo=True) with onnxscript 0.7.1 and older wrote every Conv so; onnx2ncnn writes the
kernel size only from kernel_shape, so the ncnn Convolution gets no kernel size (0) and ncnn rejects the layer.

The onnxscript installed here (0.7.2) writes kernel_shape, so the reproducer gives the exporter the older torchlib's
conv translation (the same Conv attributes, without kernel_shape) through torch.onnx.export's
custom_translation_table.
"""

import torch
from onnxscript import opset18 as op
from torch import nn

from kb.export import Case


def conv_torchlib_071(input, weight, bias=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """aten::conv1d/conv2d as onnxscript 0.7.1's torchlib wrote it: strides, pads, dilations and group, no kernel_shape."""
    kw = dict(strides=list(stride), pads=list(padding) * 2, dilations=list(dilation), group=groups)
    return op.Conv(input, weight, **kw) if bias is None else op.Conv(input, weight, bias, **kw)


def deconv_torchlib_071(input, weight, bias=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0), groups=1,
                        dilation=(1, 1)):
    """aten::conv_transpose2d the same way: a ConvTranspose without kernel_shape."""
    kw = dict(strides=list(stride), pads=list(padding) * 2, dilations=list(dilation), group=groups,
              output_padding=list(output_padding))
    return op.ConvTranspose(input, weight, **kw) if bias is None else op.ConvTranspose(input, weight, bias, **kw)


OLD_TORCHLIB = {"external_data": False, "custom_translation_table": {  # inline weights: not KB's external-data entry
    torch.ops.aten.conv1d.default: conv_torchlib_071,
    torch.ops.aten.conv2d.default: conv_torchlib_071,
    torch.ops.aten.conv_transpose2d.input: deconv_torchlib_071}}
NEW_TORCHLIB = {"external_data": False}  # onnxscript 0.7.2's own translation: kernel_shape written
IO = dict(input_names=["in0"], output_names=["out0"])


class ConvBlock(nn.Module):
    """Conv2d 3x3, then ReLU: the first layer of most CNNs."""

    def __init__(self, cin=3, cout=8, k=3, groups=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, groups=groups)

    def forward(self, x):
        return torch.relu(self.conv(x))


class SmallCNN(nn.Module):
    """conv-bn-relu, max pool, a strided conv and a 1x1 head."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(16, 4, 1))

    def forward(self, x):
        return self.body(x)


class Conv1dBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 5, padding=2)

    def forward(self, x):
        return torch.relu(self.conv(x))


class Upsample(nn.Module):
    """A ConvTranspose2d that doubles the resolution."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)

    def forward(self, x):
        return self.up(x)


class MaxPoolOnly(nn.Module):
    """Near miss: no convolution at all."""

    def forward(self, x):
        return torch.max_pool2d(x, 2) * 2


def image(seed=1, shape=(1, 3, 16, 16)):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def model(cls=ConvBlock, seed=0, **kw):
    torch.manual_seed(seed)
    m = cls(**kw)
    for mod in m.modules():  # non-trivial running statistics for the BatchNorm
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
    return m


def cases():
    x = image()
    yield Case("conv-old-torchlib", model(), (x,), opset=18, dynamo=True, export_kwargs=OLD_TORCHLIB, **IO)
    # Workarounds, the same module and input: the exporter of onnxscript 0.7.2, and the TorchScript exporter.
    yield Case("conv-new-torchlib", model(), (x,), opset=18, dynamo=True, export_kwargs=NEW_TORCHLIB,
               trigger=False, rewrites="conv-old-torchlib", **IO)
    yield Case("conv-torchscript", model(), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="conv-old-torchlib", **IO)
    # Control on the same export path: the old torchlib, and no Conv in the model.
    yield Case("maxpool-old-torchlib", MaxPoolOnly(), (x,), opset=18, dynamo=True, export_kwargs=OLD_TORCHLIB,
               trigger=False, **IO)


def variants():
    x = image(2)
    yield Case("opset18", model(seed=3), (x,), opset=18, dynamo=True, export_kwargs=OLD_TORCHLIB, **IO)
    yield Case("opset17", model(seed=3), (x,), opset=17, dynamo=True, export_kwargs=OLD_TORCHLIB, **IO)
    yield Case("opset20", model(seed=3), (x,), opset=20, dynamo=True, export_kwargs=OLD_TORCHLIB, **IO)
    yield Case("onnxsim", model(seed=3), (x,), opset=18, dynamo=True, export_kwargs=OLD_TORCHLIB, simplify=True,
               **IO)
    yield Case("conv-1x1", model(seed=3, k=1), (x,), opset=18, dynamo=True, export_kwargs=OLD_TORCHLIB, **IO)
    yield Case("depthwise", model(seed=3, cin=3, cout=6, groups=3), (x,), opset=18, dynamo=True,
               export_kwargs=OLD_TORCHLIB, **IO)
    yield Case("small-cnn", model(SmallCNN, seed=3), (x,), opset=18, dynamo=True, export_kwargs=OLD_TORCHLIB, **IO)
    yield Case("conv1d", model(Conv1dBlock, seed=3), (image(2, (1, 4, 20)),), opset=18, dynamo=True,
               export_kwargs=OLD_TORCHLIB, **IO)
    yield Case("conv-transpose", model(Upsample, seed=3), (image(2, (1, 8, 8, 8)),), opset=18, dynamo=True,
               export_kwargs=OLD_TORCHLIB, **IO)
    # Near misses: the same convolutions with kernel_shape written (onnxscript 0.7.2, the TorchScript exporter).
    yield Case("new-torchlib-near-miss", model(SmallCNN, seed=3), (x,), opset=18, dynamo=True,
               export_kwargs=NEW_TORCHLIB, **IO)
    yield Case("torchscript-near-miss", model(SmallCNN, seed=3), (x,), opset=17, dynamo=False, **IO)

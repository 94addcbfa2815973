"""KB180: onnx2ncnn writes every 1-D Conv as ncnn's Convolution1D, with the group as 7=<groups>; Convolution1D
reads no group, so a grouped or depthwise Conv1d reads a full (out, in, k) weight out of the smaller grouped
blob: the output is wrong and changes from run to run (Tencent/ncnn#5135)."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"])
INLINE = {"external_data": False}  # dynamo exports: weights inside the .onnx (not ncnn-onnx2ncnn-external-data)


class Conv1dBlock(nn.Module):
    """One Conv1d, as in the thread (80 channels, groups 80, kernel 11, padding 5); `pointwise` adds the 1x1
    Conv1d of a depthwise-separable block (TCN, ConvNeXt-1D, Conformer convolution module)."""

    def __init__(self, c=80, k=11, groups=80, pointwise=False, dims=1):
        super().__init__()
        conv = nn.Conv1d if dims == 1 else nn.Conv2d
        self.conv = conv(c, c, k, padding=k // 2, groups=groups)
        self.pw = nn.Conv1d(c, c, 1) if pointwise else None

    def forward(self, x):
        y = self.conv(x)
        return self.pw(torch.relu(y)) if self.pw is not None else y


def ones(*shape):
    return (torch.ones(*shape),)  # the thread's all-ones input


def cases():
    yield Case("dw-conv1d", seeded(Conv1dBlock), ones(1, 80, 64), opset=13, dynamo=False, torchscript=True,
               ways=["opset11", "opset15", "opset17", "opset18", "dynamo", "opset13-onnxsim", "opset17-onnxsim"],
               **IO)
    yield Case("conv1d-ungrouped", seeded(Conv1dBlock, groups=1), ones(1, 80, 64), opset=13, dynamo=False,
               trigger=False, **IO)


def variants():
    yield Case("groups2", seeded(Conv1dBlock, c=16, k=3, groups=2, seed=2), ones(1, 16, 32), opset=13, dynamo=False,
               **IO)
    yield Case("groups16-of-32", seeded(Conv1dBlock, c=32, k=5, groups=16, seed=2), ones(1, 32, 32), opset=13,
               dynamo=False, **IO)
    yield Case("dw-separable", seeded(Conv1dBlock, c=32, k=7, groups=32, pointwise=True, seed=2), ones(1, 32, 48),
               opset=13, dynamo=False, **IO)
    # Near misses: an ungrouped Conv1d (Convolution1D is right for it), and a depthwise Conv2d (written as
    # ConvolutionDepthWise with 7=groups, which reads it).
    yield Case("ungrouped-near-miss", seeded(Conv1dBlock, c=16, k=3, groups=1, seed=2), ones(1, 16, 32), opset=13,
               dynamo=False, **IO)
    yield Case("dw-conv2d-near-miss", seeded(Conv1dBlock, c=16, k=3, groups=16, dims=2, seed=2),
               ones(1, 16, 12, 12), opset=13, dynamo=False, **IO)

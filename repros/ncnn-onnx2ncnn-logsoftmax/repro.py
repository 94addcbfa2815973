"""known-bug: Tencent/ncnn#1763 -- onnx2ncnn has no rule for LogSoftmax (F.log_softmax): it prints
"LogSoftmax not supported yet!" and writes the op through, and ncnn cannot load the .param."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

C_IN, C = 4, 6


class ConvLogSoftmax(nn.Module):
    """A segmentation-style head: 1x1 conv to class scores, log_softmax over the class axis."""

    def __init__(self, how="log_softmax"):
        super().__init__()
        self.conv = nn.Conv2d(C_IN, C, 1)
        self.how = how

    def forward(self, x):
        y = self.conv(x)
        if self.how == "log_softmax":
            return F.log_softmax(y, dim=1)
        if self.how == "module":
            return nn.LogSoftmax(dim=1)(y)
        if self.how == "log-of-softmax":  # the workaround: two ops
            return torch.log(F.softmax(y, dim=1))
        if self.how == "softmax":
            return F.softmax(y, dim=1)
        if self.how == "log-sigmoid":
            return torch.log(torch.sigmoid(y))
        raise ValueError(self.how)


def rewritten(block: ConvLogSoftmax, how: str) -> ConvLogSoftmax:
    new = ConvLogSoftmax(how)
    new.load_state_dict(block.state_dict())
    return new


class CTCHead(nn.Module):
    """A CRNN's CTC output: (batch, time, classes) scores, log_softmax over the last axis (axis 2)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(C_IN, C)

    def forward(self, x):
        t = x.flatten(2).transpose(1, 2)  # N, T, C_IN
        return F.log_softmax(self.fc(t), dim=2)


class Classifier(nn.Module):
    """An image classifier trained with NLLLoss: pool, Linear, log_softmax."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C_IN, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        return F.log_softmax(self.fc(torch.relu(self.conv(x)).mean((2, 3))), dim=1)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    block = seeded(ConvLogSoftmax)
    x = randn(1, C_IN, 5, 5)
    yield Case("log-softmax", block, (x,), opset=13, dynamo=False, torchscript=True, **IO)
    yield Case("log-of-softmax", rewritten(block, "log-of-softmax"), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="log-softmax", **IO)


def variants():
    x = randn(1, C_IN, 5, 5)
    yield Case("log-softmax-opset13", seeded(ConvLogSoftmax), (x,), opset=13, dynamo=False, **IO)
    yield Case("log-softmax-opset17", seeded(ConvLogSoftmax), (x,), opset=17, dynamo=False, **IO)
    yield Case("log-softmax-opset18", seeded(ConvLogSoftmax), (x,), opset=18, dynamo=False, **IO)
    yield Case("log-softmax-dynamo", seeded(ConvLogSoftmax), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO)  # inline weights: not ncnn-onnx2ncnn-external-data
    yield Case("log-softmax-onnxsim", seeded(ConvLogSoftmax), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("logsoftmax-module", seeded(ConvLogSoftmax, "module"), (x,), opset=13, dynamo=False, **IO)
    yield Case("crnn-ctc-head", seeded(CTCHead), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("nll-classifier", seeded(Classifier), (x,), opset=13, dynamo=False, **IO)
    # Near misses: softmax alone, log of softmax as two ops, log of sigmoid.
    yield Case("softmax-near-miss", seeded(ConvLogSoftmax, "softmax"), (x,), opset=13, dynamo=False, **IO)
    yield Case("log-of-softmax-near-miss", seeded(ConvLogSoftmax, "log-of-softmax"), (x,), opset=13, dynamo=False,
               **IO)
    yield Case("log-sigmoid-near-miss", seeded(ConvLogSoftmax, "log-sigmoid"), (x,), opset=13, dynamo=False, **IO)

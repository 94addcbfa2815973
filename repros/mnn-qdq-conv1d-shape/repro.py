"""KB015: onnxruntime QDQ models (quantize_static, QuantFormat.QDQ) with a Conv1d, converted with MNN.

Each case is quantized at export time (Case.quantize), so its ONNX file is the QDQ model users convert.
"""

import torch
from torch import nn

from kb.export import Case

QDQ = {"method": "static", "fmt": "QDQ"}
C, L = 4, 32


class Temporal(nn.Module):
    """Conv1d layers over (N, C, L), with ReLU in between."""

    def __init__(self, layers=1, k=3, stride=1, pre=None, dims=1):
        super().__init__()
        conv = nn.Conv1d if dims == 1 else nn.Conv2d
        self.convs = nn.ModuleList(conv(C if i == 0 else 8, 8, k, stride=stride, padding=k // 2)
                                   for i in range(layers))
        self.pre = pre

    def forward(self, x):
        if self.pre == "relu":
            x = torch.relu(x)
        elif self.pre == "linear":  # a projection from features to channels, as in audio models
            x = x * 0.5 + 0.1
        for i, conv in enumerate(self.convs):
            x = conv(x)
            if i < len(self.convs) - 1:
                x = torch.relu(x)
        return x


def seq(*shape):
    torch.manual_seed(0)
    return torch.randn(*(shape or (1, C, L)))


def cases():
    torch.manual_seed(0)
    net = Temporal()
    yield Case("conv1d", net, (seq(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    # The workaround's float model: the same module and input, not quantized by onnxruntime.
    yield Case("conv1d-float", net, (seq(),), ["x"], ["y"], opset=13, dynamo=False, trigger=False, rewrites="conv1d")


def variants():
    torch.manual_seed(0)
    yield Case("two-conv1d", Temporal(layers=2), (seq(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("conv1d-k1", Temporal(k=1), (seq(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("conv1d-stride2", Temporal(stride=2), (seq(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("conv1d-batch2", Temporal(), (seq(2, C, L),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("conv1d-after-relu", Temporal(pre="relu"), (seq(),), ["x"], ["y"], opset=13, dynamo=False,
               quantize=QDQ)
    yield Case("conv1d-per-channel", Temporal(), (seq(),), ["x"], ["y"], opset=13, dynamo=False,
               quantize={**QDQ, "per_channel": True})
    yield Case("conv1d-opset17", Temporal(), (seq(),), ["x"], ["y"], opset=17, dynamo=False, quantize=QDQ)
    yield Case("conv1d-dynamo", Temporal(), (seq(),), ["x"], ["y"], opset=18, dynamo=True, quantize=QDQ)
    yield Case("conv1d-onnxsim", Temporal(), (seq(),), ["x"], ["y"], opset=13, dynamo=False, simplify=True,
               quantize=QDQ)
    # near misses
    yield Case("conv1d-float-near-miss", Temporal(), (seq(),), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("conv2d-qdq", Temporal(dims=2), (seq(1, C, 8, 8),), ["x"], ["y"], opset=13, dynamo=False,
               quantize=QDQ)
    yield Case("conv2d-qdq-after-relu", Temporal(dims=2, pre="relu"), (seq(1, C, 8, 8),), ["x"], ["y"], opset=13,
               dynamo=False, quantize=QDQ)

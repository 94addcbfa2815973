"""known-bug: alibaba/MNN#3239 -- onnxruntime QDQ models get their NCHW input permuted to (C, N, H, W) by MNN.

The float model is exported here; the checks quantize it with onnxruntime.quantization, as users do.
"""

import torch
from torch import nn

from kb.export import Case


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x))


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 32, 32)
    # The float model has no Q/DQ nodes yet: the trigger appears once onnxruntime quantizes it.
    net = Net()
    yield Case("float-conv", net, (x,), ["input"], ["output"], opset=13, dynamo=False, trigger=False)
    # Batch 3 == 3 channels: the permuted shape is valid, so nothing fails loudly.
    # The workaround: the same float model, quantized by MNN instead of onnxruntime (judged against float-conv).
    yield Case("float-conv-w8", net, (x,), ["input"], ["output"], opset=13, dynamo=False, trigger=False,
               rewrites="float-conv")
    yield Case("float-conv-batch3", net, (torch.randn(3, 3, 32, 32),), ["input"], ["output"], opset=13,
               dynamo=False, trigger=False)


class Deeper(nn.Module):
    """Shapes real quantized CNNs have: a pool before the first conv, two convs, a 1x1 head."""

    def __init__(self, pool=False, convs=1):
        super().__init__()
        self.pool = nn.MaxPool2d(2) if pool else nn.Identity()
        layers = [nn.Conv2d(3, 16, 3, padding=1), nn.ReLU()]
        for _ in range(convs - 1):
            layers += [nn.Conv2d(16, 16, 3, padding=1), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(self.pool(x))


class MLP(nn.Module):
    """The near miss: no convolution at all."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 16)

    def forward(self, x):
        return torch.relu(self.fc(x))


def variants():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 32, 32)
    static = {"method": "static", "fmt": "QDQ"}
    io = dict(input_names=["input"], output_names=["output"], dynamo=False)
    yield Case("v-qdq", Net(), (x,), opset=13, quantize=static, **io)
    yield Case("v-qdq-per-channel", Net(), (x,), opset=13, quantize={**static, "per_channel": True}, **io)
    yield Case("v-qdq-opset17", Net(), (x,), opset=17, quantize=static, **io)
    yield Case("v-qdq-two-convs", Deeper(convs=2), (x,), opset=13, quantize=static, **io)
    yield Case("v-qdq-pool-first", Deeper(pool=True), (x,), opset=13, quantize=static, **io)
    yield Case("v-qdq-batch2", Net(), (torch.randn(2, 3, 32, 32),), opset=13, quantize=static, **io)
    yield Case("v-qoperator", Net(), (x,), opset=13, quantize={"method": "static", "fmt": "QOperator"}, **io)
    yield Case("v-dynamic", Net(), (x,), opset=13, quantize={"method": "dynamic", "fmt": "QOperator"}, **io)
    yield Case("v-qdq-mlp", MLP(), (torch.randn(1, 32),), opset=13, quantize=static, **io)
    yield Case("v-float", Net(), (x,), opset=13, **io)

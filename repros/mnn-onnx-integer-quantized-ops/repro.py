"""KB030: ONNX models quantized by onnxruntime in the QOperator format (QLinearConv, QGemm, ...) or
by quantize_dynamic on a conv net (ConvInteger) cannot be converted by MNN.

The float models are exported here; `quantize=` has onnxruntime quantize each export, as users do
(kb.workers.onnxruntime.quantize: quantize_static calibrated on the case's input and three seeded
random batches, or quantize_dynamic).
"""

import torch
from torch import nn

from kb.export import Case

DYNAMIC = {"method": "dynamic", "fmt": "QOperator"}  # quantize_dynamic: ConvInteger, MatMulInteger
DYNAMIC_7BIT = {**DYNAMIC, "reduce_range": True}  # what onnxruntime advises for CPUs without VNNI
QOPERATOR = {"method": "static", "fmt": "QOperator"}  # quantize_static(quant_format=QuantFormat.QOperator)
QDQ = {"method": "static", "fmt": "QDQ"}  # quantize_static's default format


class ResNetish(nn.Module):
    """A small classifier as real ones are built: conv-bn-relu, a residual block, global pooling, a Linear head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.conv = nn.Conv2d(16, 16, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        y = torch.relu(self.bn(self.stem(x)))
        y = torch.relu(self.conv(y) + y)
        return self.fc(torch.flatten(self.pool(y), 1))


class MLP(nn.Module):
    """Two Linear layers: on a (N, T, C) input they export as MatMul + Add, on (N, C) as Gemm."""

    def __init__(self, bias=True):
        super().__init__()
        self.a = nn.Linear(32, 64, bias=bias)
        self.b = nn.Linear(64, 16, bias=bias)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class YoloishBlock(nn.Module):
    """Detector-style ops: SiLU (Sigmoid * x), LeakyReLU, average pooling, a Concat and a Softmax."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 8, 1)
        self.pool = nn.AvgPool2d(2)

    def forward(self, x):
        y = self.a(x)
        y = y * torch.sigmoid(y)
        z = nn.functional.leaky_relu(self.b(y), 0.1)
        return torch.softmax(self.pool(torch.cat([y, z], 1)), dim=1)


def image():
    torch.manual_seed(0)
    return torch.randn(1, 3, 32, 32)


def cases():
    x = image()
    torch.manual_seed(0)
    net = ResNetish()
    io = dict(input_names=["input"], output_names=["output"], opset=13, dynamo=False)
    yield Case("cnn-dynamic", net, (x,), quantize=DYNAMIC, **io)
    yield Case("cnn-qoperator", net, (x,), quantize=QOPERATOR, **io)
    # The float model, for the workarounds: MNN quantizes it itself. The same net and input, so its torch
    # output is the original's.
    yield Case("cnn-float", net, (x,), trigger=False, rewrites="cnn-dynamic", **io)


def variants():
    x = image()
    torch.manual_seed(0)
    net, mlp, mlp_nobias, yolo = ResNetish(), MLP(), MLP(bias=False), YoloishBlock()
    tokens = torch.randn(1, 8, 32)
    io = dict(input_names=["input"], output_names=["output"])
    # quantize_dynamic of a conv net: ConvInteger (and MatMulInteger for the head)
    yield Case("v-dynamic-cnn-opset17", net, (x,), opset=17, dynamo=False, quantize=DYNAMIC, **io)
    yield Case("v-dynamic-cnn-dynamo", net, (x,), opset=18, dynamo=True, quantize=DYNAMIC, **io)
    yield Case("v-dynamic-conv-only", net, (x,), opset=13, dynamo=False,
               quantize={**DYNAMIC, "op_types_to_quantize": ["Conv"]}, **io)
    # QOperator: QLinearConv, QLinearAdd, QLinearGlobalAveragePool, QGemm
    yield Case("v-qop-cnn-per-channel", net, (x,), opset=13, dynamo=False, quantize={**QOPERATOR, "per_channel": True},
               **io)
    yield Case("v-qop-cnn-opset17", net, (x,), opset=17, dynamo=False, quantize=QOPERATOR, **io)
    yield Case("v-qop-cnn-dynamo", net, (x,), opset=18, dynamo=True, quantize=QOPERATOR, **io)
    yield Case("v-qop-gemm-head", net, (x,), opset=13, dynamo=False,
               quantize={**QOPERATOR, "op_types_to_quantize": ["Gemm"]}, **io)
    yield Case("v-qop-mlp", mlp, (tokens,), opset=13, dynamo=False, quantize=QOPERATOR, **io)
    yield Case("v-qop-matmul-no-bias", mlp_nobias, (tokens,), opset=13, dynamo=False, quantize=QOPERATOR, **io)
    yield Case("v-qop-yoloish", yolo, (x,), opset=13, dynamo=False, quantize=QOPERATOR, **io)
    # near misses: quantize_dynamic without a Conv (MatMulInteger, DynamicQuantizeLinear), QDQ, float
    # 7-bit weights (onnxruntime's reduce_range): with 8, onnxruntime itself saturates on x86 CPUs without VNNI
    # (AVX2's u8s8 multiply-add): measured on an emulated Haswell, 7% of the range off the float model, MNN 0.4%.
    yield Case("v-dynamic-mlp", mlp, (tokens,), opset=13, dynamo=False, quantize=DYNAMIC_7BIT, **io)
    yield Case("v-dynamic-mlp-gemm", mlp, (torch.randn(1, 32),), opset=13, dynamo=False, quantize=DYNAMIC_7BIT, **io)
    yield Case("v-qdq-cnn", net, (x,), opset=13, dynamo=False, quantize=QDQ, **io)
    yield Case("v-qdq-mlp", mlp, (tokens,), opset=13, dynamo=False, quantize=QDQ, **io)
    yield Case("v-float-cnn", net, (x,), opset=13, dynamo=False, **io)

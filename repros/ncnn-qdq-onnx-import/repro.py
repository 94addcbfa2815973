"""known-bug: Tencent/ncnn#3684 -- an onnxruntime-quantized ONNX model cannot be converted to ncnn:
onnx2ncnn has no rule for QuantizeLinear / DequantizeLinear or the QLinear ops."""

import torch
from torch import nn

from kb.export import Case

C, H = 8, 8  # channels, height and width

QDQ = {"method": "static", "fmt": "QDQ"}


class ConvNet(nn.Module):
    """A small CNN: conv, ReLU, conv, ReLU, pooled Linear head (kind="linear": an MLP on a vector)."""

    def __init__(self, kind="conv"):
        super().__init__()
        self.kind = kind
        if kind == "conv":
            self.body = nn.Sequential(nn.Conv2d(3, C, 3, padding=1), nn.ReLU(), nn.Conv2d(C, C, 3, padding=1), nn.ReLU())
            self.head = nn.Linear(C, 4)
        else:
            self.body = nn.Sequential(nn.Linear(3 * H * H, 32), nn.ReLU())
            self.head = nn.Linear(32, 4)

    def forward(self, x):
        if self.kind == "conv":
            return self.head(self.body(x).mean((2, 3)))
        return self.head(self.body(x.reshape(1, -1)))


def net(kind="conv"):
    torch.manual_seed(0)
    return ConvNet(kind)


def cases():
    torch.manual_seed(0)
    x = torch.rand(1, 3, H, H)
    io = dict(input_names=["in0"], output_names=["out0"])
    yield Case("qdq", net(), (x,), opset=13, dynamo=False, quantize=QDQ, **io)
    # The float model the quantized one was made from: the same weights (net() seeds them) and the same input,
    # so its output is the original's torch output (the quantizer runs after the export).
    yield Case("float", net(), (x,), opset=13, dynamo=False, torchscript=True, trigger=False, rewrites="qdq",
               **io)
    # An MLP, quantized the same way: onnx2ncnn writes a .param for it (no conv weight to abort on), which
    # ncnn then has to load.
    yield Case("mlp-qdq", net("linear"), (x,), opset=13, dynamo=False, quantize=QDQ, **io)
    # The same CNN in onnxruntime's QOperator format (QLinearConv, com.microsoft QGemm): what pnnx's ONNX reader meets.
    yield Case("qoperator-cnn", net(), (x,), opset=13, dynamo=False, quantize={"method": "static", "fmt": "QOperator"}, **io)


def variant(name, module, opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    x = torch.rand(1, 3, H, H)
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    yield variant("qdq-opset13", net(), quantize=QDQ)
    yield variant("qdq-opset17", net(), opset=17, quantize=QDQ)
    yield variant("qdq-dynamo", net(), opset=18, dynamo=True, quantize=QDQ, export_kwargs={"external_data": False})
    yield variant("qdq-onnxsim", net(), simplify=True, quantize=QDQ)
    yield variant("qdq-per-channel", net(), quantize={**QDQ, "per_channel": True})
    yield variant("qdq-mlp", net("linear"), quantize=QDQ)
    yield variant("qoperator", net(), quantize={"method": "static", "fmt": "QOperator"})
    yield variant("dynamic-mlp", net("linear"), quantize={"method": "dynamic"})
    yield variant("float-near-miss", net())
    yield variant("float-mlp-near-miss", net("linear"))

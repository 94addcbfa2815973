"""KB014: onnxruntime QDQ models (quantize_static, QuantFormat.QDQ) whose Linear layers are quantized.

Each case is quantized at export time (Case.quantize), so its ONNX file is the QDQ model users convert.
"""

import torch
from torch import nn

from kb.export import Case

QDQ = {"method": "static", "fmt": "QDQ"}
F_IN, HID, OUT = 32, 16, 10


class Head(nn.Module):
    """A classifier head: Linear -> ReLU -> Linear."""

    def __init__(self, layers=2, bias=True):
        super().__init__()
        dims = [F_IN] + [HID] * (layers - 1) + [OUT]
        self.fc = nn.ModuleList(nn.Linear(a, b, bias=bias) for a, b in zip(dims, dims[1:]))

    def forward(self, x):
        for i, fc in enumerate(self.fc):
            x = fc(x)
            if i < len(self.fc) - 1:
                x = torch.relu(x)
        return x


class CNN(nn.Module):
    """A small CNN with a Linear head: conv, relu, global pool, flatten, linear."""

    def __init__(self, head=True):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = head
        self.fc = nn.Linear(8, OUT)

    def forward(self, x):
        x = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return self.fc(x) if self.head else x


def vec(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape) if shape else torch.randn(1, F_IN)


def cases():
    torch.manual_seed(0)
    head = Head()
    yield Case("linear-head", head, (vec(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    # The workaround's float model: the same module and input, not quantized by onnxruntime.
    yield Case("linear-head-float", head, (vec(),), ["x"], ["y"], opset=13, dynamo=False, trigger=False,
               rewrites="linear-head")


def variants():
    torch.manual_seed(0)
    img = vec(1, 3, 16, 16)
    yield Case("one-linear", Head(layers=1), (vec(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("three-linear", Head(layers=3), (vec(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("linear-no-bias", Head(bias=False), (vec(),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("linear-per-channel", Head(), (vec(),), ["x"], ["y"], opset=13, dynamo=False,
               quantize={**QDQ, "per_channel": True})
    yield Case("linear-opset17", Head(), (vec(),), ["x"], ["y"], opset=17, dynamo=False, quantize=QDQ)
    yield Case("linear-dynamo", Head(), (vec(),), ["x"], ["y"], opset=18, dynamo=True, quantize=QDQ)
    yield Case("linear-onnxsim", Head(), (vec(),), ["x"], ["y"], opset=13, dynamo=False, simplify=True, quantize=QDQ)
    yield Case("linear-3d-matmul", Head(), (vec(1, 4, F_IN),), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("cnn-linear-head", CNN(), (img,), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    # near misses: no quantized Gemm
    yield Case("cnn-no-head", CNN(head=False), (img,), ["x"], ["y"], opset=13, dynamo=False, quantize=QDQ)
    yield Case("cnn-conv-only-quantized", CNN(), (img,), ["x"], ["y"], opset=13, dynamo=False,
               quantize={**QDQ, "op_types_to_quantize": ["Conv"]})
    yield Case("linear-float", Head(), (vec(),), ["x"], ["y"], opset=13, dynamo=False)

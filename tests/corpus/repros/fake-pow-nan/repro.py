"""KB903 (fixture): an exported sqrt(x - 10) is NaN for most inputs where torch's module is finite (the
export stands for a converter that drops an abs); the control takes abs in the graph too."""

import torch
from torch import nn

from kb.export import Case


class SqrtCentred(torch.autograd.Function):
    """torch computes sqrt(|x - 10|); the ONNX graph says Sqrt(Sub(x, 10))."""

    @staticmethod
    def forward(ctx, x):
        return (x - 10.0).abs().sqrt()

    @staticmethod
    def symbolic(g, x):
        ten = g.op("Constant", value_t=torch.tensor(10.0))
        return g.op("Sqrt", g.op("Sub", x, ten))


class Net(nn.Module):
    def __init__(self, safe: bool):
        super().__init__()
        self.safe = safe

    def forward(self, x):
        return (x - 10.0).abs().sqrt() if self.safe else SqrtCentred.apply(x)


def cases():
    x = torch.randn(1, 4, 5, 5, generator=torch.Generator().manual_seed(0))
    yield Case("sqrt", Net(False), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("sqrt-abs", Net(True), (x,), ["x"], ["y"], opset=13, dynamo=False, trigger=False)

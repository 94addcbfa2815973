"""KB903 (fixture): sqrt(x - 10) is NaN for most inputs; the control takes abs first."""

import torch
from torch import nn

from kb.export import Case


class Net(nn.Module):
    def __init__(self, safe: bool):
        super().__init__()
        self.safe = safe

    def forward(self, x):
        d = x - 10.0
        return torch.sqrt(d.abs() if self.safe else d)


def cases():
    x = torch.randn(1, 4, 5, 5, generator=torch.Generator().manual_seed(0))
    yield Case("sqrt", Net(False), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("sqrt-abs", Net(True), (x,), ["x"], ["y"], opset=13, dynamo=False, trigger=False)

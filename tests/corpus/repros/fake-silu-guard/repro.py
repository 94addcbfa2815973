"""KB902 (fixture): SiLU as Sigmoid -> Mul."""

import torch
from torch import nn

from kb.export import Case


class Net(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


def cases():
    x = torch.randn(1, 4, 5, 5, generator=torch.Generator().manual_seed(0))
    yield Case("silu", Net(), (x,), ["x"], ["y"], opset=13, dynamo=False)

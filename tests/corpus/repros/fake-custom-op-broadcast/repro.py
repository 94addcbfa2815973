"""KB901 (fixture): a custom op before InstanceNormalization."""

import torch
from torch import nn

from kb.export import Case


class Widget(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def symbolic(g, x):
        return g.op("fake::FakeWidget", x).setType(x.type())


class Net(nn.Module):
    def __init__(self, custom: bool):
        super().__init__()
        self.custom = custom
        self.norm = nn.InstanceNorm2d(4)

    def forward(self, x):
        return self.norm(Widget.apply(x) if self.custom else x * 2.0)


def cases():
    x = torch.randn(1, 4, 5, 5, generator=torch.Generator().manual_seed(0))
    yield Case("custom-op", Net(True), (x,), ["x"], ["y"], opset=13, dynamo=False,
               export_kwargs={"custom_opsets": {"fake": 1}})
    yield Case("standard-ops", Net(False), (x,), ["x"], ["y"], opset=13, dynamo=False, trigger=False,
               rewrites="custom-op")

"""known-bug: alibaba/MNN#3297 -- an op MNN does not know, followed by GroupNorm, breaks shape inference."""

import torch
from torch import nn

from kb.export import Case


class FeatureConversion(torch.autograd.Function):
    """Stands for a user's custom op: doubles the channels (128 -> 256); exported as one custom node."""

    @staticmethod
    def forward(ctx, x):
        return torch.cat([x, x * 2.0], 1)

    @staticmethod
    def symbolic(g, x):
        return g.op("custom::FeatureConversion", x)


class Net(nn.Module):
    def __init__(self, custom: bool):
        super().__init__()
        self.custom = custom
        self.conv = nn.Conv2d(3, 128, 3, padding=1)
        self.gn = nn.GroupNorm(32, 256)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        x = self.conv(x)
        x = FeatureConversion.apply(x) if self.custom else torch.cat([x, x * 2.0], 1)
        return self.gn(x)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 16, 16)
    # dynamo=False keeps GroupNorm as Reshape -> InstanceNormalization -> Reshape -> Mul -> Add.
    yield Case("custom-op", Net(custom=True), (x,), ["x"], ["y"], opset=13, dynamo=False,
               export_kwargs={"custom_opsets": {"custom": 1}})
    yield Case("standard-ops", Net(custom=False), (x,), ["x"], ["y"], opset=13, dynamo=False, trigger=False)

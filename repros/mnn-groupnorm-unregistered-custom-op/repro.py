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
    custom = Net(custom=True)
    yield Case("custom-op", custom, (x,), ["x"], ["y"], opset=13, dynamo=False,
               export_kwargs={"custom_opsets": {"custom": 1}})
    # The workaround: the same weights and input, the custom op written as torch.cat.
    standard = Net(custom=False)
    standard.load_state_dict(custom.state_dict())
    yield Case("standard-ops", standard, (x,), ["x"], ["y"], opset=13, dynamo=False, trigger=False,
               rewrites="custom-op")


class Variant(nn.Module):
    """The custom op where real models put it: with elementwise ops, or a conv, before the GroupNorm."""

    def __init__(self, between=(), norm=True, double=True):
        super().__init__()
        self.conv = nn.Conv2d(3, 128, 3, padding=1)
        self.between, self.norm, self.double = between, norm, double
        channels = 256 if double else 128
        self.mid = nn.Conv2d(channels, channels, 1)
        self.bn = nn.BatchNorm2d(channels).eval()
        self.gn = nn.GroupNorm(32, channels)

    def forward(self, x):
        x = self.conv(x)
        x = FeatureConversion.apply(x) if self.double else Same.apply(x)
        for op in self.between:
            x = {"relu": torch.relu, "mul": lambda t: t * 0.5, "silu": nn.functional.silu,
                 "conv": self.mid, "bn": self.bn}[op](x)
        return self.gn(x) if self.norm else x


class Same(torch.autograd.Function):
    """A custom op that keeps the shape: MNN's guess (output shape = input shape) is then right."""

    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def symbolic(g, x):
        return g.op("custom::Same", x)


def variants():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 16, 16)
    kw = dict(dynamo=False, export_kwargs={"custom_opsets": {"custom": 1}})
    for name, model, opset in [
        ("v-relu", Variant(["relu"]), 13),
        ("v-scalar-mul", Variant(["mul"]), 13),
        ("v-silu", Variant(["silu"]), 13),
        ("v-relu-mul", Variant(["relu", "mul"]), 13),
        ("v-opset17", Variant(), 17),
        ("v-conv-between", Variant(["conv"]), 13),
        ("v-shape-preserving-op", Variant(double=False), 13),
        ("v-no-groupnorm", Variant(norm=False), 13),
        ("v-batchnorm-conv", Variant(["bn", "relu", "conv"], norm=False), 13),
    ]:
        yield Case(name, model, (x,), ["x"], ["y"], opset=opset, **kw)

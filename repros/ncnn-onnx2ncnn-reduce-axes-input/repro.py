"""KB038: onnx2ncnn writes the axes input of a Reduce op (ReduceSum from opset 13, ReduceMean / ReduceMax / ...
from opset 18) as a second bottom blob of ncnn's one-input Reduction layer, and ncnn refuses to load it."""

import torch
from torch import nn

from kb.export import Case

C, H, W = 8, 6, 10


class Reduce(nn.Module):
    """One reduction: x.mean((2, 3)) is the global average pool of a classifier head."""

    def __init__(self, op="mean", dim=(2, 3), keepdim=False):
        super().__init__()
        self.op, self.dim, self.keepdim = op, dim, keepdim

    def forward(self, x):
        if self.op == "l2":
            return torch.linalg.vector_norm(x, 2, dim=self.dim, keepdim=self.keepdim)
        fn = {"mean": torch.mean, "sum": torch.sum, "max": torch.amax, "min": torch.amin}[self.op]
        return fn(x, dim=self.dim, keepdim=self.keepdim)


class SqueezeExcite(nn.Module):
    """MobileNetV3 / EfficientNet's squeeze-excite block: global mean, two 1x1 convs, a sigmoid gate."""

    def __init__(self, channels=C, hidden=4):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(channels, hidden, 1), nn.Conv2d(hidden, channels, 1)

    def forward(self, x):
        w = x.mean((2, 3), keepdim=True)
        return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(w))))


class PoolHead(nn.Module):
    """A CNN's end: conv, nn.AdaptiveAvgPool2d(1), flatten, Linear."""

    def __init__(self):
        super().__init__()
        self.conv, self.pool, self.fc = nn.Conv2d(C, C, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Linear(C, 5)

    def forward(self, x):
        return self.fc(self.pool(torch.relu(self.conv(x))).flatten(1))


class SumBetweenConvs(nn.Module):
    """conv, x.sum(1, keepdim=True), conv: a channel sum between two weighted layers (Tencent/ncnn#3101's sum)."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(C, 4, 1), nn.Conv2d(1, 3, 1)

    def forward(self, x):
        return self.c2(self.c1(x).sum(1, keepdim=True))


class ConvsThenSum(nn.Module):
    """Four 3x3 convs (8-32-32-64-64), x.sum(1, keepdim=True), a 1x1 conv: Tencent/ncnn#3101's shape, a conv stack
    and a channel sum, with about 70k weights after the axes constant."""

    def __init__(self, widths=(C, 32, 32, 64, 64)):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3, padding=1) for a, b in zip(widths[:-1], widths[1:]))
        self.out = nn.Conv2d(1, 4, 1)

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x))
        return self.out(x.sum(1, keepdim=True))


def case(name, module, opset=18, dynamo=False, **kw):
    torch.manual_seed(0)
    x = torch.randn(1, C, H, W)
    if dynamo:  # one self-contained .onnx file
        kw.setdefault("export_kwargs", {"external_data": False})
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def se_block():
    torch.manual_seed(0)
    return SqueezeExcite()


def pool_head():
    torch.manual_seed(0)
    return PoolHead()


def cases():
    se = se_block()
    # torch 2.13's default export: dynamo=True at opset 18.
    yield case("se-block-dynamo", se, dynamo=True, torchscript=True)
    yield case("mean-spatial-opset18", Reduce("mean"))
    yield case("sum-opset13", Reduce("sum"), opset=13)  # ReduceSum takes its axes as an input from opset 13
    torch.manual_seed(0)
    yield case("sum-channel-opset13", SumBetweenConvs(), opset=13)
    torch.manual_seed(0)
    yield case("convs-sum-opset13", ConvsThenSum(), opset=13)
    # The workaround: the same block (same weights), fed the same input, exported at opset 17 by the TorchScript
    # exporter, where ReduceMean's axes are an attribute.
    yield case("se-block-opset17", se, opset=17, trigger=False, rewrites="se-block-dynamo")
    # A control on the same path: nn.AdaptiveAvgPool2d(1) exported by the TorchScript exporter is a
    # GlobalAveragePool, not a ReduceMean, at opset 18 too.
    yield case("pool-head-opset18", pool_head(), trigger=False)


def variants():
    yield case("mean-keepdim", Reduce("mean", keepdim=True))
    yield case("mean-no-keepdim", Reduce("mean"))
    yield case("mean-channel", Reduce("mean", dim=1, keepdim=True))
    yield case("mean-dynamo", Reduce("mean"), dynamo=True)
    yield case("mean-onnxsim", Reduce("mean"), simplify=True)
    yield case("sum-opset18", Reduce("sum"))
    yield case("sum-opset17", Reduce("sum", keepdim=True), opset=17)
    yield case("max-opset18", Reduce("max"))
    yield case("max-keepdim-dynamo", Reduce("max", keepdim=True), dynamo=True)
    yield case("min-opset18", Reduce("min", keepdim=True))
    yield case("l2-channel-opset18", Reduce("l2", dim=1, keepdim=True))  # ReduceL2, as in F.normalize
    yield case("se-opset18", se_block())
    yield case("pool-head-dynamo", pool_head(), dynamo=True)  # dynamo writes AdaptiveAvgPool2d(1) as a ReduceMean
    # Near misses: the axes are an attribute (opset 13 to 17, all but ReduceSum), or there is no Reduce op.
    yield case("mean-opset17", Reduce("mean"), opset=17)
    yield case("mean-keepdim-opset13", Reduce("mean", keepdim=True), opset=13)
    yield case("max-opset17", Reduce("max"), opset=17)
    yield case("se-opset17", se_block(), opset=17)
    yield case("pool-head-adaptive-opset18", pool_head())

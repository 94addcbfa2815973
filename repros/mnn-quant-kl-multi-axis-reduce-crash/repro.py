"""KB033: mnnquant KL crashes (SIGSEGV) on a Reduce over several axes or a channels-first LayerNorm.

The usual source is global average pooling: torch 2.13's default exporter (dynamo=True) writes
`adaptive_avg_pool2d(x, 1)` as ReduceMean over axes [-1, -2], and `x.mean((2, 3))` is a ReduceMean
over two axes with either exporter. The classic exporter (dynamo=False) writes the same pooling as
GlobalAveragePool, which KL quantizes fine. ConvNeXt's written-out channels-first LayerNorm, which
mnnconvert fuses into a LayerNorm over axis 1, crashes the same way.
"""

import torch
from torch import nn
from torch.nn import functional as F

from kb.export import Case

C, K = 16, 10  # channels, classes


def pool(z, how):
    if how == "adaptive":  # torchvision ResNet / MobileNetV2 / EfficientNet heads
        return F.adaptive_avg_pool2d(z, 1).flatten(1)
    if how == "mean":  # ShuffleNetV2's head, and many hand-written ones
        return z.mean((2, 3))
    if how == "amax":  # global max pooling
        return z.amax((2, 3))
    if how == "sum":
        return z.sum((2, 3))
    if how == "amin":
        return z.amin((2, 3))
    if how == "l2":  # ReduceL2
        return torch.linalg.vector_norm(z, dim=(2, 3))
    if how == "logsumexp":  # ReduceLogSumExp
        return torch.logsumexp(z, dim=(2, 3))
    if how == "chained":  # the workaround: one axis at a time
        return z.mean(3).mean(2)
    if how == "avgpool":  # the workaround: a pooling op with the whole feature map as kernel
        return F.avg_pool2d(z, 8).flatten(1)
    raise ValueError(how)


class Classifier(nn.Module):
    """A small CNN classifier: conv stem, a strided conv, a global pooling head, a linear layer."""

    def __init__(self, head="adaptive", se=False, scale=None):
        super().__init__()
        self.head, self.se, self.scale = head, se, scale
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.down = nn.Conv2d(C, C, 3, stride=2, padding=1)
        if se:  # squeeze-and-excitation, as in MobileNetV3 / EfficientNet
            self.squeeze, self.excite = nn.Conv2d(C, 4, 1), nn.Conv2d(4, C, 1)
        self.fc = nn.Linear(C, K)

    def forward(self, x):
        z = torch.relu(self.down(torch.relu(self.stem(x))))
        if self.se:
            z = z * torch.sigmoid(self.excite(torch.relu(self.squeeze(F.adaptive_avg_pool2d(z, 1)))))
        if self.scale == "global":  # divided by the mean of the whole tensor: ReduceMean with no axes
            z = z / (1 + z.mean())
        if self.scale == "channel":  # gated by the mean over channels: ReduceMean over axis 1 only
            z = z * torch.sigmoid(z.mean(1, keepdim=True))
        return self.fc(pool(z, self.head))


class ChannelsFirstLayerNorm(nn.Module):
    """ConvNeXt's LayerNorm for NCHW tensors (facebookresearch/ConvNeXt): mean and variance over the
    channel axis, written out; MNN's converter fuses it into one LayerNorm op over axis 1."""

    def __init__(self, c):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.ones(c)), nn.Parameter(torch.zeros(c))

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + 1e-6)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class LayerNorm2d(nn.LayerNorm):
    """timm's LayerNorm2d: the same normalization, as nn.LayerNorm over the last axis between two permutes."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtish(nn.Module):
    """A ConvNeXt stage: channels-first LayerNorm in the stem, a block with a channels-last LayerNorm
    and an MLP; with `head`, ConvNeXt's classifier: mean over H and W, LayerNorm, Linear."""

    def __init__(self, head=True, norm2d=ChannelsFirstLayerNorm):
        super().__init__()
        self.head = head
        self.stem, self.stem_norm = nn.Conv2d(3, C, 4, stride=4), norm2d(C)
        self.dw = nn.Conv2d(C, C, 7, padding=3, groups=C)
        self.norm = nn.LayerNorm(C)
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))
        self.head_norm, self.fc = nn.LayerNorm(C), nn.Linear(C, K)

    def forward(self, x):
        x = self.stem_norm(self.stem(x))
        x = x + self.mlp(self.norm(self.dw(x).permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        if not self.head:
            return x
        return self.fc(self.head_norm(x.mean((-2, -1))))


class ChannelsFirstLayerNorm1d(nn.Module):
    """The channel-wise LayerNorm of 1-D convolutional audio models ("cLN"): over axis 1 of (N, C, T).
    `weight_first` multiplies by the weight before dividing, which changes the graph: (x - u) feeds a Mul,
    not the Div, and MNN's converter no longer fuses it into a LayerNorm."""

    def __init__(self, c, weight_first=False):
        super().__init__()
        self.weight_first = weight_first
        self.weight, self.bias = nn.Parameter(torch.ones(c, 1)), nn.Parameter(torch.zeros(c, 1))

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        if self.weight_first:
            return self.weight * (x - u) / torch.sqrt(s + 1e-6) + self.bias
        return self.weight * ((x - u) / torch.sqrt(s + 1e-6)) + self.bias


class Conv1dNet(nn.Module):
    def __init__(self, weight_first=False):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv1d(3, C, 3, padding=1), nn.Conv1d(C, C, 1)
        self.norm = ChannelsFirstLayerNorm1d(C, weight_first)

    def forward(self, x):
        return self.conv2(torch.relu(self.norm(self.conv1(x))))


def case(name, model, opset, dynamo, shape=(1, 3, 16, 16), **kw):
    torch.manual_seed(1)
    x = torch.randn(*shape)
    return Case(name, model, (x,), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    # The reported shape: a torchvision-style classifier exported with torch 2.13's default exporter.
    pool_net = Classifier("adaptive")
    yield case("pool-dyn18", pool_net, 18, True)
    # The workarounds' models: the same weights (the original's state_dict) and input, exported or written
    # so that no op reduces two axes. Each is judged against the original's torch output.
    yield case("pool-ts17", pool_net, 17, False, trigger=False, rewrites="pool-dyn18")
    for how in ("chained", "avgpool"):
        net = Classifier(how)
        net.load_state_dict(pool_net.state_dict())
        yield case(f"pool-{how}-dyn18", net, 18, True, trigger=False, rewrites="pool-dyn18")
    # The other shape: ConvNeXt's channels-first LayerNorm, which MNN fuses into a LayerNorm over axis 1.
    torch.manual_seed(0)
    backbone = ConvNeXtish(head=False)
    yield case("backbone-ts13", backbone, 13, False)
    permuted = ConvNeXtish(head=False, norm2d=LayerNorm2d)
    permuted.load_state_dict(backbone.state_dict())
    yield case("backbone-permute-ts13", permuted, 13, False, trigger=False, rewrites="backbone-ts13")


def variants():
    def seeded(cls, *a, **kw):
        torch.manual_seed(0)
        return cls(*a, **kw)

    yield case("adaptive-dyn18", seeded(Classifier, "adaptive"), 18, True)
    yield case("adaptive-dyn18-sim", seeded(Classifier, "adaptive"), 18, True, simplify=True)
    yield case("adaptive-ts13", seeded(Classifier, "adaptive"), 13, False)  # GlobalAveragePool
    yield case("adaptive-ts17", seeded(Classifier, "adaptive"), 17, False)  # GlobalAveragePool
    yield case("mean-ts13", seeded(Classifier, "mean"), 13, False)  # axes as an attribute
    yield case("mean-ts18", seeded(Classifier, "mean"), 18, False)  # axes as an input
    yield case("mean-ts13-sim", seeded(Classifier, "mean"), 13, False, simplify=True)
    yield case("amax-ts13", seeded(Classifier, "amax"), 13, False)  # ReduceMax
    yield case("sum-ts13", seeded(Classifier, "sum"), 13, False)  # ReduceSum: axes an input from opset 13
    yield case("amin-ts13", seeded(Classifier, "amin"), 13, False)
    yield case("l2-ts13", seeded(Classifier, "l2"), 13, False)
    yield case("logsumexp-ts13", seeded(Classifier, "logsumexp"), 13, False)
    yield case("global-scale-ts13", seeded(Classifier, "avgpool", scale="global"), 13, False)  # no axes: all
    yield case("channel-gate-ts13", seeded(Classifier, "avgpool", scale="channel"), 13, False)  # axis 1 only
    yield case("se-dyn18", seeded(Classifier, "avgpool", se=True), 18, True)  # ReduceMean keepdims=1 in the SE block
    yield case("se-ts13", seeded(Classifier, "avgpool", se=True), 13, False)  # GlobalAveragePool in the SE block
    yield case("convnext-ts17", seeded(ConvNeXtish), 17, False)  # LayerNormalization + mean over H, W
    yield case("convnext-dyn18", seeded(ConvNeXtish), 18, True)
    yield case("convnext-backbone-ts13", seeded(ConvNeXtish, head=False), 13, False)  # single-axis ReduceMeans only
    yield case("convnext-backbone-dyn18", seeded(ConvNeXtish, head=False), 18, True)
    yield case("convnext-backbone-ts13-sim", seeded(ConvNeXtish, head=False), 13, False, simplify=True)
    yield case("cln1d-ts13", seeded(Conv1dNet), 13, False, shape=(1, 3, 32))  # LayerNorm over axis 1 of (N, C, T)
    yield case("cln1d-weight-first-ts13", seeded(Conv1dNet, True), 13, False, shape=(1, 3, 32))  # not fused
    yield case("layernorm2d-ts13", seeded(ConvNeXtish, head=False, norm2d=LayerNorm2d), 13, False)  # last axis
    yield case("layernorm2d-dyn18", seeded(ConvNeXtish, head=False, norm2d=LayerNorm2d), 18, True)
    yield case("chained-dyn18", seeded(Classifier, "chained"), 18, True)  # two single-axis ReduceMeans

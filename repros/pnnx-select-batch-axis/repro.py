"""KB052: indexing a tensor along its batch axis (y[0], torch.select(y, 0, i), y.unbind(0)) after a layer that gives
it a batch axis. pnnx prints "... along batch axis 0 is not supported" and writes a layer ncnn cannot load."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case


class Head(nn.Module):
    """A conv (whose output has a batch axis in pnnx's graph), then an index along the batch axis."""

    def __init__(self, how):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.how = how

    def forward(self, x):
        y = self.conv(x)
        if self.how == "index":  # y[0]
            z = y[0]
        elif self.how == "select":
            z = torch.select(y, 0, 0)
        elif self.how == "unbind":
            z = y.unbind(0)[0]
        elif self.how == "squeeze":  # the workaround: the batch is 1, so y[0] == y.squeeze(0)
            z = y.squeeze(0)
        elif self.how == "slice":  # the workaround: keep the batch axis, y[0:1]
            z = y[0:1]
        elif self.how == "channel":  # near miss: select along axis 1
            z = y[:, 0]
        else:
            raise ValueError(self.how)
        return z * 2


class SegNet(nn.Module):
    """A small segmentation network that returns the per-pixel class probabilities of its first (only) image,
    out[0].softmax(0), as demo and export scripts often write."""

    def __init__(self, classes=5, squeeze=False):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, classes, 1)
        self.squeeze = squeeze

    def forward(self, x):
        out = self.head(self.body(x))
        out = out.squeeze(0) if self.squeeze else out[0]
        return out.softmax(0)


class PermutedUnbind(nn.Module):
    """y.permute(*perm).unbind(0)[0] after a conv, as timm's attention writes qkv.permute(2, 0, 3, 1, 4).unbind(0):
    pnnx follows the batch axis through the Transpose, so the Split on axis 0 is on the batch only when perm[0] == 0."""

    def __init__(self, perm):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.perm = perm

    def forward(self, x):
        return self.conv(x).permute(*self.perm).unbind(0)[0] * 2


class InputIndex(nn.Module):
    """Near miss: x[0] on the model's input, where pnnx gives the input no batch axis."""

    def forward(self, x):
        return x[0] * 2


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 6, 6)
    io = dict(input_names=["in0"], output_names=["out0"])
    index = seeded(lambda: Head("index"))
    yield Case("index", index, (x,), opset=17, dynamo=False, torchscript=True, **io)
    unbind = Head("unbind")
    unbind.conv = index.conv
    yield Case("unbind", unbind, (x,), opset=17, dynamo=False, torchscript=True, **io)
    seg = seeded(SegNet)
    yield Case("segnet", seg, (x,), opset=17, dynamo=False, torchscript=True, **io)
    # Workarounds, the same weights and inputs.
    for how in ("squeeze", "slice"):
        m = Head(how)
        m.conv = index.conv
        yield Case(f"index-as-{how}", m, (x,), opset=17, dynamo=False, torchscript=True, trigger=False,
                   rewrites="index", **io)
    seg_sq = SegNet(squeeze=True)
    seg_sq.load_state_dict(seg.state_dict())
    yield Case("segnet-squeeze", seg_sq, (x,), opset=17, dynamo=False, torchscript=True, trigger=False,
               rewrites="segnet", **io)
    # Control: select along the channel axis, the same path.
    channel = Head("channel")
    channel.conv = index.conv
    yield Case("channel", channel, (x,), opset=17, dynamo=False, torchscript=True, trigger=False, **io)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    x = torch.randn(1, 3, 6, 6)
    head = lambda how: seeded(lambda: Head(how))  # noqa: E731
    dyn = dict(opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("index-opset13", head("index"), x, opset=13)
    yield variant("index-opset18", head("index"), x, opset=18)
    yield variant("index-dynamo", head("index"), x, **dyn)
    yield variant("index-onnxsim", head("index"), x, simplify=True)
    yield variant("select", head("select"), x)
    yield variant("unbind-opset13", head("unbind"), x, opset=13)
    yield variant("unbind-dynamo", head("unbind"), x, **dyn)
    yield variant("segnet-opset17", seeded(SegNet), x)
    yield variant("segnet-dynamo", seeded(SegNet), x, **dyn)
    yield variant("channel-near-miss", head("channel"), x)
    yield variant("slice-near-miss", head("slice"), x)
    yield variant("squeeze-near-miss", head("squeeze"), x)
    yield variant("input-index-near-miss", InputIndex(), torch.randn(1, 4, 8))
    # unbind(0) after a Transpose (the TorchScript-based exporter writes Transpose, Split on axis 0, Squeeze)
    yield variant("unbind-after-permute-batch-first", seeded(lambda: PermutedUnbind((0, 2, 1, 3))), x)
    yield variant("unbind-after-permute-near-miss", seeded(lambda: PermutedUnbind((1, 0, 2, 3))), x)

"""KB128: torch.repeat_interleave through pnnx. From TorchScript pnnx keeps torch.repeat_interleave ("ignore
torch.repeat_interleave ... param repeats=4"); from ONNX the exporter writes Unsqueeze, Tile and Reshape, and pnnx
keeps the five-dimensional Tile as torch.tile. Either way ncnn stops at "layer ... not exists or registered"."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class RepeatChannels(nn.Module):
    """A conv, then each output channel repeated `r` times (PLKSR's channel repeat, Tencent/ncnn#6741).

    how="interleave": torch.repeat_interleave (the bug); how="conv": the same result from a grouped 1x1 conv whose
    weights are all 1 (the workaround); how="tile": y.repeat(1, r, 1, 1), the whole block repeated; how="cat": the
    same by torch.cat (no Tile in the export)."""

    def __init__(self, r=4, dim=1, how="interleave"):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.r, self.dim, self.how = r, dim, how
        if how == "conv":
            self.rep = nn.Conv2d(4, 4 * r, 1, groups=4, bias=False)
            self.rep.weight.data.fill_(1.0)

    def forward(self, x):
        y = self.conv(x)
        if self.how == "conv":
            return self.rep(y)
        if self.how == "tile":
            return y.repeat(1, self.r, 1, 1)
        if self.how == "cat":
            return torch.cat([y] * self.r, dim=1)
        return torch.repeat_interleave(y, self.r, dim=self.dim)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    x = randn(1, 3, 8, 8)
    yield Case("repeat-channels", seeded(RepeatChannels), (x,), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True, ways=True)
    yield Case("grouped-conv", seeded(RepeatChannels, 4, 1, "conv"), (x,), rewrites="repeat-channels", trigger=False,
               torchscript=True, opset=17, dynamo=False, **IO)
    # Control: the whole block repeated by torch.cat (a Concat, no Tile).
    yield Case("cat-channels", seeded(RepeatChannels, 4, 1, "cat"), (x,), trigger=False, opset=17, dynamo=False, **IO)


def variants():
    x = randn(1, 3, 8, 8)
    yield Case("repeat-2-torchscript", seeded(RepeatChannels, 2), (x,), torchscript=True, opset=17, dynamo=False, **IO)
    yield Case("repeat-width-torchscript", seeded(RepeatChannels, 2, 3), (x,), torchscript=True, opset=17,
               dynamo=False, **IO)
    yield Case("repeat-width-onnx", seeded(RepeatChannels, 2, 3), (x,), opset=17, dynamo=False, **IO)
    yield Case("tile-onnx", seeded(RepeatChannels, 4, 1, "tile"), (x,), opset=17, dynamo=False, **IO)
    yield Case("cat-near-miss", seeded(RepeatChannels, 2, 1, "cat"), (x,), opset=17, dynamo=False, **IO)

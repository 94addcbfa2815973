"""KB238: a Conv3d whose fused ReLU (or ReLU6) output is a graph output, in MNN."""

import torch
from torch import nn

from kb.blocks import ConvThen, like, randn, seeded
from kb.export import Case


class ReluAlsoOutput(nn.Module):
    """conv3d -> relu -> sigmoid, with the relu's output a graph output too."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(8, 4, 3, padding=1)

    def forward(self, x):
        r = torch.relu(self.conv(x))
        return r, torch.sigmoid(r)


def conv3d_then(f, bias=True, kernel=3):
    return seeded(lambda: ConvThen(nn.Conv3d(8, 4, kernel, padding=kernel // 2, bias=bias), f))


def cases():
    x = randn(1, 8, 4, 6, 6)
    trigger = conv3d_then(nn.ReLU())
    yield Case("trigger", trigger, (x,), opset=17, dynamo=False, ways=True)
    # workaround: the same function as a Clip with only a lower bound, which the converter does not fuse
    yield Case("clamp-min", like(trigger, lambda: ConvThen(nn.Conv3d(8, 4, 3, padding=1),
                                                           lambda t: torch.clamp(t, min=0))),
               (x,), opset=17, dynamo=False, trigger=False, rewrites="trigger")
    yield Case("sigmoid-control", conv3d_then(nn.Sigmoid()), (x,), opset=17, dynamo=False, trigger=False)


def variants():
    x = randn(1, 8, 4, 6, 6)
    yield Case("relu-no-bias", conv3d_then(nn.ReLU(), bias=False), (x,), opset=17, dynamo=False)
    yield Case("relu-kernel-1x3x3", seeded(lambda: ConvThen(nn.Conv3d(8, 4, (1, 3, 3), padding=(0, 1, 1)),
                                                            nn.ReLU())), (x,), opset=17, dynamo=False)
    yield Case("relu6", conv3d_then(nn.ReLU6()), (x,), opset=17, dynamo=False)
    yield Case("relu6-dynamo", conv3d_then(nn.ReLU6()), (x,), opset=18, dynamo=True)
    yield Case("relu-also-output", seeded(ReluAlsoOutput), (x,), opset=17, dynamo=False)
    # near misses: the activation is not fused into the Conv3D, or the fused Conv3D's output is no graph output
    yield Case("leakyrelu-near-miss", conv3d_then(nn.LeakyReLU(0.1)), (x,), opset=17, dynamo=False)
    yield Case("sigmoid-near-miss", conv3d_then(nn.Sigmoid()), (x,), opset=17, dynamo=False)
    yield Case("conv-only-near-miss", conv3d_then(nn.Identity()), (x,), opset=17, dynamo=False)
    yield Case("conv2d-relu-near-miss", seeded(lambda: ConvThen(nn.Conv2d(8, 4, 3, padding=1), nn.ReLU())),
               (randn(1, 8, 6, 6),), opset=17, dynamo=False)

"""KB115: a three-output model called through MNN's Python Module API with one Var instead of a list."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class ThreeOutputs(nn.Module):
    """An encoder with three heads, as SAM2's (image_embed, high_res_feats_0, high_res_feats_1)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        return y, y.mean((2, 3)), torch.relu(y)


def cases():
    # No graph pattern shows it (no trigger): the way Python code calls the loaded module does.
    yield Case("three-outputs", seeded(ThreeOutputs), (randn(1, 3, 8, 8),), opset=17, dynamo=False)

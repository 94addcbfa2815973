"""KB161: the model whose pnnx .param the checks edit by hand (test_checks.py); the graph itself is not the cause."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class ConvChunkGate(nn.Module):
    """A conv, a chunk in two along the channels (pnnx writes an ncnn Slice with an array, -23300=2,-233,-233),
    one half gating the other, and a reshape: the kind of lines users edit (split sizes, shapes)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        a, b = torch.chunk(torch.relu(self.conv(x)), 2, dim=1)
        return (a * torch.sigmoid(b)).reshape(1, 4, -1)


def cases():
    # pnnx converts the traced model (torchscript=True), the path its documentation gives.
    yield Case("conv-chunk", seeded(ConvChunkGate), (randn(1, 3, 16, 16),), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True)

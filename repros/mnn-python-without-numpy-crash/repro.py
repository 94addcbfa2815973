"""KB117: pymnn without numpy: creating any Var (F.const from a list, MNN.numpy.array) segfaults."""

from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


def cases():
    yield Case("small-net", seeded(nn.Sequential, nn.Linear(8, 4), nn.ReLU()), (randn(1, 8),), dynamo=False)

"""KB200: MNN's GatherND does not wrap negative indices. torch's dynamo exporter writes advanced indexing
(x[:, [-1, 0]], x[idx] with an index tensor, x[i, j]) as an ONNX GatherND, whose indices may be negative (counted
from the end, as in torch). MNN computes each slice's offset from the index as it is, and a negative index's
slice comes out as zeros. The TorchScript exporter writes the same indexing as Gather, which MNN wraps."""

import torch
from torch import nn

from kb.blocks import like, randn, seeded
from kb.export import Case


class PickChannels(nn.Module):
    """Conv, then keep channels by a list of indices counted from the end (x[:, [-1, 0]]), as heads that pick
    the last and first outputs do; `index` is the list."""

    def __init__(self, index=(-1, 0)):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.index = list(index)

    def forward(self, x):
        return self.conv(x)[:, self.index]


class PickRows(nn.Module):
    """Linear over (tokens, features), then rows picked by an index tensor fed at run time: h[idx]."""

    def __init__(self, wrap=False):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.wrap = wrap

    def forward(self, x, idx):
        h = self.fc(x)
        if self.wrap:  # the workaround: bring the index into [0, n) first
            idx = idx % h.shape[0]
        return h[idx]


class FirstLast(nn.Module):
    """Linear, then the last and the first rows by a list on the first axis: h[[-1, 0]]."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x)[[-1, 0]]


class PickPairs(nn.Module):
    """Elements picked by two index tensors, h[i, j] (one value per (row, column) pair)."""

    def forward(self, x, i, j):
        return torch.relu(x)[i, j]


class LastSteps(nn.Module):
    """The last time step of a sequence model's output, taken with a list: y[:, [-1]] (keeps the axis)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)[:, [-1]]


def image(seed=1):
    return randn(1, 3, 6, 6, seed=seed)


def feats(seed=1):
    return randn(5, 8, seed=seed)


ROWS = torch.tensor([1, -1, -5, 3])


def cases():
    x, h = image(), feats()
    pick = seeded(PickChannels)
    yield Case("channels", pick, (x,), ["x"], ["y"], opset=18, dynamo=True)
    # Workarounds on the same weights: the indices written as non-negative numbers; the TorchScript exporter,
    # which writes Gather; for a run-time index, idx % n before indexing.
    yield Case("channels-positive", like(pick, PickChannels, index=(5, 0)), (x,), ["x"], ["y"], opset=18,
               dynamo=True, trigger=False, rewrites="channels")
    yield Case("channels-torchscript", like(pick, PickChannels), (x,), ["x"], ["y"], opset=18, dynamo=False,
               trigger=False, rewrites="channels")
    rows = seeded(PickRows)
    yield Case("rows", rows, (h, ROWS), ["x", "idx"], ["y"], opset=18, dynamo=True)
    # (The wrapped index still reaches a GatherND fed at run time: the pattern cannot tell its sign.)
    yield Case("rows-wrapped", like(rows, PickRows, wrap=True), (h, ROWS), ["x", "idx"], ["y"], opset=18,
               dynamo=True, rewrites="rows")
    # Control: the same channel pick with non-negative indices.
    yield Case("channels-nonnegative", seeded(PickChannels, index=(4, 0)), (x,), ["x"], ["y"], opset=18,
               dynamo=True, trigger=False)


def variants():
    x, h = image(), feats()
    yield Case("channels-opset17", seeded(PickChannels, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=True)
    yield Case("channels-opset20", seeded(PickChannels, seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("channels-last-negative", seeded(PickChannels, seed=3, index=(0, 2, -2)), (x,), ["x"], ["y"],
               opset=18, dynamo=True)
    yield Case("rows-first-axis", seeded(FirstLast, seed=3), (h,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("last-step", seeded(LastSteps, seed=3), (randn(2, 7, 8),), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("rows-opset20", seeded(PickRows, seed=3), (h, ROWS), ["x", "idx"], ["y"], opset=20, dynamo=True)
    yield Case("pairs", PickPairs(), (h, torch.tensor([0, -1, 2]), torch.tensor([-2, 1, -8])), ["x", "i", "j"],
               ["y"], opset=18, dynamo=True)
    yield Case("rows-two-negative", seeded(PickRows, seed=3), (h, torch.tensor([-2, -1])), ["x", "idx"], ["y"],
               opset=18, dynamo=True)
    # Near misses: non-negative constant indices, and the TorchScript exporter's Gather.
    yield Case("channels-nonnegative-near-miss", seeded(PickChannels, seed=3, index=(5, 0)), (x,), ["x"], ["y"],
               opset=18, dynamo=True)
    yield Case("channels-torchscript-near-miss", seeded(PickChannels, seed=3), (x,), ["x"], ["y"], opset=17,
               dynamo=False)

"""KB119: MNN's Unique compares float values by their bit patterns read as int32: torch.unique's sorted
output puts negative values in reverse order (-1, -3, -5, 0, 1), and -0.0 and 0.0 count as two values."""

import torch

from kb.blocks import Fn
from kb.export import Case


def labels(seed=1, n=48):
    """Float values with repeats and negatives, as a model's rounded scores or coordinates are."""
    torch.manual_seed(seed)
    return torch.floor(torch.randn(n) * 3)


def shifted_unique(x):
    """The workaround: shift the values to >= 0 (whose bit patterns sort as the floats do), then back."""
    low = x.min()
    return torch.unique(x - low) + low


def cases():
    x = labels()
    yield Case("unique", Fn(torch.unique), (x,), opset=17, dynamo=False, ways=True)
    yield Case("unique-shifted", Fn(shifted_unique), (x,), opset=17, dynamo=False, rewrites="unique")


def variants():
    x = labels(seed=2)
    yield Case("unique-2d", Fn(torch.unique), (x.reshape(6, 8),), opset=17, dynamo=False)
    yield Case("unique-counts", Fn(lambda t: torch.unique(t, return_counts=True)[1].float()), (x,), opset=17,
               dynamo=False)
    yield Case("unique-inverse", Fn(lambda t: torch.unique(t, return_inverse=True)[1].float()), (x,), opset=17,
               dynamo=False)
    yield Case("signed-zero", Fn(torch.unique), (torch.tensor([0.0, -0.0, 1.0, 2.0, 1.0, 0.0]),), opset=17,
               dynamo=False)
    yield Case("scaled", Fn(lambda t: torch.unique(t * 0.25)), (x,), opset=13, dynamo=False)
    # near miss: an int64 tensor (class ids), whose bit patterns order as the integers do
    yield Case("int64-near-miss", Fn(lambda t: torch.unique(t.long()).float()), (x,), opset=17, dynamo=False)

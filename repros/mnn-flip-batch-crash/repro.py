"""KB124: torch.flip (an ONNX Slice with step -1) on a tensor with a batch of 2 or more: MNN's run corrupts its
heap and dies (SIGSEGV or SIGABRT)."""

import torch

from kb.blocks import Fn, randn
from kb.export import Case


def flip_by_index(t, dims):
    """The workaround: the same flip as an index_select (ONNX Gather) with reversed indices per axis."""
    for d in dims:
        t = t.index_select(d, torch.arange(t.shape[d] - 1, -1, -1))
    return t


def cases():
    x = randn(2, 8, 32, 24)
    yield Case("flip", Fn(lambda t: torch.flip(t, [3])), (x,), opset=17, dynamo=False, ways=True)
    yield Case("flip-gather", Fn(lambda t: flip_by_index(t, [3])), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="flip")


def variants():
    x = randn(2, 8, 32, 24, seed=2)
    yield Case("flip-h", Fn(lambda t: torch.flip(t, [2])), (x,), opset=17, dynamo=False)
    yield Case("flip-c", Fn(lambda t: torch.flip(t, [1])), (x,), opset=17, dynamo=False)
    yield Case("flip-batch", Fn(lambda t: torch.flip(t, [0])), (x,), opset=17, dynamo=False)
    yield Case("relu-flip", Fn(lambda t: torch.flip(torch.relu(t), [3])), (x,), opset=17, dynamo=False)
    yield Case("flip-batch4", Fn(lambda t: torch.flip(t, [3])), (randn(4, 8, 32, 24),), opset=17, dynamo=False)
    yield Case("flip-5d", Fn(lambda t: torch.flip(t, [4])), (randn(2, 8, 4, 16, 16),), opset=17, dynamo=False)
    # near misses: a positive step, and the flip written as a Gather
    yield Case("step2-near-miss", Fn(lambda t: t[:, :, ::2]), (x,), opset=17, dynamo=False)
    yield Case("gather-hw-near-miss", Fn(lambda t: flip_by_index(t, [2, 3])), (x,), opset=17, dynamo=False)

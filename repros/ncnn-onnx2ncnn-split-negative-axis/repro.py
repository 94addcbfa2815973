import torch
import torch.nn.functional as F
from kb.blocks import Fn, randn
from kb.export import Case


def glu_last(t, dim=-1):
    """A gated linear unit over the last dim, written with torch.split (Conformer / GLU feed-forward blocks)."""
    a, b = t.split(t.shape[dim] // 2, dim=dim)
    return a * torch.sigmoid(b)


def cases():
    x = randn(1, 3, 4, 6)
    yield Case("split-last-dim", Fn(glu_last), (x,), opset=11, dynamo=False, ways=True)
    yield Case("positive-dim", Fn(lambda t: glu_last(t, 3)), (x,), opset=11, dynamo=False, trigger=False,
               rewrites="split-last-dim")


def variants():
    x = randn(1, 3, 4, 6, seed=2)
    yield Case("f-glu", Fn(lambda t: F.glu(t, dim=-1)), (x,), opset=11, dynamo=False)
    yield Case("split-minus-2", Fn(lambda t: glu_last(t, -2)), (x,), opset=11, dynamo=False)
    yield Case("channel-split-near-miss", Fn(lambda t: glu_last(t, 1)), (randn(1, 4, 3, 6, seed=2),), opset=11,
               dynamo=False)

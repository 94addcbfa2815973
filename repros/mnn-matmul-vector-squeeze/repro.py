import torch
from torch import nn
from kb.blocks import Fn, randn
from kb.export import Case

W = torch.arange(5.0) - 2


class Pool(nn.Module):
    """Attention pooling over tokens: scores = h @ v with v a learned vector, softmax over tokens, weighted sum."""

    def __init__(self):
        super().__init__()
        self.v = nn.Parameter(torch.linspace(-1, 1, 5))

    def forward(self, h):
        a = torch.softmax(h @ self.v, dim=-1)
        return (a.unsqueeze(-1) * h).sum(1)


def cases():
    x = randn(3, 4, 5)
    yield Case("matvec", Fn(lambda t: t @ W), (x,), dynamo=False, ways=True)
    yield Case("column", Fn(lambda t: (t @ W[:, None]).squeeze(-1)), (x,), dynamo=False, trigger=False, rewrites="matvec")


def variants():
    yield Case("rank4", Fn(lambda t: t @ W), (randn(2, 3, 4, 5),), dynamo=False)
    yield Case("batch1", Fn(lambda t: t @ W), (randn(1, 4, 5),), dynamo=False)
    yield Case("attention-pool", Pool(), (randn(2, 6, 5),), dynamo=False)
    yield Case("attention-pool-dynamo", Pool(), (randn(2, 6, 5),), dynamo=True)
    yield Case("matrix-2d-near-miss", Fn(lambda t: t @ W), (randn(4, 5),), dynamo=False)  # x of rank 2

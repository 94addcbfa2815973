from torch import nn

from kb.blocks import randn
from kb.export import Case


class FirstLast(nn.Module):
    """As in Tencent/ncnn#4377: a sequence split into all frames but the last n, and the last n (along `dim`)."""

    def __init__(self, n=2, positive=False, dim=0):
        super().__init__()
        self.n, self.positive, self.dim = n, positive, dim

    def forward(self, x):
        k = x.shape[self.dim] - self.n if self.positive else -self.n
        if self.dim == 0:
            return x[:k], x[k:]
        return x[..., :k], x[..., k:]


def cases():
    yield Case("first-last", FirstLast(), (randn(10, 8),), dynamo=False, torchscript=True, ways=True)
    yield Case("positive", FirstLast(positive=True), (randn(10, 8),), dynamo=False, torchscript=True, trigger=False)


def variants():
    yield Case("first-last-3", FirstLast(3), (randn(10, 8, seed=2),), dynamo=False, torchscript=True)
    yield Case("last-dim", FirstLast(dim=-1), (randn(1, 4, 10, seed=2),), dynamo=False, torchscript=True)

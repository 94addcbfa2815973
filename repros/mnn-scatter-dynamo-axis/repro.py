"""KB098: a scatter (Tensor.scatter, reduction none) along a dimension other than 0, exported by the dynamo
exporter: its ONNX ScatterElements lists `reduction` before `axis`, and MNN then scatters along axis 0."""

import torch
from torch import nn

from kb.export import Case


class TopkMask(nn.Module):
    """Scores, then a mask keeping the k best of each row: zeros.scatter(dim, topk indices, 1.0), as
    mixture-of-experts routing and sparse attention build it."""

    def __init__(self, k=2, dim=-1):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.k, self.dim = k, dim

    def forward(self, x):
        s = self.fc(x)
        idx = s.topk(self.k, dim=self.dim).indices
        return torch.zeros_like(s).scatter(self.dim, idx, 1.0) * s


class Scatter(nn.Module):
    """Features written into a fixed permutation of slots along `dim` (no index repeats)."""

    def __init__(self, dim=1, shape=(1, 4, 8)):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.dim = dim
        torch.manual_seed(5)
        n = shape[dim]
        perm = torch.stack([torch.randperm(n) for _ in range(shape[0] * 8 * 16)]).reshape(-1)
        idx = torch.empty(shape, dtype=torch.long)
        flat = idx.movedim(dim, -1).reshape(-1, n)
        flat.copy_(perm[:flat.numel()].reshape(-1, n))
        self.register_buffer("idx", flat.reshape(idx.movedim(dim, -1).shape).movedim(-1, dim).contiguous())
        self.shape = shape

    def forward(self, x):
        v = self.fc(x).reshape(self.shape)
        return torch.zeros(self.shape).scatter(self.dim, self.idx, v)


def model(cls=TopkMask, seed=0, **kw):
    torch.manual_seed(seed)
    return cls(**kw).eval()


def tokens(seed=1, shape=(1, 4, 8)):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def cases():
    x = tokens()
    yield Case("topk-mask", model(), (x,), ["x"], ["y"], opset=18, dynamo=True)
    # The workaround: the same model and weights exported by the TorchScript exporter.
    yield Case("topk-mask-torchscript", model(), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False,
               rewrites="topk-mask")
    # Control: a dynamo-exported scatter along dim 0.
    yield Case("scatter-dim0", model(Scatter, dim=0, shape=(4, 8)), (tokens(shape=(4, 8)),), ["x"], ["y"],
               opset=18, dynamo=True, trigger=False)


def variants():
    x = tokens(seed=2)
    yield Case("topk-mask-opset20", model(seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("topk-mask-onnxsim", model(seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True, simplify=True)
    yield Case("topk-mask-dim1", model(seed=3, dim=1), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("topk-mask-k1", model(seed=3, k=1), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("scatter-dim1", model(Scatter, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("scatter-dim2", model(Scatter, seed=3, dim=2), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("scatter-4d-channels", model(Scatter, seed=3, dim=1, shape=(1, 4, 2, 4)), (x,), ["x"], ["y"],
               opset=18, dynamo=True)
    yield Case("scatter-dim-1", model(Scatter, seed=3, dim=-1), (x,), ["x"], ["y"], opset=18, dynamo=True)
    # Near misses: a dim-0 scatter from dynamo, and the TorchScript exporter's ScatterElements.
    yield Case("scatter-dim0-near-miss", model(Scatter, seed=3, dim=0, shape=(4, 8)), (tokens(2, (4, 8)),), ["x"],
               ["y"], opset=18, dynamo=True)
    yield Case("scatter-dim1-torchscript-near-miss", model(Scatter, seed=3), (x,), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("topk-mask-torchscript-near-miss", model(seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)

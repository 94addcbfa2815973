"""KB129: torch.var (unbiased, as torch defaults) traced to TorchScript and converted by pnnx: pnnx has no ncnn rule
for it, prints "ignore torch.var ... param dim=...", and ncnn stops at "layer torch.var not exists or registered".
From the ONNX export (ReduceMean, Sub, Mul, ReduceMean and a count correction) pnnx converts it."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class VarNorm(nn.Module):
    """Normalise by the variance over `dim` (a hand-made LayerNorm or instance norm): how="var" calls torch.var
    (unbiased), how="mean" writes it out as sum((x - mean)^2) / (n - 1) (the workaround)."""

    def __init__(self, dim=-1, how="var", linear=True):
        super().__init__()
        self.proj = nn.Linear(16, 16) if linear else nn.Conv2d(3, 8, 3, padding=1)
        self.dim, self.how = dim, how

    def forward(self, x):
        y = self.proj(x)
        if self.how == "var":
            v = torch.var(y, dim=self.dim, keepdim=True)
        else:
            n = y.shape[self.dim]
            v = ((y - y.mean(self.dim, keepdim=True)) ** 2).sum(self.dim, keepdim=True) / (n - 1)
        return (y - y.mean(self.dim, keepdim=True)) / torch.sqrt(v + 1e-5)


IO = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)


def cases():
    x = randn(1, 8, 16)
    yield Case("var-last-dim", seeded(VarNorm), (x,), **IO)
    yield Case("var-written-out", seeded(VarNorm, -1, "mean"), (x,), rewrites="var-last-dim", trigger=False, **IO)


def variants():
    x, img = randn(1, 8, 16), randn(1, 3, 8, 8)
    yield Case("var-dim-1", seeded(VarNorm, 1), (x,), **IO)
    yield Case("var-channels", seeded(VarNorm, 1, "var", False), (img,), **IO)
    yield Case("var-spatial", seeded(VarNorm, (2, 3), "var", False), (img,), **IO)
    yield Case("var-tokens-batch-2", seeded(VarNorm), (randn(2, 8, 16),), **IO)
    yield Case("written-out-near-miss", seeded(VarNorm, -1, "mean"), (x,), **IO)
    yield Case("written-out-channels-near-miss", seeded(VarNorm, 1, "mean", False), (img,), **IO)
    yield Case("layernorm-near-miss", seeded(lambda: nn.Sequential(nn.Linear(16, 16), nn.LayerNorm(16))), (x,), **IO)
    yield Case("var-height", seeded(VarNorm, 2, "var", False), (img,), **IO)

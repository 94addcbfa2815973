"""KB093: three standard ONNX ops mnnconvert has no rule for: Mish (nn.Mish, exported as one op by the dynamo
exporter), IsInf (torch.isinf) and Col2Im (F.fold, opset 18). It prints "These Op Not Support: ONNX::<op>",
"Converted Failed!", exits with 0 and writes no model."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

FLT_MAX = torch.finfo(torch.float32).max


class MishBlock(nn.Module):
    """Conv -> BatchNorm -> Mish, the block of YOLOv4 / CSPDarknet (twice with csp=True)."""

    def __init__(self, written=False, functional=False, csp=False):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(3 if i == 0 else 8, 8, 3, padding=1) for i in range(2 if csp else 1))
        self.bns = nn.ModuleList(nn.BatchNorm2d(8) for _ in self.convs)
        self.mish = nn.Mish()
        self.written, self.functional = written, functional

    def act(self, y):
        if self.written:  # the workaround: Mish written out
            return y * torch.tanh(F.softplus(y))
        return F.mish(y) if self.functional else self.mish(y)

    def forward(self, x):
        for conv, bn in zip(self.convs, self.bns):
            x = self.act(bn(conv(x)))
        return x


class InfGuard(nn.Module):
    """Zero the infinities of the input, then a Conv: an input-sanitising guard."""

    def __init__(self, how="isinf"):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.how = how

    def forward(self, x):
        if self.how == "isinf":
            bad = torch.isinf(x)
        elif self.how == "posinf":
            bad = torch.isposinf(x)
        else:  # the workaround: |x| > FLT_MAX holds for +-inf only (not for NaN)
            bad = x.abs() > FLT_MAX
        return self.conv(torch.where(bad, torch.zeros_like(x), x))


class Fold(nn.Module):
    """A 1x1 Conv1d over patch vectors, then F.fold (overlap-add of k x k patches into a C x H x W map), as patch
    decoders and sliding-window models end."""

    def __init__(self, c=4, k=3, stride=2, padding=0, size=9, transpose=False):
        super().__init__()
        self.c, self.k, self.stride, self.padding, self.size = c, k, stride, padding, size
        self.lw = (size + 2 * padding - k) // stride + 1
        self.proj = nn.Conv1d(c * k * k, c * k * k, 1)
        self.transpose = transpose
        # The workaround: fold is a ConvTranspose2d whose weight is one-hot (channel c*k*k + i*k + j -> c, i, j).
        self.register_buffer("onehot", torch.eye(c * k * k).reshape(c * k * k, c, k, k))

    def forward(self, x):
        y = self.proj(x)
        if self.transpose:
            y = y.reshape(y.shape[0], -1, self.lw, self.lw)
            return F.conv_transpose2d(y, self.onehot, stride=self.stride, padding=self.padding)
        return F.fold(y, (self.size, self.size), self.k, stride=self.stride, padding=self.padding)


def image(seed=1, infs=False):
    torch.manual_seed(seed)
    x = torch.randn(1, 3, 12, 12)
    if infs:
        x.view(-1)[::9] = float("inf")
        x.view(-1)[4::9] = -float("inf")
    return x


def patches(seed=1, c=4, k=3, length=16):
    torch.manual_seed(seed)
    return torch.randn(1, c * k * k, length)


def make(cls, seed=0, **kw):
    torch.manual_seed(seed)
    return cls(**kw).eval()


def cases():
    x, xi, p = image(), image(infs=True), patches()
    mish = make(MishBlock)
    yield Case("mish", mish, (x,), ["x"], ["y"], opset=18, dynamo=True)
    written = make(MishBlock, written=True)
    written.load_state_dict(mish.state_dict())
    yield Case("mish-written", written, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False, rewrites="mish")
    guard = make(InfGuard)
    yield Case("isinf", guard, (xi,), ["x"], ["y"], opset=18, dynamo=True)
    compare = make(InfGuard, how="compare")
    compare.load_state_dict(guard.state_dict())
    yield Case("isinf-compare", compare, (xi,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="isinf")
    fold = make(Fold)
    yield Case("fold", fold, (p,), ["x"], ["y"], opset=18, dynamo=True)
    transpose = make(Fold, transpose=True)
    transpose.load_state_dict(fold.state_dict())
    yield Case("fold-convtranspose", transpose, (p,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="fold")
    # Control: the TorchScript exporter writes Mish as Softplus, Tanh and Mul, which convert.
    yield Case("mish-torchscript", make(MishBlock), (x,), ["x"], ["y"], opset=17, dynamo=False, trigger=False)


def variants():
    x, xi = image(), image(infs=True)
    yield Case("mish-opset17", make(MishBlock, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=True)
    yield Case("mish-opset20", make(MishBlock, seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("mish-functional", make(MishBlock, seed=3, functional=True), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("mish-csp-block", make(MishBlock, seed=3, csp=True), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("isinf-opset17", make(InfGuard, seed=3), (xi,), ["x"], ["y"], opset=17, dynamo=True)
    yield Case("isinf-torchscript", make(InfGuard, seed=3), (xi,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("isposinf", make(InfGuard, seed=3, how="posinf"), (xi,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("fold-torchscript", make(Fold, seed=3), (patches(),), ["x"], ["y"], opset=18, dynamo=False)
    yield Case("fold-k2s2", make(Fold, seed=3, k=2, stride=2, size=8), (patches(k=2),), ["x"], ["y"], opset=18,
               dynamo=True)
    yield Case("fold-padded", make(Fold, seed=3, padding=1), (patches(length=25),), ["x"], ["y"], opset=18,
               dynamo=True)
    yield Case("fold-opset20", make(Fold, seed=3), (patches(),), ["x"], ["y"], opset=20, dynamo=True)
    # Near misses: the TorchScript exporter's Mish (Softplus, Tanh, Mul), and the rewrites above.
    yield Case("mish-torchscript-near-miss", make(MishBlock, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("isinf-compare-near-miss", make(InfGuard, seed=3, how="compare"), (xi,), ["x"], ["y"], opset=18,
               dynamo=True)

"""KB225: torch.sign through pnnx's TorchScript path, then ncnn (pnnx/pnnx#225). pnnx before 20260526 has no ncnn
op type for sign: it prints "UnaryOp sign not supported yet" and still writes a UnaryOp without one, which ncnn
runs as its default type 0, abs. From 20260526 pnnx writes UnaryOp 0=20, a type ncnn knows from 1.0.20260526."""

import torch
from torch import nn

from kb.blocks import like, randn, seeded
from kb.export import Case


class ConvSign(nn.Module):
    """A conv, then torch.sign of its output, written one of several ways (`how`)."""

    def __init__(self, how="sign", conv=nn.Conv2d, cin=3, cout=8, k=3):
        super().__init__()
        self.conv = conv(cin, cout, k, padding=k // 2) if conv is not nn.Linear else nn.Linear(cin, cout)
        self.post = conv(cout, cout, k, padding=k // 2) if how == "sign-then-conv" else None
        self.how = how

    def forward(self, x):
        y = self.conv(x)
        how = self.how
        if how in ("sign", "sign-then-conv"):
            s = torch.sign(y)
            return self.post(s) if self.post is not None else s
        if how == "method":
            return y.sign()
        if how == "signed-sqrt":  # sign(y) * sqrt(|y|), as normalised descriptors do
            return torch.sign(y) * torch.sqrt(torch.abs(y))
        if how == "step":  # a 0/1 step written with sign
            return torch.sign(y) * 0.5 + 0.5
        if how == "relu-after":
            return torch.relu(torch.sign(y))
        if how == "abs":  # near miss: abs itself, which pnnx writes as the same default UnaryOp
            return torch.abs(y)
        if how == "neg":  # near miss: another unary op pnnx gives a type
            return torch.neg(y)
        if how == "clamp-scaled":  # the workaround: y scaled up, clipped to [-1, 1]: sign(y) wherever |y| >= 1e-12
            return torch.clamp(y * 1e12, -1.0, 1.0)
        raise ValueError(how)


class InputSign(nn.Module):
    """torch.sign of the model's input itself."""

    def forward(self, x):
        return torch.sign(x)


def cases():
    x = randn(1, 3, 16, 16)
    base = seeded(ConvSign, "sign")
    yield Case("conv-sign", base, (x,), input_names=["in0"], output_names=["out0"], opset=17, dynamo=False,
               torchscript=True)
    # the workaround: the same weights, sign written as a scale and a clamp to [-1, 1]
    yield Case("clamp-scaled", like(base, ConvSign, "clamp-scaled"), (x,), input_names=["in0"], output_names=["out0"],
               opset=17, dynamo=False, torchscript=True, trigger=False, rewrites="conv-sign")


def variants():
    x, s, v = randn(1, 3, 16, 16, seed=3), randn(1, 6, 20, seed=4), randn(1, 16, seed=5)
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("tensor-method", seeded(ConvSign, "method"), (x,), **io)
    yield Case("input-sign", InputSign(), (x,), **io)
    yield Case("conv1d-sign", seeded(ConvSign, "sign", nn.Conv1d, 6, 6), (s,), **io)
    yield Case("linear-sign", seeded(ConvSign, "sign", nn.Linear, 16, 12), (v,), **io)
    yield Case("signed-sqrt", seeded(ConvSign, "signed-sqrt"), (x,), **io)
    yield Case("step", seeded(ConvSign, "step"), (x,), **io)
    yield Case("relu-after", seeded(ConvSign, "relu-after"), (x,), **io)
    yield Case("sign-then-conv", seeded(ConvSign, "sign-then-conv"), (x,), **io)
    # near misses: other unary ops, no sign
    yield Case("abs-near-miss", seeded(ConvSign, "abs"), (x,), **io)
    yield Case("neg-near-miss", seeded(ConvSign, "neg"), (x,), **io)

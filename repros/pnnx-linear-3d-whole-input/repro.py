"""KB220: nn.Linear on a 3-D (1, tokens, features) tensor, traced and converted by pnnx, where pnnx finds no batch
axis and its script feeds the whole tensor: releases before 20261020 write a bare Gemm, with no Reshape to 2-D rows,
and ncnn's Gemm reads the 3-D blob's channels (1) as its rows, so the output is one row (1, out_features)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Tokens(nn.Module):
    """A Linear over the last axis of a 3-D (batch, tokens, features) tensor, the ways models write it."""

    def __init__(self, op, cin=16, cout=4, bias=True):
        super().__init__()
        self.op, self.cin, self.cout = op, cin, cout
        self.fc = nn.Linear(cin, cout, bias=bias)
        self.fc2 = nn.Linear(cout, cin)
        self.norm = nn.LayerNorm(cin)
        self.conv = nn.Conv1d(cin, cin, 1)

    def forward(self, x):
        op, fc = self.op, self.fc
        if op == "linear":  # the colleague's model: nn.Linear(16, 4) on a (1, 8, 16) input
            return fc(x)
        if op == "f-linear":  # F.linear with a constant weight and bias
            return F.linear(x, torch.full((self.cout, self.cin), 0.1), torch.ones(self.cout))
        if op == "matmul":  # the Linear written as a matmul with the transposed weight
            return torch.matmul(x, fc.weight.t()) + fc.bias
        if op == "mlp":  # a transformer MLP: Linear, GELU, Linear
            return self.fc2(F.gelu(fc(x)))
        if op == "then-relu":
            return torch.relu(fc(x))
        if op == "then-softmax":
            return torch.softmax(fc(x), dim=-1)
        if op == "norm-then-linear":  # pre-norm: LayerNorm over the features, then the Linear
            return fc(self.norm(x))
        if op == "conv-then-linear":  # near miss: a Conv1d before gives pnnx the batch axis
            return fc(self.conv(x.transpose(1, 2)).transpose(1, 2))
        if op == "rows":  # the workaround: the Linear on 2-D rows, reshaped back to 3-D in the model
            return fc(x.reshape(-1, self.cin)).reshape(1, -1, self.cout)
        raise ValueError(op)


def cases():
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    x = randn(1, 8, 16)
    yield Case("linear-3d", seeded(Tokens, "linear"), (x,), **io)
    yield Case("linear-3d-no-bias", seeded(Tokens, "linear", 16, 4, False), (x,), **io)
    # The workaround: the same weights and input, the Linear on (8, 16) rows and the (8, 4) result reshaped to 3-D.
    yield Case("rows-in-model", seeded(Tokens, "rows"), (x,), trigger=False, rewrites="linear-3d", **io)


def variants():
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("linear-wide", seeded(Tokens, "linear", 64, 10), (randn(1, 32, 64, seed=2),), **io)
    yield Case("f-linear", seeded(Tokens, "f-linear"), (randn(1, 8, 16, seed=3),), **io)
    yield Case("matmul-const", seeded(Tokens, "matmul"), (randn(1, 8, 16, seed=4),), **io)
    yield Case("mlp", seeded(Tokens, "mlp"), (randn(1, 8, 16, seed=5),), **io)
    yield Case("then-relu", seeded(Tokens, "then-relu"), (randn(1, 8, 16, seed=6),), **io)
    yield Case("then-softmax", seeded(Tokens, "then-softmax"), (randn(1, 8, 16, seed=7),), **io)
    yield Case("norm-then-linear", seeded(Tokens, "norm-then-linear"), (randn(1, 8, 16, seed=8),), **io)
    yield Case("linear-batch2", seeded(Tokens, "linear"), (randn(2, 8, 16, seed=9),), **io)
    yield Case("one-token", seeded(Tokens, "linear"), (randn(1, 1, 16, seed=10),), **io)  # near miss: one row
    yield Case("linear-2d", seeded(Tokens, "linear"), (randn(8, 16, seed=11),), **io)  # near miss: 2-D rows
    yield Case("conv-then-linear", seeded(Tokens, "conv-then-linear"), (randn(1, 8, 16, seed=12),), **io)  # near miss

"""KB172: nn.Linear (or F.linear with a constant weight) applied to a 4-D tensor, traced and converted by pnnx:
releases before 20250912 write a Reshape to 2-D rows and a Gemm, and never reshape back, so ncnn's output is the
(rows, out_features) matrix instead of torch's 4-D tensor (Tencent/ncnn#4343)."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Proj(nn.Module):
    """A Linear over the last axis of a 4-D tensor, the ways models write it."""

    def __init__(self, op, cin=4, cout=3, bias=True):
        super().__init__()
        self.op, self.cin, self.cout = op, cin, cout
        self.fc = nn.Linear(cin, cout, bias=bias)
        self.conv = nn.Conv2d(cin, cin, 1)

    def forward(self, x):
        op, fc = self.op, self.fc
        if op == "linear":  # Tencent/ncnn#4343: nn.Linear(4, 3) on a (1, 2, 2, 4) input
            return fc(x)
        if op == "f-linear":  # the thread's F.linear with a constant weight and bias
            return F.linear(x, torch.ones(self.cout, self.cin), torch.ones(self.cout))
        if op == "convnext":  # ConvNeXt-style: a conv, then the Linear on channels-last, then back
            return fc(self.conv(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        if op == "convnext-cl":  # the same, the output left channels-last
            return fc(self.conv(x).permute(0, 2, 3, 1))
        if op == "matmul":  # the Linear written as a matmul with the transposed weight
            return torch.matmul(x, fc.weight.t()) + fc.bias
        if op == "then-softmax":  # near miss: an op after the Linear
            return torch.softmax(fc(x), dim=-1)
        if op == "then-cat":  # near miss: a concat after the Linear
            return torch.cat([fc(x), x[..., :3]], dim=1)
        if op == "rows":  # the workaround as torch computes it: the Linear on 2-D rows, reshaped back
            return fc(x.reshape(-1, self.cin)).reshape(*x.shape[:-1], self.cout)
        if op == "rows-only":  # what is traced for pnnx (test_checks.py): the rows; the application reshapes them
            return fc(x.reshape(-1, self.cin))
        raise ValueError(op)


def cases():
    x = randn(1, 2, 2, 4)
    yield Case("linear-4d", seeded(Proj, "linear"), (x,), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("f-linear-4d", seeded(Proj, "f-linear"), (x,), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    yield Case("convnext-linear", seeded(Proj, "convnext"), (randn(1, 4, 3, 5, seed=2),), ["in0"], ["out0"],
               opset=17, dynamo=False, torchscript=True)
    # The workaround: the same weights and input, the Linear on (rows, 4). test_checks.py traces this module with
    # op "rows-only" (the reshape back left to the application), converts it, and reshapes ncnn's output in numpy.
    yield Case("rows", seeded(Proj, "rows"), (x,), ["in0"], ["out0"], opset=17, dynamo=False, torchscript=True,
               trigger=False, rewrites="linear-4d")


def variants():
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("linear-wide", seeded(Proj, "linear", 8, 16), (randn(1, 3, 5, 8, seed=3),), **io)
    yield Case("linear-no-bias", seeded(Proj, "linear", 4, 3, False), (randn(1, 2, 2, 4, seed=4),), **io)
    yield Case("linear-batch2", seeded(Proj, "linear"), (randn(2, 2, 2, 4, seed=5),), **io)
    yield Case("matmul-const", seeded(Proj, "matmul"), (randn(1, 2, 2, 4, seed=6),), **io)
    yield Case("convnext-channels-last", seeded(Proj, "convnext-cl"), (randn(1, 4, 3, 5, seed=7),), **io)
    yield Case("convnext-wide", seeded(Proj, "convnext", 8, 16), (randn(1, 8, 4, 6, seed=8),), **io)
    yield Case("then-softmax", seeded(Proj, "then-softmax"), (randn(1, 2, 2, 4, seed=9),), **io)  # near miss
    yield Case("then-cat", seeded(Proj, "then-cat"), (randn(1, 2, 2, 4, seed=10),), **io)  # near miss
    yield Case("linear-3d", seeded(Proj, "linear"), (randn(1, 5, 4, seed=11),), **io)  # near miss: 3-D tokens
    yield Case("linear-2d", seeded(Proj, "linear"), (randn(5, 4, seed=12),), **io)  # near miss: 2-D rows
    # the workaround's rows with the reshape back inside the model: traced whole, as a user would write it
    yield Case("rows-reshaped-in-model", seeded(Proj, "rows"), (randn(1, 2, 2, 4, seed=13),), **io)

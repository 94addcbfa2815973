"""KB223: torch.stack on the new last axis (dim=-1, or dim=rank) through pnnx's TorchScript path, then ncnn. pnnx
20240226 counts dim=-1 against the inputs' rank (an existing axis) and writes a Concat there: (4, 6, 10) for torch's
(1, 4, 6, 5, 2). 20240410 to 20251119 count it right but write a Concat on an axis the 3-D blobs do not have: ncnn
dies (SIGSEGV, from 20250912 SIGFPE). 20260112 on reshape each input to (..., 1) first and are right."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

TS = dict(opset=17, dynamo=False, torchscript=True)


class TwoConvStack(nn.Module):
    """Two convs of the same input, stacked on `dim` (the form real models take: real and imaginary parts, x/y)."""

    def __init__(self, dim, conv=nn.Conv2d, ch=4, then=None, how="stack"):
        super().__init__()
        self.a, self.b = conv(ch, ch, 1), conv(ch, ch, 1)
        self.dim, self.then, self.how = dim, then, how

    def forward(self, x):
        a, b = self.a(x), self.b(x)
        if self.how == "stack":
            y = torch.stack((a, b), dim=self.dim)
        elif self.how == "cat-only":  # no new axis: the two tensors joined along an existing one
            y = torch.cat((a, b), dim=self.dim)
        else:  # the workaround: a new axis per tensor, then a cat on it
            y = torch.cat((a.unsqueeze(self.dim), b.unsqueeze(self.dim)), dim=self.dim)
        return self.then(y) if self.then is not None else y


class Stack(nn.Module):
    """The thread's model: torch.stack of the model's inputs."""

    def __init__(self, dim, then=None):
        super().__init__()
        self.dim, self.then = dim, then

    def forward(self, x1, x2):
        y = torch.stack((x1, x2), dim=self.dim)
        return self.then(y) if self.then is not None else y


def cases():
    x, s = randn(1, 4, 6, 5), randn(1, 6, 5)
    yield Case("conv-stack-last", seeded(TwoConvStack, -1), (x,), input_names=["in0"], output_names=["out0"], **TS)
    yield Case("conv1d-stack-last", seeded(TwoConvStack, -1, nn.Conv1d, 6), (s,), input_names=["in0"],
               output_names=["out0"], **TS)
    yield Case("inputs-3d-stack-last", Stack(-1), (s, randn(1, 6, 5, seed=2)), input_names=["in0", "in1"],
               output_names=["out0"], **TS)
    # the workaround: a new axis per tensor, then a cat on it (judged against the stack's own torch output)
    yield Case("conv-unsqueeze-cat", seeded(TwoConvStack, -1, how="cat"), (x,), input_names=["in0"],
               output_names=["out0"], trigger=False, rewrites="conv-stack-last", **TS)
    yield Case("conv1d-unsqueeze-cat", seeded(TwoConvStack, -1, nn.Conv1d, 6, how="cat"), (s,), input_names=["in0"],
               output_names=["out0"], trigger=False, rewrites="conv1d-stack-last", **TS)


def variants():
    x, s = randn(1, 4, 6, 5, seed=3), randn(1, 6, 5, seed=4)
    io = dict(input_names=["in0"], output_names=["out0"])
    io2 = dict(input_names=["in0", "in1"], output_names=["out0"])
    # the thread's form: two 4-D model inputs (20261020 then fails on KB215's 5-D reshape)
    yield Case("inputs-4d-stack-last", Stack(-1), (x, randn(1, 4, 6, 5, seed=5)), **io2, **TS)
    yield Case("inputs-4d-stack-last-relu", Stack(-1, torch.relu), (x, randn(1, 4, 6, 5, seed=5)), **io2, **TS)
    yield Case("conv-stack-last-relu", seeded(TwoConvStack, -1, then=torch.relu), (x,), **io, **TS)
    yield Case("conv-stack-last-sum", seeded(TwoConvStack, -1, then=lambda y: y.sum(-1)), (x,), **io, **TS)
    yield Case("conv1d-stack-last-relu", seeded(TwoConvStack, -1, nn.Conv1d, 6, torch.relu), (s,), **io, **TS)
    # the same new last axis named with a positive dim
    yield Case("conv-stack-dim4", seeded(TwoConvStack, 4), (x,), **io, **TS)
    yield Case("conv1d-stack-dim3", seeded(TwoConvStack, 3, nn.Conv1d, 6), (s,), **io, **TS)
    # other negative dims (not the last axis)
    yield Case("conv-stack-minus2", seeded(TwoConvStack, -2), (x,), **io, **TS)
    yield Case("conv-stack-minus3", seeded(TwoConvStack, -3), (x,), **io, **TS)
    yield Case("conv1d-stack-minus2", seeded(TwoConvStack, -2, nn.Conv1d, 6), (s,), **io, **TS)
    yield Case("inputs-3d-stack-minus2", Stack(-2), (s, randn(1, 6, 5, seed=6)), **io2, **TS)
    # positive dims before the last axis
    yield Case("conv-stack-dim1", seeded(TwoConvStack, 1), (x,), **io, **TS)
    yield Case("conv1d-stack-dim2", seeded(TwoConvStack, 2, nn.Conv1d, 6), (s,), **io, **TS)
    # near miss: a cat on the last axis, no new axis
    yield Case("conv-cat-last-near-miss", seeded(TwoConvStack, -1, how="cat-only"), (x,), **io, **TS)

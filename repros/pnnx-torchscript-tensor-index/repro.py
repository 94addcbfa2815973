"""KB235: PyTorch advanced indexing (a tensor indexed by an index tensor or list: x[:, idx], x[:, i, j], x[:, mask]),
traced and converted with pnnx, stays a Tensor.index layer (pnnx maps aten::index to Tensor.index and has no ncnn
rule for it), and ncnn's load_param refuses it. The rewrite picks the same entries with one-wide slices and
concatenates them. A constant table indexed by a constant index (Swin's relative position bias) is folded into a
constant by pnnx and converts: a control."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

IDX = [2, 0, 3]
ROWS, COLS = [0, 2, 1], [5, 1, 7]  # x[:, ROWS, COLS] of a (1, 3, 8) input
PERM = [1, 0, 3, 2, 5, 4, 7, 6]


class Indexed(nn.Module):
    """x[:, idx] + 1 with idx a constant index buffer (how="buffer"), or the same entries as one-wide slices,
    concatenated (how="slices")."""

    def __init__(self, idx=IDX, how="buffer"):
        super().__init__()
        self.register_buffer("idx", torch.tensor(idx))
        self.list, self.how = list(idx), how

    def forward(self, x):
        if self.how == "slices":
            return torch.cat([x[:, i:i + 1] for i in self.list], 1) + 1
        return x[:, self.idx] + 1


class TwoIndex(nn.Module):
    """x[:, rows, cols] + 1 (pairs picked by two constant index buffers), or the rewrite: the two axes flattened
    into one and the pairs taken as one-wide slices at rows * width + cols, concatenated."""

    def __init__(self, how="buffer"):
        super().__init__()
        self.register_buffer("rows", torch.tensor(ROWS))
        self.register_buffer("cols", torch.tensor(COLS))
        self.how = how

    def forward(self, x):
        if self.how == "slices":
            flat = x.reshape(1, 3 * 8)
            return torch.cat([flat[:, r * 8 + c:r * 8 + c + 1] for r, c in zip(ROWS, COLS)], 1) + 1
        return x[:, self.rows, self.cols] + 1


class SwinBias(nn.Module):
    """Swin's relative position bias: a learned (9, 3) table indexed by a constant (4, 4) index buffer, added to
    a (1, 3, 4, 4) attention map. view_index=True flattens the index first, as Swin does."""

    def __init__(self, view_index=True):
        super().__init__()
        torch.manual_seed(5)
        self.table = nn.Parameter(torch.randn(9, 3))
        self.register_buffer("rpi", torch.randint(0, 9, (4, 4)))
        self.view_index = view_index

    def forward(self, x):
        if self.view_index:
            bias = self.table[self.rpi.view(-1)].view(4, 4, -1)
        else:
            bias = self.table[self.rpi]
        return x + bias.permute(2, 0, 1).unsqueeze(0)


class ConvPermute(nn.Module):
    """A Conv2d, then its channels reordered by a constant permutation (a channel shuffle by index)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.register_buffer("perm", torch.tensor(PERM))

    def forward(self, x):
        return self.conv(x)[:, self.perm]


class ByInput(nn.Module):
    """x[:, i] + 1 with the index i a second model input (fed as float, cast to long in the model)."""

    def forward(self, x, i):
        return x[:, i.long()] + 1


TS = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


def cases():
    x, p = randn(1, 4, 16), randn(1, 3, 8, seed=2)
    yield Case("index-buffer", Indexed(), (x,), opset=17, dynamo=False, **TS)
    yield Case("two-index", TwoIndex(), (p,), opset=17, dynamo=False, **TS)
    # The rewrites: one-wide slices, concatenated.
    yield Case("index-slices", Indexed(how="slices"), (x,), trigger=False, rewrites="index-buffer", opset=17,
               dynamo=False, **TS)
    yield Case("two-index-slices", TwoIndex(how="slices"), (p,), trigger=False, rewrites="two-index", opset=17,
               dynamo=False, **TS)
    # Control: Swin's relative position bias (a constant table, a constant index), which pnnx folds.
    yield Case("swin-bias", seeded(lambda: SwinBias()), (randn(1, 3, 4, 4, seed=3),), trigger=False, opset=17,
               dynamo=False, **TS)


def variants():
    x, q = randn(1, 4, 16, seed=4), randn(1, 3, 8, 8, seed=5)
    yield Case("index-list", Fn(lambda x: x[:, [2, 0, 3]] + 1), (x,), opset=17, dynamo=False, **TS)
    yield Case("index-dim2", Fn(lambda x: x[:, :, torch.tensor([5, 1, 9])] + 1), (x,), opset=17, dynamo=False, **TS)
    yield Case("index-last-ellipsis", Fn(lambda x: x[..., torch.tensor([15, 0])] + 1), (x,), opset=17, dynamo=False,
               **TS)
    yield Case("bool-mask", Fn(lambda x: x[:, torch.tensor([True, False, True, True])] + 1), (x,), opset=17,
               dynamo=False, **TS)
    yield Case("index-2d", Fn(lambda x: x[:, torch.tensor([[0, 1], [2, 3]])] + 1), (x,), opset=17, dynamo=False,
               **TS)
    yield Case("conv-channel-permute", seeded(lambda: ConvPermute()), (q,), opset=17, dynamo=False, **TS)
    yield Case("index-from-input", ByInput(), (x, torch.tensor([2.0, 0.0, 3.0])), opset=17, dynamo=False,
               input_names=["in0", "in1"], output_names=["out0"], torchscript=True)
    # Near misses: a constant table by a constant 2-D index (folded), a scalar index, a slice.
    yield Case("swin-bias-2d-index", seeded(lambda: SwinBias(view_index=False)), (randn(1, 3, 4, 4, seed=6),),
               opset=17, dynamo=False, **TS)
    yield Case("scalar-index-near-miss", Fn(lambda x: x[:, 2] + 1), (x,), opset=17, dynamo=False, **TS)
    yield Case("slice-near-miss", Fn(lambda x: x[:, 1:3] + 1), (x,), opset=17, dynamo=False, **TS)

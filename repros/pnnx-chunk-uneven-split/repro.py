"""KB203: torch.chunk (or torch.tensor_split into N sections) of an axis N does not divide, traced and converted by
pnnx. pnnx's ncnn pass writes a Slice of N equal parts (-233 each) and only prints "chunk with non-perfect divided
size 16 / 3 is not supported"; ncnn's equal Slice gives the remainder to the last piece (5, 5, 6) where torch gives
it to none (6, 6, 4 for chunk; 6, 5, 5 for tensor_split): wrong shapes and values, no error."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Chunk(nn.Module):
    """x split into `n` pieces along `dim` the way `how` says, the pieces concatenated back in reverse order and
    scaled (so every piece's size and place shows in the output). pick=i returns piece i alone instead."""

    def __init__(self, n=3, dim=2, how="chunk", pick=None, conv=0, sizes=None):
        super().__init__()
        self.n, self.dim, self.how, self.pick, self.sizes = n, dim, how, pick, sizes
        self.conv = nn.Conv2d(conv, conv, 3, padding=1) if conv else None

    def forward(self, x):
        if self.conv is not None:
            x = self.conv(x)
        size = x.shape[self.dim]
        if self.how == "chunk":
            parts = torch.chunk(x, self.n, dim=self.dim)
        elif self.how == "tensor-split":
            parts = torch.tensor_split(x, self.n, dim=self.dim)
        elif self.how == "split-ceil":  # the workaround: torch.chunk's own piece size, ceil(size / n), given to split
            parts = torch.split(x, -(-size // self.n), dim=self.dim)
        elif self.how == "split-sizes":  # the sizes written out as numbers, (6, 6, 4) for 16 / 3
            parts = torch.split(x, self.sizes, dim=self.dim)
        else:
            raise ValueError(self.how)
        if self.pick is not None:
            return parts[self.pick] * 2
        return torch.cat(parts[::-1], dim=self.dim) * 2


IO = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


def cases():
    t = randn(1, 12, 16)
    # (1, 12, 16) tokens, chunk(3) of the last axis: torch 6, 6, 4; ncnn 5, 5, 6.
    yield Case("chunk3", seeded(Chunk), (t,), opset=17, dynamo=False, **IO)
    # Workarounds: the same pieces by torch.split with chunk's own size, or from the ONNX export.
    yield Case("split-ceil", seeded(Chunk, 3, 2, "split-ceil"), (t,), opset=17, dynamo=False, trigger=False,
               rewrites="chunk3", **IO)
    yield Case("chunk3-onnx", seeded(Chunk), (t,), opset=17, dynamo=False, trigger=False, rewrites="chunk3",
               input_names=["in0"], output_names=["out0"])
    # Control: a chunk that divides its axis (16 / 2).
    yield Case("chunk2", seeded(Chunk, 2), (t,), opset=17, dynamo=False, trigger=False, **IO)


def variants():
    t, x = randn(1, 12, 16, seed=2), randn(1, 8, 6, 10, seed=3)
    yield Case("tensor-split", seeded(Chunk, 3, 2, "tensor-split"), (t,), opset=17, dynamo=False, **IO)
    yield Case("last-dim-negative", seeded(Chunk, 3, -1), (t,), opset=17, dynamo=False, **IO)
    yield Case("first-piece", seeded(Chunk, 3, 2, "chunk", 0), (t,), opset=17, dynamo=False, **IO)
    yield Case("conv-channels", seeded(Chunk, 3, 1, "chunk", None, 8), (x,), opset=17, dynamo=False, **IO)
    yield Case("conv-channels-last-piece", seeded(Chunk, 3, 1, "chunk", 2, 8), (x,), opset=17, dynamo=False, **IO)
    yield Case("width-chunk4", seeded(Chunk, 4, 3), (x,), opset=17, dynamo=False, **IO)
    yield Case("tensor-split-channels", seeded(Chunk, 3, 1, "tensor-split", None, 8), (x,), opset=17, dynamo=False,
               **IO)
    # near misses: chunks that divide the axis, and split with sizes
    yield Case("chunk3-of-15-near-miss", seeded(Chunk, 3, 2), (randn(1, 12, 15, seed=4),), opset=17, dynamo=False,
               **IO)
    yield Case("conv-chunk2-near-miss", seeded(Chunk, 2, 1, "chunk", None, 8), (x,), opset=17, dynamo=False, **IO)
    yield Case("split-sizes-near-miss", seeded(Chunk, 3, 2, "split-sizes", sizes=[6, 6, 4]), (t,), opset=17,
               dynamo=False, **IO)
    # torch.chunk(x, 4) of 6 makes three pieces of 2: pnnx prints its notice, but ncnn's Slice divides by the
    # three outputs it has, so the pieces are right
    yield Case("chunk4-of-6-near-miss", seeded(Chunk, 4, 2), (x,), opset=17, dynamo=False, **IO)
    yield Case("tensor-split-of-15-near-miss", seeded(Chunk, 3, 2, "tensor-split"), (randn(1, 12, 15, seed=5),),
               opset=17, dynamo=False, **IO)

"""A per-sequence loop cut with torch.split, chunk, tensor_split or slices: a (1, C, H, W) map reshaped inside the
graph to (4, L, C), split along dim 0 into (1, L, C) pieces, a LayerNorm on each piece, the pieces joined back on
dim 0. pnnx 20261020 takes dim 0 of the pieces (the LayerNorm's input) as the batch axis, prints "split along batch
axis 0 is not supported" and writes the split as a Slice on axis -233, which ncnn 1.0.20261020 refuses to load
(`layer load_param 2 split_0 failed`). TorchScript path."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

TS = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)


class Pieces(nn.Module):
    """(1, 16, 8, 8) -> (4, 16, 16), cut along `dim` (split, slices, chunk, tensor_split or unbind), `op` on each
    piece, joined back on `dim` by `join` (cat, or stack of the pieces squeezed), then the map's shape again."""

    def __init__(self, split="split", op="ln", join="cat", dim=0, size=1):
        super().__init__()
        self.split, self.op, self.join, self.dim, self.size = split, op, join, dim, size
        self.norm, self.lin = nn.LayerNorm(16), nn.Linear(16, 16)

    def piece(self, p):
        if self.op == "ln":
            return self.norm(p)
        if self.op == "linear":
            return self.lin(p)
        if self.op == "relu":
            return torch.relu(p)
        return self.lin(self.norm(p))  # "ln-linear"

    def forward(self, x):
        t, d, n = x.reshape(4, -1, 16), self.dim, self.size
        length = (4, 16)[d]  # a Python int: a traced t.shape[d] would become an expression in the graph
        if self.split == "split":
            pieces = list(torch.split(t, n, d))
        elif self.split == "slices":
            pieces = [t[:, i:i + n] if d else t[i:i + n] for i in range(0, length, n)]
        elif self.split == "chunk":
            pieces = list(torch.chunk(t, length // n, d))
        elif self.split == "tensor_split":
            pieces = list(torch.tensor_split(t, length // n, d))
        else:  # "unbind": the workaround's cut, each piece unsqueezed back
            pieces = [p.unsqueeze(d) for p in torch.unbind(t, d)]
        if self.join == "cat":
            y = torch.cat([self.piece(p) for p in pieces], d)
        else:  # "stack": each piece squeezed to 2-D first
            y = torch.stack([self.piece(p).squeeze(d) for p in pieces], d)
        return y.reshape(x.shape)


def cases():
    x = randn(1, 16, 8, 8)
    yield Case("split-layernorm-cat", seeded(Pieces), (x,), **TS)
    yield Case("slices-layernorm-cat", seeded(Pieces, split="slices"), (x,), **TS)
    # Controls: the same split along dim 1; a Linear per piece instead of the LayerNorm
    yield Case("split-dim1-layernorm-cat", seeded(Pieces, dim=1), (x,), trigger=False, **TS)
    yield Case("split-linear-cat", seeded(Pieces, op="linear"), (x,), trigger=False, **TS)
    # Workaround: torch.unbind, each piece unsqueezed, LayerNorm, squeezed, torch.stack(dim=0)
    yield Case("unbind-layernorm-stack", seeded(Pieces, split="unbind", join="stack"), (x,), trigger=False,
               rewrites="split-layernorm-cat", **TS)


def variants():
    x = randn(1, 16, 8, 8, seed=2)
    yield Case("chunk-layernorm-cat", seeded(Pieces, split="chunk"), (x,), **TS)
    yield Case("tensor-split-layernorm-cat", seeded(Pieces, split="tensor_split"), (x,), **TS)
    yield Case("split-layernorm-stack", seeded(Pieces, join="stack"), (x,), **TS)
    yield Case("slices-layernorm-stack", seeded(Pieces, split="slices", join="stack"), (x,), **TS)
    yield Case("split-layernorm-linear-cat", seeded(Pieces, op="ln-linear"), (x,), **TS)
    yield Case("split2-layernorm-cat", seeded(Pieces, size=2), (x,), **TS)
    yield Case("slices-dim1-near-miss", seeded(Pieces, split="slices", dim=1, size=4), (x,), trigger=False, **TS)
    yield Case("split-relu-near-miss", seeded(Pieces, op="relu"), (x,), trigger=False, **TS)

"""A per-sequence loop: a (1, C, H, W) map reshaped inside the graph to (4, L, C), split along dim 0 (unbind,
slices or split), a LayerNorm on each (1, L, C) piece, then torch.cat(dim=0). pnnx 20261020 treats dim 0 of the
LayerNorm's output as its batch axis and writes the cat as `Concat 0=-233` (a concat along the batch axis) of the
2-D blobs ncnn's LayerNorm returns; ncnn 1.0.20261020 returns an empty blob for it, and the next layer dies (SIGFPE,
SIGSEGV) or fails. Seen rebuilding MobileViT (KB233) with its transformer run per sequence. TorchScript path."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import MobileViTAttention, randn, seeded
from kb.export import Case

TS = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)


class PerSequence(nn.Module):
    """(1, 16, 8, 8) -> (4, 16, 16): four sequences of 16 tokens of width 16; `op` on each (1, 16, 16) piece, the
    pieces joined back on dim 0 (`join`), then `tail` and the map's shape again."""

    def __init__(self, op="ln", split="unbind", join="cat", tail="linear"):
        super().__init__()
        self.op, self.split, self.join, self.tail = op, split, join, tail
        self.norm, self.lin, self.out = nn.LayerNorm(16), nn.Linear(16, 16), nn.Linear(16, 16)

    def piece(self, p):  # p: (1, 16, 16)
        if self.op == "ln":
            return self.norm(p)
        if self.op == "linear":
            return self.lin(p)
        return self.lin(self.norm(p))  # "ln-linear"

    def forward(self, x):
        t = x.reshape(4, -1, 16)
        if self.split == "unbind":
            pieces = [p.unsqueeze(0) for p in torch.unbind(t, 0)]
        elif self.split == "slices":
            pieces = [t[i:i + 1] for i in range(4)]
        else:  # "split"
            pieces = list(t.split(1, 0))
        if self.join == "cat":
            y = torch.cat([self.piece(p) for p in pieces], 0)
        else:  # "stack": each piece back to 2-D first (the workaround)
            y = torch.stack([self.piece(p).squeeze(0) for p in pieces], 0)
        if self.tail == "linear":
            y = self.out(y)
        elif self.tail == "relu":
            y = torch.relu(y)
        elif self.tail == "fold":  # MobileViT's fold: view, transpose
            y = y.contiguous().view(1, 4, 16, -1).transpose(1, 3)
        return y.reshape(x.shape)


class MobileViTPerSequence(nn.Module):
    """One MobileViT block (32 channels, width 64, 2x2 patches, 1 transformer layer) whose transformer runs on each
    of the 4 patch-position sequences in turn: unbind, transformer and final LayerNorm per (1, 64, 64) piece,
    torch.cat(dim=0), fold. The form the observation came from."""

    def __init__(self, channels=32, dim=64, heads=4, join="cat"):
        super().__init__()
        self.join = join
        self.local, self.proj_in = nn.Conv2d(channels, channels, 3, 1, 1), nn.Conv2d(channels, dim, 1)
        self.norm1, self.attention = nn.LayerNorm(dim), MobileViTAttention(dim, heads)
        self.ffn = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))
        self.norm, self.proj_out = nn.LayerNorm(dim), nn.Conv2d(dim, channels, 1)

    def layer(self, s):
        s = s + self.attention(self.norm1(s))
        return self.norm(s + self.ffn(s))

    def forward(self, x):
        f = self.proj_in(F.silu(self.local(x)))
        b, c, h, w = f.shape
        u = f.reshape(b * c * h // 2, 2, w // 2, 2).transpose(1, 2)
        u = u.reshape(b, c, h * w // 4, 4).transpose(1, 3).reshape(4, h * w // 4, c)
        if self.join == "cat":
            u = torch.cat([self.layer(p.unsqueeze(0)) for p in torch.unbind(u, 0)], 0)
        else:  # the workaround: each sequence's output squeezed to 2-D, then torch.stack
            u = torch.stack([self.layer(p.unsqueeze(0)).squeeze(0) for p in torch.unbind(u, 0)], 0)
        u = u.contiguous().view(b, 4, h * w // 4, -1).transpose(1, 3)
        f = u.reshape(b * c * h // 2, w // 2, 2, 2).transpose(1, 2).reshape(b, c, h, w)
        return x + self.proj_out(f)


def cases():
    x = randn(1, 16, 8, 8)
    yield Case("unbind-layernorm-cat", seeded(PerSequence), (x,), **TS)
    # Control: a Linear per piece instead of the LayerNorm (pnnx writes Concat 0=0)
    yield Case("unbind-linear-cat", seeded(PerSequence, op="linear"), (x,), trigger=False, **TS)
    # Workaround: each piece's LayerNorm output squeezed to 2-D, then torch.stack(dim=0)
    yield Case("unbind-layernorm-stack", seeded(PerSequence, join="stack"), (x,), trigger=False,
               rewrites="unbind-layernorm-cat", **TS)
    m = randn(1, 32, 16, 16)
    yield Case("mobilevit-per-sequence", seeded(lambda: MobileViTPerSequence().eval()), (m,), **TS)
    yield Case("mobilevit-per-sequence-stack", seeded(lambda: MobileViTPerSequence(join="stack").eval()), (m,),
               trigger=False, rewrites="mobilevit-per-sequence", **TS)


def variants():
    x = randn(1, 16, 8, 8, seed=2)
    yield Case("tail-relu", seeded(PerSequence, tail="relu"), (x,), **TS)
    yield Case("tail-fold", seeded(PerSequence, tail="fold"), (x,), **TS)
    yield Case("tail-none", seeded(PerSequence, tail="none"), (x,), **TS)
    yield Case("layernorm-then-linear", seeded(PerSequence, op="ln-linear"), (x,), **TS)
    yield Case("slices-layernorm-cat", seeded(PerSequence, split="slices"), (x,), **TS)
    yield Case("split-layernorm-cat", seeded(PerSequence, split="split"), (x,), **TS)
    yield Case("linear-cat-near-miss", seeded(PerSequence, op="linear", tail="relu"), (x,), trigger=False, **TS)

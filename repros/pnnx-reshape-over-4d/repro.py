"""KB073: Swin's window partition / reverse (a 6-D view and permute) through pnnx. ncnn blobs have at most four
axes besides the batch: pnnx prints "permute 6-rank tensor is not supported yet!" and writes a reshape ncnn cannot
load, or one that gives wrong values."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case

DIM, WIN = 8, 4  # channels, window size: an 8x8 map has four 4x4 windows


class WindowPartition(nn.Module):
    """A Linear (so the map is computed, as after Swin's LayerNorm), then Swin's window_partition; with
    reverse=True, window_reverse of the windows (times 2) back to the map. `four_d`: the same arithmetic
    written with 4-D reshapes and permutes only, the batch folded into the first axis (the workaround)."""

    def __init__(self, reverse=False, four_d=False):
        super().__init__()
        self.lin = nn.Linear(DIM, DIM)
        self.reverse, self.four_d = reverse, four_d

    def forward(self, x):  # x: (B, H, W, C)
        B, H, W, C = x.shape
        w = WIN
        x = self.lin(x)
        if self.four_d:  # (B*H/w, w, W/w, w*C) -> swap the two middle axes -> windows
            y = x.reshape(B * H // w, w, W // w, w * C).permute(0, 2, 1, 3).reshape(-1, w, w, C)
        else:
            y = x.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w, w, C)
        if not self.reverse:
            return y
        y = y * 2
        if self.four_d:
            return y.reshape(B * H // w, W // w, w, w * C).permute(0, 2, 1, 3).reshape(B, H, W, C)
        return y.view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)


class Attention(nn.Module):
    """timm's ViT attention. `split`: "permute" for qkv.reshape(B, N, 3, h, D).permute(2, 0, 3, 1, 4).unbind(0);
    "chunk" for the workaround: qkv.chunk(3, -1), each reshaped to (B, N, h, D) and permuted (0, 2, 1, 3)."""

    def __init__(self, dim=16, heads=2, split="permute"):
        super().__init__()
        self.qkv, self.proj = nn.Linear(dim, dim * 3), nn.Linear(dim, dim)
        self.heads, self.scale, self.split = heads, (dim // heads) ** -0.5, split

    def forward(self, x):  # x: (B, N, C)
        B, N, C = x.shape
        h, d = self.heads, C // self.heads
        if self.split == "permute":
            q, k, v = self.qkv(x).reshape(B, N, 3, h, d).permute(2, 0, 3, 1, 4).unbind(0)
        else:
            q, k, v = (t.reshape(B, N, h, d).permute(0, 2, 1, 3) for t in self.qkv(x).chunk(3, -1))
        a = ((q * self.scale) @ k.transpose(-2, -1)).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, N, C))


class SwinBlock(nn.Module):
    """A Swin block without the shift: LayerNorm, window partition, window attention, window reverse, residual."""

    def __init__(self, four_d=False):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.attn = Attention(DIM, 2, "chunk" if four_d else "permute")
        self.four_d = four_d

    def forward(self, x):  # x: (B, H, W, C)
        B, H, W, C = x.shape
        w = WIN
        y = self.norm(x)
        if self.four_d:
            y = y.reshape(B * H // w, w, W // w, w * C).permute(0, 2, 1, 3).reshape(-1, w * w, C)
        else:
            y = y.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)
        y = self.attn(y)
        if self.four_d:
            y = y.reshape(B * H // w, W // w, w, w * C).permute(0, 2, 1, 3).reshape(B, H, W, C)
        else:
            y = y.view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
        return x + y


class PatchEmbedPartition(nn.Module):
    """Swin's start: a patch-embedding conv (which gives pnnx a batch axis), channels last, window_partition."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, DIM, 2, 2)
        self.part = WindowPartition()

    def forward(self, x):
        return self.part(self.embed(x).permute(0, 2, 3, 1))


class Permute5dAfterConv(nn.Module):
    """Near miss: a conv, a 5-D view and a permute that moves the batch axis, (2, 0, 1, 3, 4): after a conv pnnx
    knows the batch axis, so the blob has four axes besides it."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 1)

    def forward(self, x):
        y = self.conv(x)
        B, C, H, W = y.shape
        return y.view(B, 3, 4, H, W).permute(2, 0, 1, 3, 4).reshape(B, C, H, W)


class ChannelShuffle(nn.Module):
    """ShuffleNet's channel shuffle after a conv: a 5-D view and transpose(1, 2) with the batch first."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1)

    def forward(self, x):
        y = self.conv(x)
        B, C, H, W = y.shape
        return y.view(B, 2, C // 2, H, W).transpose(1, 2).reshape(B, C, H, W)


def same_weights(make, original):
    m = make()
    m.load_state_dict(original.state_dict())
    return m


def cases():
    torch.manual_seed(0)
    xmap, ximg = torch.randn(1, 8, 8, DIM), torch.randn(1, 3, 6, 6)
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    part = seeded(WindowPartition)
    rev = seeded(lambda: WindowPartition(reverse=True))
    yield Case("window-partition", part, (xmap,), **io)
    yield Case("window-reverse", rev, (xmap,), **io)
    # Workarounds: the same arithmetic with 4-D reshapes and permutes only, the same weights and inputs.
    yield Case("window-partition-4d", same_weights(lambda: WindowPartition(four_d=True), part), (xmap,),
               trigger=False, rewrites="window-partition", **io)
    yield Case("window-reverse-4d", same_weights(lambda: WindowPartition(True, True), rev), (xmap,),
               trigger=False, rewrites="window-reverse", **io)
    # Control: a 5-D view and permute with the batch axis first (ShuffleNet), the same path.
    yield Case("channel-shuffle", seeded(ChannelShuffle), (ximg,), trigger=False, **io)


def variant(name, module, x, opset=17, dynamo=False, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    torch.manual_seed(1)
    xmap, ximg, xbig = torch.randn(1, 8, 8, DIM), torch.randn(1, 3, 6, 6), torch.randn(1, 3, 16, 16)
    dyn = dict(opset=18, dynamo=True, export_kwargs={"external_data": False})
    part = lambda: seeded(WindowPartition)  # noqa: E731
    rev = lambda: seeded(lambda: WindowPartition(reverse=True))  # noqa: E731
    yield variant("partition-opset13", part(), xmap, opset=13)
    yield variant("partition-opset18", part(), xmap, opset=18)
    yield variant("partition-dynamo", part(), xmap, **dyn)
    yield variant("partition-onnxsim", part(), xmap, simplify=True)
    yield variant("reverse-opset17", rev(), xmap)
    yield variant("reverse-dynamo", rev(), xmap, **dyn)
    yield variant("patch-embed-partition", seeded(PatchEmbedPartition), xbig)
    yield variant("swin-block", seeded(SwinBlock), xmap)
    yield variant("swin-block-dynamo", seeded(SwinBlock), xmap, **dyn)
    # Near misses: 4-D only, or 5-D after a conv (pnnx knows the batch axis, four axes remain).
    yield variant("partition-4d-near-miss", seeded(lambda: WindowPartition(four_d=True)), xmap)
    yield variant("reverse-4d-dynamo-near-miss", seeded(lambda: WindowPartition(True, True)), xmap, **dyn)
    yield variant("swin-block-4d-near-miss", seeded(lambda: SwinBlock(four_d=True)), xmap)
    yield variant("channel-shuffle-near-miss", seeded(ChannelShuffle), ximg)
    yield variant("permute-5d-after-conv-near-miss", seeded(Permute5dAfterConv), ximg)

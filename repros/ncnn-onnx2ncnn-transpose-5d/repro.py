"""known-bug: Tencent/ncnn#5314 -- onnx2ncnn prints "Unsupported transpose type !" for a 5-D permute such as the
attention qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4) and for a 4-D permute that moves axis 0, and writes an
identity Permute; the 5-D permutes it does accept are mapped to the wrong ncnn order types."""

import torch
from torch import nn

from kb.export import Case

B, N, C, HEADS = 1, 5, 16, 2
D = C // HEADS


class Attention(nn.Module):
    """timm's ViT attention: one qkv Linear, reshape to 5-D, permute(2, 0, 3, 1, 4), index q, k, v."""

    def __init__(self):
        super().__init__()
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)

    def forward(self, x):
        qkv = self.qkv(x).reshape(B, N, 3, HEADS, D).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = ((q @ k.transpose(-2, -1)) * D ** -0.5).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, N, C))


class SplitAttention(nn.Module):
    """The workaround: q, k and v as three Linear layers holding the qkv Linear's weight rows, so every permute
    is 4-D with the batch axis first: (0, 2, 1, 3)."""

    def __init__(self, attn: Attention):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(C, C) for _ in range(3))
        with torch.no_grad():
            for i, fc in enumerate((self.q, self.k, self.v)):
                fc.weight.copy_(attn.qkv.weight[i * C:(i + 1) * C])
                fc.bias.copy_(attn.qkv.bias[i * C:(i + 1) * C])
        self.proj = attn.proj

    def heads(self, t):
        return t.reshape(B, N, HEADS, D).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        a = ((q @ k.transpose(-2, -1)) * D ** -0.5).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, N, C))


class Permute(nn.Module):
    """The smallest case: one permute, then an add so the output is not the input blob."""

    def __init__(self, *perm):
        super().__init__()
        self.perm = perm

    def forward(self, x):
        return x.permute(*self.perm) + 0.5


class ChannelShuffle(nn.Module):
    """ShuffleNet's channel shuffle with constant sizes: view(1, groups, C // groups, H, W), transpose(1, 2),
    reshape(1, -1, H, W); onnx2ncnn fuses the Reshape, Transpose(0, 2, 1, 3, 4), Reshape into a ShuffleChannel."""

    def __init__(self, groups, channels, h, w):
        super().__init__()
        self.shape = (1, groups, channels // groups, h, w)

    def forward(self, x):
        h, w = self.shape[3], self.shape[4]
        return x.view(*self.shape).transpose(1, 2).reshape(1, -1, h, w) + 0.5


def attention():
    torch.manual_seed(0)
    return Attention()


def tokens():
    torch.manual_seed(0)
    return torch.randn(B, N, C)


def cases():
    io = dict(input_names=["in0"], output_names=["out0"])
    attn = attention()
    yield Case("attention", attn, (tokens(),), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same weights as separate q, k, v Linear layers, fed the same tokens.
    yield Case("attention-split-qkv", SplitAttention(attn), (tokens(),), opset=13, dynamo=False, trigger=False,
               rewrites="attention", **io)
    torch.manual_seed(0)
    yield Case("permute-5d", Permute(2, 0, 3, 1, 4), (torch.randn(1, 2, 3, 4, 5),), opset=13, dynamo=False, **io)
    # Control: a 4-D permute with the batch axis first, which onnx2ncnn maps to an ncnn Permute.
    torch.manual_seed(0)
    yield Case("permute-4d-heads", Permute(0, 2, 1, 3), (torch.randn(1, 2, 3, 4),), opset=13, dynamo=False,
               trigger=False, **io)


def variant(name, module, shape, opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    return Case(name, module, (torch.randn(*shape),), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    t = (B, N, C)
    yield variant("attention-opset13", attention(), t)
    yield variant("attention-opset17", attention(), t, opset=17)
    yield variant("attention-dynamo", attention(), t, opset=18, dynamo=True, export_kwargs={"external_data": False})
    yield variant("attention-onnxsim", attention(), t, simplify=True)
    yield variant("permute-5d-swap-inner", Permute(0, 1, 3, 2, 4), (1, 2, 3, 4, 5))
    yield variant("permute-5d-accepted", Permute(0, 2, 1, 3, 4), (1, 2, 3, 4, 5))
    yield variant("permute-4d-batch-moved", Permute(2, 0, 1, 3), (1, 2, 3, 4))
    yield variant("permute-4d-nhwc-near-miss", Permute(0, 2, 3, 1), (1, 2, 3, 4))
    yield variant("permute-4d-heads-near-miss", Permute(0, 2, 1, 3), (1, 2, 3, 4))
    yield variant("split-qkv-near-miss", SplitAttention(attention()), t)
    yield variant("channel-shuffle-near-miss", ChannelShuffle(2, 8, 3, 3), (1, 8, 3, 3))

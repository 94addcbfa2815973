"""KB031: onnx2ncnn aborts (google::protobuf::FatalException) on an Add / Mul / Max / Min / Pow whose FIRST
input is a 0-d constant: torch.onnx.export(dynamo=True) writes GELU that way at opset 18 and 19 (Mul(0.5, x))."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

D, HID = 16, 32  # token width, MLP hidden width
TOKENS = (1, 5, D)  # (batch, tokens, channels): what a ViT block's MLP sees
IMAGE = (1, 3, 8, 8)
INLINE = {"external_data": False}  # torch 2.13 writes weights over 256 bytes to <file>.data unless told not to


class Mlp(nn.Module):
    """The MLP of a ViT / Swin block: Linear -> activation -> Linear on (batch, tokens, channels)."""

    def __init__(self, act="gelu"):
        super().__init__()
        self.fc1, self.fc2, self.act = nn.Linear(D, HID), nn.Linear(HID, D), act

    def forward(self, x):
        y = self.fc1(x)
        if self.act == "gelu":
            y = F.gelu(y)
        elif self.act == "gelu-tanh":  # BERT / GPT-2 "gelu_new"
            y = F.gelu(y, approximate="tanh")
        elif self.act == "silu":
            y = F.silu(y)
        return self.fc2(y)


class ConvNeXtBlock(nn.Module):
    """ConvNeXt: depthwise 7x7 conv, LayerNorm over channels, MLP with GELU, residual."""

    def __init__(self, c=8):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.ln = nn.LayerNorm(c)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

    def forward(self, x):
        y = self.ln(self.dw(x).permute(0, 2, 3, 1))
        return x + self.fc2(F.gelu(self.fc1(y))).permute(0, 3, 1, 2)


class ViTBlock(nn.Module):
    """A pre-norm transformer block: LayerNorm, multi-head attention, LayerNorm, GELU MLP."""

    def __init__(self, heads=2):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn = nn.MultiheadAttention(D, heads, batch_first=True)
        self.mlp = Mlp()
        for p in self.attn.parameters():  # no all-zero biases, as in a trained model
            nn.init.normal_(p, std=0.2)

    def forward(self, x):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class WindowAttention(nn.Module):
    """Swin-style window attention on (batch, H, W, C), scaled by C ** -0.5 with C read from the input's shape."""

    def __init__(self, w=2):
        super().__init__()
        self.w, self.ln = w, nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)

    def forward(self, x):
        B, H, W, C = x.shape
        w = self.w
        y = self.ln(x).view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)
        q, k, v = self.qkv(y).reshape(-1, w * w, 3, C).permute(2, 0, 1, 3).unbind(0)
        a = (q @ k.transpose(-2, -1) * C ** -0.5).softmax(-1) @ v
        a = self.proj(a).view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, W, C)
        return x + a


class Rescale(nn.Module):
    """A learnable scale written first, `x + gamma * conv(x)`: a 0-d gamma (ReZero, SAGAN's attention
    gamma) or, as a near miss, one per channel (ConvNeXt's layer scale, shape (C, 1, 1))."""

    def __init__(self, per_channel=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.gamma = nn.Parameter(torch.full((3, 1, 1), 0.25) if per_channel else torch.tensor(0.25))

    def forward(self, x):
        return x + self.gamma * self.conv(x)


class OneMinus(nn.Module):
    """`1 - sigmoid(conv(x))`: a scalar first operand of a Sub, which onnx2ncnn handles (as RSub)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return 1 - torch.sigmoid(self.conv(x))


class GRUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, D, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


class ConvNet(nn.Module):
    """conv -> BN -> ReLU -> conv: no scalar operand at all."""

    def __init__(self):
        super().__init__()
        self.c1, self.bn, self.c2 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.c2(torch.relu(self.bn(self.c1(x))))


def case(name, module, shape, opset=18, dynamo=True, inline=True, **kw):
    torch.manual_seed(0)
    x = torch.randn(*shape)
    if dynamo and inline:
        kw["export_kwargs"] = {**INLINE, **kw.get("export_kwargs", {})}
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def cases():
    torch.manual_seed(0)
    mlp = Mlp()
    yield case("mlp-gelu-dynamo", mlp, TOKENS, torchscript=True)  # dynamo=True, opset 18
    yield case("scale-first-torchscript", Rescale(), IMAGE, opset=17, dynamo=False)  # not only dynamo
    # The workarounds: the same MLP (same weights, same input) exported with the TorchScript-based exporter
    # at opset 17, or with dynamo=True at opset 20 (one Gelu node).
    yield case("mlp-gelu-opset17", mlp, TOKENS, opset=17, dynamo=False, trigger=False, rewrites="mlp-gelu-dynamo")
    yield case("mlp-gelu-dynamo-opset20", mlp, TOKENS, opset=20, trigger=False, rewrites="mlp-gelu-dynamo")


def variants():
    torch.manual_seed(0)
    # affected
    yield case("gelu-dynamo-opset19", Mlp(), TOKENS, opset=19)
    yield case("gelu-dynamo-onnxsim", Mlp(), TOKENS, simplify=True)
    yield case("gelu-tanh-dynamo", Mlp("gelu-tanh"), TOKENS)
    yield case("gelu-tanh-torchscript", Mlp("gelu-tanh"), TOKENS, opset=17, dynamo=False)
    yield case("convnext-dynamo", ConvNeXtBlock(), (1, 8, 8, 8))
    yield case("vit-dynamo", ViTBlock(), TOKENS)
    yield case("swin-torchscript", WindowAttention(), (1, 4, 4, D), opset=17, dynamo=False)
    yield case("scale-first-dynamo", Rescale(), IMAGE)
    # failing in other ways
    yield case("convnext-torchscript", ConvNeXtBlock(), (1, 8, 8, 8), opset=17, dynamo=False)
    yield case("swin-dynamo", WindowAttention(), (1, 4, 4, D))
    yield case("gru-dynamo", GRUNet(), (1, 6, 8))
    yield case("convnet-default", ConvNet(), IMAGE, opset=20, inline=False)  # torch.onnx.export(m, x, f) as is
    # near misses
    yield case("gelu-torchscript-opset18", Mlp(), TOKENS, opset=18, dynamo=False)
    yield case("gelu-dynamo-opset20", Mlp(), TOKENS, opset=20)
    yield case("silu-dynamo", Mlp("silu"), TOKENS)
    yield case("scale-per-channel-dynamo", Rescale(per_channel=True), IMAGE)
    yield case("one-minus-dynamo", OneMinus(), IMAGE)
    yield case("convnet-dynamo", ConvNet(), IMAGE)
    yield case("convnet-opset20-inline", ConvNet(), IMAGE, opset=20)

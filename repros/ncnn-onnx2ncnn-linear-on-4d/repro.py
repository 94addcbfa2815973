"""known-bug: Tencent/ncnn#2613 -- a Linear applied to a channels-last 4-D tensor (ConvNeXt's MLP) becomes an ncnn InnerProduct,
which flattens the whole blob instead of working on the last axis."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case

C, HID, H = 8, 16, 6  # channels, MLP hidden size, height and width


class ChannelsLastMLP(nn.Module):
    """ConvNeXt's block without its LayerNorm: depthwise conv, permute to NHWC, Linear-GELU-Linear, back."""

    def __init__(self, act="gelu", layers=2, residual=True, permute_back=True, scale=False, norm=False):
        super().__init__()
        self.norm = norm  # ConvNeXt's channels-last LayerNorm, written without pow: (x - u) * (x - u)
        self.dw = nn.Conv2d(C, C, 3, padding=1, groups=C)
        dims = [C, HID, C] if layers == 2 else [C, C]
        self.fcs = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
        self.act, self.residual, self.permute_back = act, residual, permute_back
        self.gamma = nn.Parameter(torch.full((C,), 0.5)) if scale else None  # ConvNeXt's layer scale

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        if self.act == "relu-first":  # an elementwise op between the permute and the Linear
            y = torch.relu(y)
        if self.norm:
            d = y - y.mean(-1, keepdim=True)
            y = d / torch.sqrt((d * d).mean(-1, keepdim=True) + 1e-6)
        for i, fc in enumerate(self.fcs):
            y = fc(y)
            if i < len(self.fcs) - 1:
                y = F.gelu(y)
        if self.gamma is not None:
            y = self.gamma * y
        if not self.permute_back:
            return y
        y = y.permute(0, 3, 1, 2)
        return x + y if self.residual else y


class ConvMLP(nn.Module):
    """The workaround: the same MLP as 1x1 convolutions on NCHW, with the Linear weights reshaped."""

    def __init__(self, mlp: ChannelsLastMLP):
        super().__init__()
        self.dw = mlp.dw
        self.convs = nn.ModuleList()
        for fc in mlp.fcs:
            conv = nn.Conv2d(fc.in_features, fc.out_features, 1)
            with torch.no_grad():
                conv.weight.copy_(fc.weight[:, :, None, None])
                conv.bias.copy_(fc.bias)
            self.convs.append(conv)

    def forward(self, x):
        y = self.dw(x)
        for i, conv in enumerate(self.convs):
            y = conv(y)
            if i < len(self.convs) - 1:
                y = F.gelu(y)
        return x + y


class Tokens(nn.Module):
    """Near miss: a Linear on a 3-D (batch, tokens, channels) tensor, as in a transformer."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(C, HID), nn.Linear(HID, C)

    def forward(self, x):
        t = x.reshape(1, C, H * H).transpose(1, 2)
        return self.fc2(F.gelu(self.fc1(t)))


class Head(nn.Module):
    """Near miss: global pooling, flatten, Linear: the classifier head every CNN has."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(C, 5)

    def forward(self, x):
        return self.fc(x.mean((2, 3)))


def fixed_linear():
    """A C -> C Linear with fixed, readable weights: w[i, j] = ((i*C + j) % 7 - 3) / 10."""
    fc = nn.Linear(C, C)
    with torch.no_grad():
        fc.weight.copy_(((torch.arange(C * C) % 7 - 3) / 10).reshape(C, C))
        fc.bias.copy_(torch.arange(C) / 10)
    return fc


class PermuteLinear(nn.Module):
    """The smallest case: permute to channels last, one Linear (onnx2ncnn writes a Permute and an InnerProduct)."""

    def __init__(self):
        super().__init__()
        self.fc = fixed_linear()

    def forward(self, x):
        return self.fc(x.permute(0, 2, 3, 1))


def mlp(**kw):
    torch.manual_seed(0)
    return ChannelsLastMLP(**kw)


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, C, H, H)
    io = dict(input_names=["in0"], output_names=["out0"])
    block = mlp()
    yield Case("convnext-mlp", block, (x,), opset=13, dynamo=False, torchscript=True, **io)
    # The workaround: the same block's weights as 1x1 convolutions, fed the same input.
    yield Case("conv1x1-mlp", ConvMLP(block), (x,), opset=13, dynamo=False, trigger=False, rewrites="convnext-mlp",
               **io)
    yield Case("permute-linear", PermuteLinear(), (x,), opset=13, dynamo=False, **io)


def variant(name, module, opset=13, dynamo=False, **kw):
    torch.manual_seed(1)
    x = torch.randn(1, C, H, H)
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=dynamo, **kw)


def variants():
    yield variant("mlp-opset13", mlp())
    yield variant("mlp-opset17", mlp(), opset=17)
    yield variant("layer-scale", mlp(scale=True))
    yield variant("single-linear-dynamo", mlp(layers=1, residual=False), opset=18, dynamo=True,
                  export_kwargs={"external_data": False})
    # mlp-onnxsim is left out: ncnn reads past the flattened blob there, so NaN or wrong values vary by run.
    yield variant("single-linear", mlp(layers=1, residual=False))
    yield variant("relu-before-linear", mlp(act="relu-first"))
    yield variant("layernorm-before-linear", mlp(norm=True))
    yield variant("no-permute-back", mlp(layers=1, permute_back=False))
    yield variant("tokens-near-miss", Tokens())
    yield variant("head-near-miss", Head())
    yield variant("conv1x1-near-miss", ConvMLP(mlp()))

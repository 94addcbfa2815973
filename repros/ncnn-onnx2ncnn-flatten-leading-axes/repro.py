"""KB108: torch.flatten(x, 0, d) that flattens the leading axes up to the second-to-last, (1, T, F) -> (T, F), is
exported by the TorchScript exporter as one ONNX Flatten with axis = d + 1 (2 or 3, not 1). onnx2ncnn writes every
Flatten as ncnn's Flatten layer, which makes a 1-D blob of all the elements; for an axis other than 1 it only prints
"Unsupported Flatten axis N!". The output has one axis instead of two, and an op after it (Softmax over the last
axis, a per-row nn.Linear) works on the wrong layout."""

import torch
from torch import nn

from kb.blocks import Fc, Fn, randn, seeded
from kb.export import Case

N, C = 6, 8  # tokens, channels
IO = dict(input_names=["in0"], output_names=["out0"])
TS = dict(dynamo=False, **IO)


class Tokens(nn.Module):
    """(1, N, C) tokens flattened to (N, C) rows, torch.flatten(x, 0, 1): ONNX Flatten(axis=2)."""

    def forward(self, x):
        return torch.flatten(x, 0, 1)


class TokensLinear(nn.Module):
    """A per-token classifier written on rows: flatten(0, 1), then nn.Linear."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(C, 4)

    def forward(self, x):
        return self.fc(torch.flatten(x, 0, 1))


class TokensSoftmax(nn.Module):
    """flatten(0, 1), then a softmax over each row."""

    def forward(self, x):
        return torch.softmax(torch.flatten(x, 0, 1), dim=-1)


class ConvRows(nn.Module):
    """A conv feature map (1, C, H, W) flattened to (C * H, W) rows, torch.flatten(y, 0, 2): Flatten(axis=3)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.flatten(self.conv(x), 0, 2)


class FlattenAll(nn.Module):
    """Near miss: torch.flatten(x) from axis 0 to the end: Reshape(-1), not Flatten."""

    def forward(self, x):
        return torch.flatten(x)


def tokens(seed=1):
    return (randn(1, N, C, seed=seed),)


def cases():
    yield Case("tokens-flatten", Tokens(), tokens(), opset=13, torchscript=True, **TS)
    tl = seeded(TokensLinear)
    yield Case("tokens-linear", tl, tokens(), opset=13, torchscript=True, **TS)
    # Workaround, fed the same tensor: the same nn.Linear on the unflattened (1, N, C) tokens.
    yield Case("linear-3d", Fc(None, fc=tl.fc), tokens(), opset=13, trigger=False, rewrites="tokens-linear", **TS)
    # Control on the same path: nn.Flatten() (start_dim=1) on a 4-D map: Flatten(axis=1).
    yield Case("flatten-axis1", nn.Flatten(), (randn(1, 3, 4, 5, seed=2),), opset=13, trigger=False, **TS)


def variants():
    x = tokens(3)
    yield Case("tokens-opset11", Tokens(), x, opset=11, **TS)
    yield Case("tokens-opset17", Tokens(), x, opset=17, **TS)
    yield Case("tokens-onnxsim", Tokens(), x, opset=13, simplify=True, **TS)
    yield Case("tokens-linear-opset17", seeded(TokensLinear), x, opset=17, **TS)
    yield Case("tokens-softmax", TokensSoftmax(), x, opset=13, **TS)
    yield Case("conv-rows-axis3", seeded(ConvRows), (randn(1, 3, 5, 6, seed=3),), opset=13, **TS)
    yield Case("flatten-0-m2-4d", Fn(lambda t: torch.flatten(t, 0, -2)), (randn(1, 3, 4, 5, seed=3),), opset=13, **TS)
    yield Case("conv-rows-onnxsim", seeded(ConvRows), (randn(1, 3, 5, 6, seed=3),), opset=13, simplify=True, **TS)
    # Near misses: Flatten(axis=1) (nn.Flatten, flatten(x, 1)), and the whole tensor flattened.
    yield Case("nn-flatten-near-miss", nn.Flatten(), (randn(1, 3, 4, 5, seed=3),), opset=13, **TS)
    yield Case("flatten-1-onnxsim-near-miss", Fn(lambda t: torch.flatten(t, 1)), (randn(1, 3, 4, 5, seed=3),),
               opset=13, simplify=True, **TS)
    yield Case("flatten-all-near-miss", FlattenAll(), x, opset=13, simplify=True, **TS)

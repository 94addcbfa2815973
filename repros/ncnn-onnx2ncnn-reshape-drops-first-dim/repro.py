"""known-bug: onnx2ncnn writes a Reshape's target without its first entry, which it takes for the batch: a
reshape to (tokens, channels) or (2, 3, 4) of a batch-1 tensor loses that axis in ncnn (wrong shape or values)."""

import torch
from torch import nn

from kb.blocks import Fc, randn
from kb.export import Case

N, C = 6, 8  # tokens, channels


class Reshape(nn.Module):
    def __init__(self, *shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return x.reshape(*self.shape)


class TokensLinear(nn.Module):
    """A Linear over tokens flattened to 2-D: (1, N, C) -> (N, C) -> Linear. (Reshaping the result back to 3-D
    makes ncnn read past the end of a blob: values that change from run to run, so not measured here.)"""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(C, C)

    def forward(self, x):
        return self.fc(x.reshape(N, C))


class Mlp(nn.Module):
    """A transformer MLP on tokens flattened to (N, C): fc1, ReLU, fc2."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(C, 2 * C), nn.Linear(2 * C, C)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.reshape(N, C))))


class MlpTokens(nn.Module):
    """SwinIR's token MLP, Linear(32, 64), ReLU, Linear(64, 32), applied to (1, 16, 32) tokens as they are."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 32)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Flatten(nn.Module):
    """Near miss: torch.flatten(x, 1), exported as Flatten."""

    def forward(self, x):
        return torch.flatten(x, 1)


class HeadSplit(nn.Module):
    """Near miss: the multi-head split, reshape(1, N, heads, head_dim), keeps a leading 1."""

    def forward(self, x):
        return x.reshape(1, N, 2, C // 2)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    torch.manual_seed(0)
    tl = TokensLinear()
    tokens = randn(1, N, C)
    yield Case("tokens-linear", tl, (tokens,), opset=13, dynamo=False, torchscript=True, **IO)
    x = randn(1, 6, 4, seed=2)
    yield Case("reshape-3d", Reshape(2, 3, 4), (x,), opset=13, dynamo=False, **IO)
    # Workarounds: the same Linear on the 3-D tokens; the reshape with a leading 1 kept.
    yield Case("linear-3d", Fc(None, fc=tl.fc), (tokens,), opset=13, dynamo=False, trigger=False,
               rewrites="tokens-linear", **IO)
    yield Case("keep-leading-1", Reshape(1, 2, 3, 4), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="reshape-3d", **IO)
    # Control on the same path: the multi-head split, a reshape that keeps the leading 1.
    yield Case("head-split", HeadSplit(), (randn(1, N, C, seed=3),), opset=13, dynamo=False, trigger=False, **IO)


def variants():
    torch.manual_seed(10)
    yield Case("tokens-linear-opset17", TokensLinear(), (randn(1, N, C, seed=11),), opset=17, dynamo=False, **IO)
    torch.manual_seed(10)
    yield Case("tokens-linear-dynamo", TokensLinear(), (randn(1, N, C, seed=11),), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO)  # inline weights: not ncnn-onnx2ncnn-external-data
    torch.manual_seed(10)
    yield Case("tokens-linear-onnxsim", TokensLinear(), (randn(1, N, C, seed=11),), opset=13, dynamo=False,
               simplify=True, **IO)
    torch.manual_seed(10)
    yield Case("mlp", Mlp(), (randn(1, N, C, seed=11),), opset=13, dynamo=False, **IO)
    yield Case("to-2d", Reshape(4, 5), (randn(1, 4, 5, seed=12),), opset=13, dynamo=False, **IO)
    yield Case("to-3d", Reshape(2, 3, 4), (randn(1, 6, 4, seed=12),), opset=17, dynamo=False, **IO)
    yield Case("4d-to-2d", Reshape(6, 16), (randn(1, 6, 4, 4, seed=12),), opset=13, dynamo=False, **IO)
    yield Case("4d-to-4d", Reshape(2, 3, 4, 4), (randn(1, 6, 4, 4, seed=12),), opset=13, dynamo=False, **IO)
    # onnx-simplifier turns nn.Linear on 3-D tokens (MatMul + Add) into Reshape [-1, C], Gemm (transB=0), Reshape
    # back: the shape comes out right, the values do not. (With 16 x 32 tokens the Gemm's misread is repeatable on
    # an AVX-512 CPU; a single Linear(8, 8) on 6 tokens reads past its input, values that change from run to run.)
    torch.manual_seed(10)
    yield Case("mlp-3d-onnxsim", MlpTokens(), (randn(1, 16, 32, seed=11),), opset=13, dynamo=False,
               simplify=True, **IO)
    # Near misses: targets that keep a leading 1; torch.flatten(x, 1) (a Flatten, no Reshape); nn.Linear on
    # 3-D tokens (MatMul + Add, no Reshape).
    yield Case("keep-1-near-miss", Reshape(1, 2, 3, 4), (randn(1, 6, 4, seed=12),), opset=13, dynamo=False, **IO)
    yield Case("head-split-near-miss", HeadSplit(), (randn(1, N, C, seed=12),), opset=13, dynamo=False, **IO)
    yield Case("flatten-near-miss", Flatten(), (randn(1, 4, 5, seed=12),), opset=13, dynamo=False, **IO)
    torch.manual_seed(10)
    yield Case("linear-3d-near-miss", Fc(C, C), (randn(1, N, C, seed=11),), opset=13, dynamo=False, **IO)

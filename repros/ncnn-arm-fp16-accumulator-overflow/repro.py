"""KB187: on ncnn's ARM CPU path with fp16 arithmetic (ARMv8.2: asimdhp, ncnn's default there), a convolution or an
inner product adds its products up in fp16. A dot product whose running sum passes 65504 on the way, even though its
inputs, weights and result are all ordinary fp16 numbers, becomes inf: the output is inf or NaN. Short of overflow,
the same running sum rounds to fp16's coarse steps at that size (32 between 32768 and 65504), so a result much
smaller than its partial sums is off by far more than fp16's usual precision.

The models: 512 input features of about 300 (multiples of 0.25, which fp16 stores exactly, so that fp16 storage
alone loses nothing) into weights of +1 for the first 256 features and -1 for the rest: the running sum climbs to
about 76,800 before the second half brings it back to results under 56. Not KB076: there a *stored* value passes
65504, and turning only fp16 arithmetic off does not help."""

import torch
from torch import nn

from kb.export import Case

N, OFFSET = 512, 300.0
IO = dict(input_names=["in0"], output_names=["out0"])


def split_signs(out_features, n=N, alternate=False):
    """Weights of +1 and -1 only: each row +1 on its first half of inputs and -1 on the second (the running sum of
    an input of constant sign climbs through the first half), or alternating +1, -1 along the inputs
    (`alternate`: the running sum stays under two inputs' worth). Rows alternate in sign, so outputs differ."""
    w = torch.ones(out_features, n)
    if alternate:
        w[:, 1::2] = -1
    else:
        w[:, n // 2:] = -1
    w[1::2] *= -1
    return w


class Conv1x1(nn.Module):
    """A 1x1 convolution of `n` channels to 16, no bias, with split_signs weights."""

    def __init__(self, n=N, alternate=False, out_channels=16):
        super().__init__()
        self.conv = nn.Conv2d(n, out_channels, 1, bias=False)
        with torch.no_grad():
            self.conv.weight.copy_(split_signs(out_channels, n, alternate).view(out_channels, n, 1, 1))

    def forward(self, x):
        return self.conv(x)


class Conv1x1Centred(Conv1x1):
    """The workaround: the same convolution of the input minus its offset, with the offset's part, W @ (300, ...,
    300), added back as a bias (here 0, since each row's weights sum to 0): the same function, the same weights."""

    def __init__(self, offset=OFFSET, **kw):
        super().__init__(**kw)
        self.offset = offset
        self.register_buffer("folded", self.conv.weight.sum((1, 2, 3)).view(1, -1, 1, 1) * offset)

    def forward(self, x):
        return self.conv(x - self.offset) + self.folded


class Conv1d(nn.Module):
    """A 1x1 Conv1d over a sequence (1, 512, L), the same weights."""

    def __init__(self, n=N, out_channels=16):
        super().__init__()
        self.conv = nn.Conv1d(n, out_channels, 1, bias=False)
        with torch.no_grad():
            self.conv.weight.copy_(split_signs(out_channels, n).view(out_channels, n, 1))

    def forward(self, x):
        return self.conv(x)


class Linear(nn.Module):
    """nn.Linear(512, 16) on tokens (T, 512) or (1, T, 512), or a single row (1, 512), the same weights, no bias."""

    def __init__(self, n=N, out_features=16):
        super().__init__()
        self.fc = nn.Linear(n, out_features, bias=False)
        with torch.no_grad():
            self.fc.weight.copy_(split_signs(out_features, n))

    def forward(self, x):
        return self.fc(x)


class GlobalPool(nn.Module):
    """The mean over each channel's 512 positions (a global average pool): a sum of 512 values of about 300."""

    def forward(self, x):
        return nn.functional.adaptive_avg_pool2d(x, 1)


def offset_input(*shape, offset=OFFSET, axis=1, seed=1):
    """Features of about `offset`: offset + N(0, 1) rounded to a multiple of 0.25 (exact in fp16 up to 512)."""
    torch.manual_seed(seed)
    return (offset + torch.round(torch.randn(*shape) * 4) / 4,)


def cases():
    # The 1x1 convolution, traced for pnnx and exported at opset 11 for onnx2ncnn.
    yield Case("conv1x1", Conv1x1(), offset_input(1, N, 4, 8), opset=11, dynamo=False, torchscript=True, **IO)
    # nn.Linear over 50 tokens of 512 features, as a (50, 512) matrix (pnnx: one Gemm layer, which the releases from
    # 1.0.20230223 load; from (1, 50, 512) pnnx 20261020 adds Reshape layers that releases before 1.0.20250428 reject).
    yield Case("linear-tokens", Linear(), offset_input(50, N), opset=11, dynamo=False, torchscript=True, **IO)
    # Near miss: the same sizes, weights alternating +1, -1 along the inputs: the running sum stays under 600.
    yield Case("conv1x1-alternating", Conv1x1(alternate=True), offset_input(1, N, 4, 8), opset=11, dynamo=False,
               torchscript=True, trigger=False, **IO)
    # The input divided by 256 (what folding a scale into the layer before would feed): no inf, the rounding stays.
    yield Case("conv1x1-scaled-down", Conv1x1(), (offset_input(1, N, 4, 8)[0] / 256,), opset=11, dynamo=False,
               torchscript=True, **IO)
    # Workaround: subtract the offset before the convolution and fold its part into the bias.
    yield Case("conv1x1-centred", Conv1x1Centred(), offset_input(1, N, 4, 8), opset=11, dynamo=False,
               torchscript=True, trigger=False, rewrites="conv1x1", **IO)


def variants():
    # Names ending in -onnx2ncnn are converted by onnx2ncnn (opset 11), the rest by pnnx (from TorchScript, or from
    # the ONNX export for -opset17). All run on an emulated Cortex-A76 with ncnn's defaults.
    yield Case("conv1x1-onnx2ncnn", Conv1x1(), offset_input(1, N, 4, 8), opset=11, dynamo=False, **IO)
    yield Case("conv1x1-pnnx", Conv1x1(), offset_input(1, N, 4, 8), opset=11, dynamo=False, torchscript=True, **IO)
    yield Case("conv1x1-opset17", Conv1x1(), offset_input(1, N, 4, 8), opset=17, dynamo=False, **IO)
    yield Case("conv1d-pnnx", Conv1d(), offset_input(1, N, 16), opset=11, dynamo=False, torchscript=True, **IO)
    yield Case("linear-tokens-pnnx", Linear(), offset_input(50, N), opset=11, dynamo=False, torchscript=True,
               **IO)
    yield Case("linear-tokens-onnx2ncnn", Linear(), offset_input(1, 50, N), opset=11, dynamo=False, **IO)
    yield Case("linear-row-pnnx", Linear(), offset_input(1, N), opset=11, dynamo=False, torchscript=True, **IO)
    # In range but rounded: features of about 200 (the running sum peaks at 51,200), and 256 channels of about 300
    # (38,400): no inf, the result is off by the running sum's fp16 steps.
    yield Case("conv1x1-offset-200-pnnx", Conv1x1(), offset_input(1, N, 4, 8, offset=200.0), opset=11, dynamo=False,
               torchscript=True, **IO)
    yield Case("conv1x1-256-channels-pnnx", Conv1x1(256), offset_input(1, 256, 4, 8), opset=11, dynamo=False,
               torchscript=True, **IO)
    # Near misses: alternating weights (running sum under 600), and centred features (offset 0: N(0, 1)).
    yield Case("conv1x1-alternating-pnnx", Conv1x1(alternate=True), offset_input(1, N, 4, 8), opset=11, dynamo=False,
               torchscript=True, **IO)
    yield Case("conv1x1-centred-input-pnnx", Conv1x1(), offset_input(1, N, 4, 8, offset=0.0), opset=11, dynamo=False,
               torchscript=True, **IO)
    # Near miss: a global average pool of 16 channels of 16x32 values of about 300 (the sum reaches 153,600), which
    # ncnn sums in fp32 (Tencent/ncnn#3708); onnx2ncnn writes one Pooling layer.
    yield Case("global-pool-onnx2ncnn", GlobalPool(), offset_input(1, 16, 16, 32), opset=11, dynamo=False, **IO)

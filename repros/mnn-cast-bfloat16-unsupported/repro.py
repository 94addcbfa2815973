"""KB194: a Cast to bfloat16 (x.bfloat16()), converted to MNN."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case


def bf16_round(t):
    """float32 -> nearest bfloat16 value, in float32 arithmetic (Veltkamp's split, 2**16 + 1): no Cast. Exact for
    magnitudes below about 5e33 (where t * 65537 stays finite)."""
    s = t * 65537.0
    return s - (s - t)


class ConvBf16(nn.Module):
    """A convolution whose activations are stored in bfloat16 and read back, as a mixed-precision model does."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x).bfloat16().float())


def cases():
    x = randn(2, 8) * 100
    # ONNX has bfloat16 from opset 13: no opset-11 way.
    yield Case("bf16-roundtrip", Fn(lambda t: t.bfloat16().float()), (x,), dynamo=False,
               ways=["opset15", "opset17", "opset18", "dynamo", "opset17-onnxsim"])
    yield Case("rounded-in-float32", Fn(bf16_round), (x,), dynamo=False, trigger=False, rewrites="bf16-roundtrip")


def variants():
    yield Case("to-bfloat16", Fn(lambda t: t.to(torch.bfloat16).to(torch.float32)), (randn(2, 8) * 100,),
               dynamo=False)
    yield Case("conv-bf16", seeded(ConvBf16), (randn(1, 3, 8, 8),), dynamo=False)
    yield Case("bf16-arithmetic", Fn(lambda t: (t.bfloat16() * 3).float()), (randn(2, 8) * 100,), dynamo=False)
    # Near misses: a round trip through float64 or int32, which MNN runs.
    yield Case("double-near-miss", Fn(lambda t: t.double().float()), (randn(2, 8) * 100,), dynamo=False)
    yield Case("int-near-miss", Fn(lambda t: t.int().float()), (randn(2, 8) * 100,), dynamo=False)

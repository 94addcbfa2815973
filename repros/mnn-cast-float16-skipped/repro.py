"""KB193: a Cast to float16 and back (x.half().float()), converted to MNN."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case


def fp16_round(t):
    """float32 -> nearest float16 value, in float32 arithmetic (Veltkamp's split, 2**13 + 1): no Cast. Exact for
    values in float16's normal range (about 6.1e-05 to 65504)."""
    s = t * 8193.0
    return s - (s - t)


class ConvHalf(nn.Module):
    """A convolution whose activations are stored in half precision and read back, as a mixed-precision model does."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x).half().float() * 50)


def cases():
    x = randn(2, 8) * 100
    yield Case("half-roundtrip", Fn(lambda t: t.half().float()), (x,), dynamo=False,
               ways=["opset11", "opset15", "opset17", "opset18", "dynamo", "opset17-onnxsim"])
    yield Case("rounded-in-float32", Fn(fp16_round), (x,), dynamo=False, trigger=False, rewrites="half-roundtrip")


def variants():
    yield Case("to-float16", Fn(lambda t: t.to(torch.float16).to(torch.float32)), (randn(2, 8) * 100,), dynamo=False)
    yield Case("overflow", Fn(lambda t: t.half().float()), (randn(2, 8) * 1e5,), dynamo=False)
    yield Case("conv-half", seeded(ConvHalf), (randn(1, 3, 8, 8),), dynamo=False)
    yield Case("half-arithmetic", Fn(lambda t: (t.half() * 3).float()), (randn(2, 8) * 100,), dynamo=False)
    # Near misses: a round trip through a type that holds every float32 value, or through an integer type.
    yield Case("double-near-miss", Fn(lambda t: t.double().float()), (randn(2, 8) * 100,), dynamo=False)
    yield Case("int-near-miss", Fn(lambda t: t.int().float()), (randn(2, 8) * 100,), dynamo=False)

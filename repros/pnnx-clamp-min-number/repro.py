"""KB157: torch.clamp_min / torch.clamp_max with a Python number through pnnx from TorchScript. The trace records
aten::clamp_min(x, n) with the number as a constant operand; pnnx turns the constant into a pnnx.Expression and
keeps aten::clamp_min (or aten::clamp_max) under its aten name, so ncnn stops at "layer pnnx.Expression not exists
or registered". torch.clamp(x, min=n) traces to aten::clamp, which pnnx converts to ncnn's Clip."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case


def inplace_min(x):
    y = x * 1.0
    y.clamp_min_(-0.5)
    return y


class Tokens(nn.Module):
    """A Linear over tokens, then its output floored by a number (a clamp_min on logits, a log's epsilon)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return torch.clamp_min(self.fc(x), 0.0)


IO = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("clamp-min-number", Fn(lambda x: torch.clamp_min(x, -0.5)), (x,), opset=17, dynamo=False,
               ways=True, **IO)
    yield Case("clamp-max-number", Fn(lambda x: torch.clamp_max(x, 0.7)), (x,), opset=17, dynamo=False, **IO)
    # Workarounds: the same function as torch.clamp with a keyword bound, judged against the original's output.
    yield Case("clamp-kw-min", Fn(lambda x: torch.clamp(x, min=-0.5)), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="clamp-min-number", **IO)
    yield Case("clamp-kw-max", Fn(lambda x: torch.clamp(x, max=0.7)), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="clamp-max-number", **IO)
    yield Case("clamp-both-number", Fn(lambda x: torch.clamp(x, -0.5, 0.7)), (x,), opset=17, dynamo=False,
               trigger=False, **IO)


def variants():
    x, tokens = randn(1, 8, 6, 10), randn(1, 8, 16)
    yield Case("tensor-clamp-min", Fn(lambda x: x.clamp_min(-0.5)), (x,), opset=17, dynamo=False, **IO)
    yield Case("tensor-clamp-max", Fn(lambda x: x.clamp_max(0.7)), (x,), opset=17, dynamo=False, **IO)
    yield Case("tensor-clamp-min-inplace", Fn(inplace_min), (x,), opset=17, dynamo=False, **IO)
    yield Case("clamp-min-zero", Fn(lambda x: torch.clamp_min(x, min=0)), (x,), opset=17, dynamo=False, **IO)
    yield Case("clamp-min-then-max", Fn(lambda x: torch.clamp_max(torch.clamp_min(x, 0.0), 6.0)), (x,), opset=17,
               dynamo=False, **IO)
    yield Case("conv-then-clamp-min", seeded(lambda: ConvThen(nn.Conv2d(8, 8, 3, padding=1),
                                                              Fn(lambda x: torch.clamp_min(x, -0.5)))), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("tokens-clamp-min", seeded(Tokens), (tokens,), opset=17, dynamo=False, **IO)
    yield Case("eps-clamp-min-then-log", Fn(lambda x: torch.log(torch.clamp_min(x.abs(), 1e-6))), (x,), opset=17,
               dynamo=False, **IO)
    # Near misses
    yield Case("clamp-kw-min-near-miss", Fn(lambda x: torch.clamp(x, min=-0.5)), (x,), opset=17, dynamo=False, **IO)
    yield Case("tensor-clamp-kw-min-near-miss", Fn(lambda x: x.clamp(min=-0.5)), (x,), opset=17, dynamo=False, **IO)
    yield Case("clip-kw-max-near-miss", Fn(lambda x: torch.clip(x, max=0.7)), (x,), opset=17, dynamo=False, **IO)
    yield Case("relu6-near-miss", Fn(lambda x: F.relu6(x)), (x,), opset=17, dynamo=False, **IO)
    yield Case("hardtanh-near-miss", Fn(lambda x: F.hardtanh(x, -0.5, 0.7)), (x,), opset=17, dynamo=False, **IO)
    yield Case("relu-near-miss", Fn(lambda x: F.relu(x)), (x,), opset=17, dynamo=False, **IO)
    yield Case("clamp-kw-min-inplace-near-miss", Fn(lambda x: (x * 1.0).clamp_(min=-0.5)), (x,), opset=17,
               dynamo=False, **IO)

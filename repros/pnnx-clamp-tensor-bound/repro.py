"""KB156: torch.clamp with a tensor bound (a learned parameter, a buffer, a computed value) through pnnx from
TorchScript. pnnx's ncnn pass maps torch.clamp to ncnn's Clip only when min and max are numbers (params of the
op); a tensor bound is an operand of the op, no rule matches, and pnnx writes torch.clamp through, so ncnn stops
at "layer torch.clamp not exists or registered". torch.clamp_min / torch.clamp_max with a tensor stay aten::
ops. From ONNX, a constant tensor bound is an initializer of Clip (or of Max / Min), which pnnx converts."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case

# How each model applies its bounds lo and hi (tensors: parameters, or buffers).
HOW = {
    "clamp-min": lambda x, lo, hi: torch.clamp(x, min=lo),
    "clamp-max": lambda x, lo, hi: torch.clamp(x, max=hi),
    "clamp-both": lambda x, lo, hi: torch.clamp(x, lo, hi),
    "clip-both": lambda x, lo, hi: torch.clip(x, lo, hi),
    "tensor-clamp-min": lambda x, lo, hi: x.clamp(min=lo),
    "clamp-min-fn": lambda x, lo, hi: torch.clamp_min(x, lo),
    "clamp-max-fn": lambda x, lo, hi: torch.clamp_max(x, hi),
    # the rewrites: the same function, with ops pnnx converts
    "maximum": lambda x, lo, hi: torch.maximum(x, lo),
    "max-min": lambda x, lo, hi: torch.minimum(torch.maximum(x, lo), hi),
    "float-min": lambda x, lo, hi: torch.clamp(x, min=float(lo)),
    "float-both": lambda x, lo, hi: torch.clamp(x, float(lo), float(hi)),
}


class Bounded(nn.Module):
    """x bounded by two learned tensors lo and hi (shape () by default; (1, C, 1, 1) per channel), applied as
    HOW[how] says; buffer=True holds them as buffers instead of parameters."""

    def __init__(self, how, shape=(), buffer=False):
        super().__init__()
        lo, hi = torch.full(shape, -0.5), torch.full(shape, 0.7)
        if shape:
            lo, hi = lo + torch.linspace(-0.3, 0.3, lo.numel()).view(shape), hi - torch.linspace(0, 0.4, hi.numel()).view(shape)
        if buffer:
            self.register_buffer("lo", lo)
            self.register_buffer("hi", hi)
        else:
            self.lo, self.hi = nn.Parameter(lo), nn.Parameter(hi)
        self.how = how

    def forward(self, x):
        return HOW[self.how](x, self.lo, self.hi)


class Tokens(nn.Module):
    """A Linear over tokens, then its output clamped from below by a learned floor."""

    def __init__(self, how):
        super().__init__()
        self.fc, self.bound = nn.Linear(16, 16), Bounded(how)

    def forward(self, x):
        return self.bound(self.fc(x))


IO = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("clamp-param-min", seeded(Bounded, "clamp-min"), (x,), opset=17, dynamo=False, ways=True, **IO)
    yield Case("clamp-param-both", seeded(Bounded, "clamp-both"), (x,), opset=17, dynamo=False, **IO)
    # A bound computed from the input: from ONNX too, a Clip whose min is an input, not a constant.
    yield Case("clamp-computed-min", Fn(lambda x: torch.clamp(x, min=x.mean())), (x,), opset=17, dynamo=False,
               ways=["opset11", "opset13", "opset18", "dynamo", "opset17-onnxsim"], **IO)
    # Workarounds: the same function written with ops pnnx converts, judged against the original's torch output.
    yield Case("maximum-param", seeded(Bounded, "maximum"), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="clamp-param-min", **IO)
    yield Case("max-min-param", seeded(Bounded, "max-min"), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="clamp-param-both", **IO)
    yield Case("float-bounds", seeded(Bounded, "float-both"), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="clamp-param-both", **IO)
    yield Case("maximum-computed", Fn(lambda x: torch.maximum(x, x.mean())), (x,), opset=17, dynamo=False,
               trigger=False, rewrites="clamp-computed-min", **IO)
    # Number bounds: torch.clamp converts to ncnn's Clip.
    yield Case("clamp-number", Fn(lambda x: torch.clamp(x, -0.5, 0.7)), (x,), opset=17, dynamo=False,
               trigger=False, **IO)


def variants():
    x, tokens = randn(1, 8, 6, 10), randn(1, 8, 16)
    yield Case("clamp-param-max", seeded(Bounded, "clamp-max"), (x,), opset=17, dynamo=False, **IO)
    yield Case("clip-param-both", seeded(Bounded, "clip-both"), (x,), opset=17, dynamo=False, **IO)
    yield Case("tensor-clamp-param-min", seeded(Bounded, "tensor-clamp-min"), (x,), opset=17, dynamo=False, **IO)
    yield Case("clamp-buffer-max", seeded(Bounded, "clamp-max", buffer=True), (x,), opset=17, dynamo=False, **IO)
    yield Case("clamp-per-channel-min", seeded(Bounded, "clamp-min", (1, 8, 1, 1)), (x,), opset=17, dynamo=False,
               **IO)
    yield Case("conv-then-clamp-param-both", seeded(lambda: ConvThen(nn.Conv2d(8, 8, 3, padding=1),
                                                                     Bounded("clamp-both"))), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("tokens-clamp-param-min", seeded(Tokens, "clamp-min"), (tokens,), opset=17, dynamo=False, **IO)
    yield Case("clamp-min-fn-param", seeded(Bounded, "clamp-min-fn"), (x,), opset=17, dynamo=False, **IO)
    yield Case("clamp-max-fn-param", seeded(Bounded, "clamp-max-fn"), (x,), opset=17, dynamo=False, **IO)
    # Near misses: number bounds, a tensor made in forward (traced to a constant), maximum / minimum with a tensor.
    yield Case("number-both-near-miss", Fn(lambda x: torch.clamp(x, -0.5, 0.7)), (x,), opset=17, dynamo=False, **IO)
    yield Case("number-min-near-miss", Fn(lambda x: x.clamp(min=-0.5)), (x,), opset=17, dynamo=False, **IO)
    # fails another way: aten::clamp_min after a pnnx.Expression holding the number
    yield Case("clamp-min-fn-number", Fn(lambda x: torch.clamp_min(x, -0.5)), (x,), opset=17,
               dynamo=False, **IO)
    yield Case("hardtanh-near-miss", Fn(lambda x: F.hardtanh(x, -0.5, 0.7)), (x,), opset=17, dynamo=False, **IO)
    yield Case("tensor-in-forward-near-miss", Fn(lambda x: torch.clamp(x, min=torch.tensor(-0.5))), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("maximum-param-near-miss", seeded(Bounded, "maximum"), (x,), opset=17, dynamo=False, **IO)
    yield Case("max-min-param-near-miss", seeded(Bounded, "max-min"), (x,), opset=17, dynamo=False, **IO)
    yield Case("max-min-per-channel-near-miss", seeded(Bounded, "max-min", (1, 8, 1, 1)), (x,), opset=17,
               dynamo=False, **IO)
    yield Case("float-min-near-miss", seeded(Bounded, "float-min"), (x,), opset=17, dynamo=False, **IO)

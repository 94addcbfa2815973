"""KB160 (regression guard, pnnx/pnnx#161): one slice of a tensor used as both operands of a binary op,
re * re with re = x[:, :8], as an STFT magnitude sqrt(re * re + im * im) writes it. pnnx 20240410 to 20240815
die converting the traced model (a double free, SIGSEGV or SIGBUS); 20240226 and 20240819 on convert it.
TorchScript only: pnnx before 20240603 cannot read an ONNX file, and dies of SIGSEGV on some, which a crash
signature could not tell from this one."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False)


class Magnitude(nn.Module):
    """A strided Conv1d makes 2 * F channels (real and imaginary parts, as an STFT basis does), split by
    slicing; `combine(re, im)` joins the halves: the thread's sqrt(re * re + im * im), or another way."""

    def __init__(self, combine, f=8):
        super().__init__()
        self.conv = nn.Conv1d(1, 2 * f, 8, stride=4, bias=False)
        self.f, self.combine = f, combine

    def forward(self, x):
        y = self.conv(x)
        return self.combine(y[:, :self.f, :], y[:, self.f:, :])


def magnitude(re, im):
    return torch.sqrt(re * re + im * im)


def magnitude_pow(re, im):
    """The workaround: pow(2) takes the slice once, so no binary op has it on both sides."""
    return torch.sqrt(re.pow(2) + im.pow(2))


def product(re, im):
    """Control: each slice is one operand of the Mul."""
    return re * im


class FeatureExtractor(nn.Module):
    """The thread's model's first block in small (silero VAD's STFT as convolution): reshape the (1, N) signal,
    reflect-pad it, a strided Conv1d with a fixed basis, then the magnitude of the two halves."""

    def __init__(self, f=8, k=16, hop=4):
        super().__init__()
        self.register_buffer("basis", torch.randn(2 * f, 1, k))
        self.f, self.pad, self.hop = f, (k - hop) // 2, hop

    def forward(self, x):
        x = x.reshape(x.shape[0], 1, x.shape[1])
        x = torch.nn.functional.pad(x.unsqueeze(1), [self.pad, self.pad, 0, 0], "reflect").squeeze(1)
        y = torch.nn.functional.conv1d(x, self.basis, stride=self.hop)
        re, im = y[:, :self.f, :], y[:, self.f:, :]
        return torch.sqrt(re * re + im * im)


def cases():
    x = randn(1, 1, 40)
    yield Case("magnitude", seeded(Magnitude, magnitude), (x,), torchscript=True, **IO)
    yield Case("pow-two", seeded(Magnitude, magnitude_pow), (x,), torchscript=True, trigger=False,
               rewrites="magnitude", **IO)
    yield Case("two-slices", seeded(Magnitude, product), (x,), torchscript=True, trigger=False, **IO)


def both(op, take):
    """op(y, y) with y = take(x): one slice (one traced aten::slice) on both sides of the op."""

    def fn(x):
        y = take(x)
        return op(y, y)

    return fn


def first_half(x):
    return x[:, :4]


def variant(name, fn, x, torchscript=True, **kw):
    return Case(name, Fn(fn), (x,), torchscript=torchscript, **{**IO, **kw})


def variants():
    x, x4 = randn(1, 8, 5), randn(1, 8, 5, 6)
    mul = torch.mul
    # From TorchScript, pnnx's own path (the thread's): one slice or select on both sides of a binary op.
    yield variant("slice-add", both(torch.add, first_half), x)
    yield variant("slice-div", both(torch.div, first_half), x)
    yield variant("slice-last-axis", both(mul, lambda t: t[..., :3]), x)
    yield variant("select", both(mul, lambda t: t[:, 0]), x)
    yield variant("slice-4d", both(mul, first_half), x4)
    yield Case("feature-extractor", seeded(FeatureExtractor), (randn(1, 64),), torchscript=True, **IO)
    # Near misses: the slice goes through another op first, or two slices of the same range on the two sides
    # (the control, two-slices, has the two halves).
    yield variant("scaled-slice-near-miss", both(mul, lambda t: t[:, :4] * 2), x)
    yield variant("slice-twice-near-miss", lambda t: t[:, :4] * t[:, :4], x)

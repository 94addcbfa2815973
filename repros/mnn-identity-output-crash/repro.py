"""KB053: a model output that is a model input passed through unchanged (an ONNX Identity to a graph output), in MNN."""

import torch
from torch import nn

from kb.export import Case


def image():
    torch.manual_seed(0)
    return torch.randn(1, 3, 8, 8)


def state():
    torch.manual_seed(1)
    return torch.randn(1, 4, 16)


class Passthrough(nn.Module):
    """Returns a convolution of x and x itself: the second output is the input, untouched."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        return self.conv(x), x


class Duplicate(nn.Module):
    """The same computed tensor returned twice (the exporter writes y -> Identity -> second output)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        y = self.conv(x)
        return y, y


class OnlyInput(nn.Module):
    def forward(self, x):
        return x


class CachePassthrough(nn.Module):
    """A decoder step that returns its cache unchanged beside the new hidden state (as KV-cache code does)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.q = nn.Linear(16, 16)
        self.o = nn.Linear(16, 16)

    def forward(self, h, cache):
        att = torch.softmax(self.q(h) @ cache.transpose(1, 2) / 4.0, dim=-1)
        return self.o(att @ cache), cache


class Elementwise(nn.Module):
    """conv(x) and f(x): f = x + 0 (a no-op MNN's optimizer removes), x * 2, reshape to the same shape."""

    def __init__(self, fn):
        super().__init__()
        torch.manual_seed(2)
        self.conv = nn.Conv2d(3, 4, 1)
        self.fn = fn

    def forward(self, x):
        return self.conv(x), self.fn(x)


class ConsumedOutput(nn.Module):
    """An output that also feeds another node (conv output, and relu of it): no pass-through."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        y = self.conv(x)
        return y, torch.relu(y)


def cases():
    x = image()
    yield Case("passthrough", Passthrough(), (x,), ["x"], ["y", "x_out"], opset=17, dynamo=False)
    yield Case("consumed-output", ConsumedOutput(), (x,), ["x"], ["y", "r"], opset=17, dynamo=False, trigger=False)


def variants():
    x = image()
    h, cache = torch.randn(1, 2, 16), state()
    yield Case("passthrough-opset13", Passthrough(), (x,), ["x"], ["y", "x_out"], opset=13, dynamo=False)
    yield Case("passthrough-dynamo", Passthrough(), (x,), ["x"], ["y", "x_out"], opset=18, dynamo=True)
    yield Case("passthrough-onnxsim", Passthrough(), (x,), ["x"], ["y", "x_out"], opset=17, dynamo=False,
               simplify=True)
    yield Case("duplicate-output", Duplicate(), (x,), ["x"], ["y", "y2"], opset=17, dynamo=False)
    yield Case("duplicate-output-dynamo", Duplicate(), (x,), ["x"], ["y", "y2"], opset=18, dynamo=True)
    yield Case("input-only", OnlyInput(), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("cache-passthrough", CachePassthrough(), (h, cache), ["h", "cache"], ["out", "cache_out"], opset=17,
               dynamo=False)
    yield Case("input-plus-zero", Elementwise(lambda t: t + 0), (x,), ["x"], ["y", "x_out"], opset=17, dynamo=False)
    # near misses: no input or tensor reaches an output unchanged
    yield Case("consumed-output-near-miss", ConsumedOutput(), (x,), ["x"], ["y", "r"], opset=18, dynamo=True)
    yield Case("input-times-two-near-miss", Elementwise(lambda t: t * 2), (x,), ["x"], ["y", "x2"], opset=17,
               dynamo=False)
    yield Case("input-reshaped-near-miss", Elementwise(lambda t: t.reshape(1, 3, 64)), (x,), ["x"], ["y", "xr"],
               opset=17, dynamo=False)

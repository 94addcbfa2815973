"""KB092: F.interpolate(..., antialias=True) exports (dynamo, opset 18+) to an ONNX Resize with antialias=1;
MNN drops the attribute and resizes without the low-pass filter, so every downscaled output differs from
torch's."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case


class Net(nn.Module):
    """Conv -> ReLU -> a downscale with F.interpolate(antialias=...), as a multi-scale branch or a resize inside
    the model does."""

    def __init__(self, mode="bilinear", antialias=True, size=(8, 8), scale=None, head=False):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 4, 1) if head else None
        self.mode, self.antialias, self.size, self.scale = mode, antialias, size, scale

    def resize(self, y):
        if self.scale is not None:
            return F.interpolate(y, scale_factor=self.scale, mode=self.mode, antialias=self.antialias)
        return F.interpolate(y, size=self.size, mode=self.mode, antialias=self.antialias)

    def forward(self, x):
        y = self.resize(torch.relu(self.conv(x)))
        return self.head(y) if self.head is not None else y


class Filtered(Net):
    """The workaround for a downscale by exactly 2 (bilinear): torch's antialiased bilinear filter is then the
    separable kernel [1, 3, 3, 1] / 8 at stride 2. A depthwise Conv with that kernel, divided by the same Conv
    of ones (torch renormalises the taps that fall outside the image)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        k1 = torch.tensor([1.0, 3.0, 3.0, 1.0]) / 8
        self.register_buffer("k", (k1[:, None] * k1[None, :]).expand(8, 1, 4, 4).clone())

    def resize(self, y):
        out = F.conv2d(y, self.k, stride=2, padding=1, groups=8)
        norm = F.conv2d(torch.ones_like(y[:, :1]), self.k[:1], stride=2, padding=1)
        return out / norm


class Image(nn.Module):
    """A resize of the input image itself (preprocessing inside the model), no layer before it."""

    def forward(self, x):
        return F.interpolate(x, size=(6, 6), mode="bilinear", antialias=True)


def image(seed=1):
    torch.manual_seed(seed)
    return torch.randn(1, 3, 16, 16)


def net(seed=0, cls=Net, **kw):
    torch.manual_seed(seed)
    return cls(**kw)


def cases():
    x = image()
    model = net()
    yield Case("bilinear-aa", model, (x,), ["x"], ["y"], opset=18, dynamo=True)
    filtered = net(cls=Filtered)
    filtered.load_state_dict(model.state_dict(), strict=False)  # the filter buffer is its own
    yield Case("bilinear-filtered", filtered, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="bilinear-aa")
    # Control: the same downscale without antialias.
    yield Case("bilinear-plain", net(antialias=False), (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False)


def variants():
    x = image()
    yield Case("half-size", net(seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("scale-factor", net(seed=3, size=None, scale=0.5), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("to-7x7", net(seed=3, size=(7, 7)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("to-4x4", net(seed=3, size=(4, 4)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("bicubic", net(seed=3, mode="bicubic"), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("opset20", net(seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("onnxsim", net(seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True, simplify=True)
    yield Case("conv-after", net(seed=3, head=True), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("input-image", Image(), (torch.rand(1, 3, 24, 24),), ["x"], ["y"], opset=18, dynamo=True)
    # Near misses: the same downscales without antialias (bilinear and bicubic).
    yield Case("plain-near-miss", net(seed=3, antialias=False), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("plain-bicubic-near-miss", net(seed=3, mode="bicubic", antialias=False), (x,), ["x"], ["y"],
               opset=18, dynamo=True)

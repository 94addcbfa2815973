"""KB011: bicubic upsampling (ONNX Resize, mode cubic) in MNN, compared with torch at the image border."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.export import Case


class Up(nn.Module):
    def __init__(self, mode="bicubic", align_corners=False, scale=2, size=None):
        super().__init__()
        self.mode, self.align_corners, self.scale, self.size = mode, align_corners, scale, size

    def forward(self, x):
        ac = self.align_corners if self.mode in ("bilinear", "bicubic") else None
        if self.size is not None:
            return F.interpolate(x, size=self.size, mode=self.mode, align_corners=ac)
        return F.interpolate(x, scale_factor=self.scale, mode=self.mode, align_corners=ac)


class PaddedUp(nn.Module):
    """The workaround: replicate-pad 2 pixels, upsample, crop 2 * scale pixels from each side."""

    def __init__(self, scale=2):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        p, c = 2, 2 * self.scale
        y = F.interpolate(F.pad(x, (p, p, p, p), mode="replicate"), scale_factor=self.scale, mode="bicubic",
                          align_corners=False)
        return y[:, :, c:-c, c:-c]


class ConvUp(nn.Module):
    """A decoder-like block: conv, relu, bicubic upsampling, conv."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        return self.b(F.interpolate(torch.relu(self.a(x)), scale_factor=2, mode="bicubic", align_corners=False))


def image():
    torch.manual_seed(0)
    return torch.rand(1, 3, 12, 12)


def cases():
    x = image()
    yield Case("bicubic", Up(), (x,), ["x"], ["y"], opset=17, dynamo=False)
    # The workaround still holds the cubic Resize (so it is no control); the padding keeps MNN's border off the crop.
    # Downscaling by 2 holds the same Resize: the trigger pattern cannot tell scales apart (see the page).
    yield Case("bicubic-downscale", Up(scale=0.5), (torch.rand(1, 3, 24, 24),), ["x"], ["y"], opset=17,
               dynamo=False)
    yield Case("bicubic-padded", PaddedUp(), (x,), ["x"], ["y"], opset=17, dynamo=False, rewrites="bicubic")


def variants():
    x = image()
    yield Case("bicubic-opset13", Up(), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("bicubic-dynamo", Up(), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("bicubic-onnxsim", Up(), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("bicubic-scale4", Up(scale=4), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("bicubic-size", Up(size=(20, 28)), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("conv-bicubic-conv", ConvUp(), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("bicubic-align-corners", Up(align_corners=True), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("bilinear-near-miss", Up(mode="bilinear"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("nearest-near-miss", Up(mode="nearest"), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("bilinear-dynamo-near-miss", Up(mode="bilinear"), (x,), ["x"], ["y"], opset=18, dynamo=True)

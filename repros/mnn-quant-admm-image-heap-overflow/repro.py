"""mnnquant (offline quantization) with "feature_quantize_method": "ADMM" and calibration images (the "image"
input type, the default): it dies of heap corruption while it reads the images, on one image as on hundreds.
The models are small float CNNs; the checks (test_checks.py) write BMP images and mnnquant's JSON config."""

import torch
from torch import nn

from kb.export import Case


class Stage(nn.Module):
    """A ResNet basic block (conv-BN-ReLU-conv-BN, shortcut, ReLU)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                                  nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = (nn.Identity() if stride == 1 and cin == cout else
                      nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)))

    def forward(self, x):
        return torch.relu(self.body(x) + self.short(x))


def resnet(widths=(16, 32, 64, 128), classes=10):
    """A small ResNet-18-like classifier: 7x7 stem, max pool, one block per stage, global pool, fc."""
    layers = [nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = widths[0]
    for i, w in enumerate(widths):
        layers.append(Stage(cin, w, 1 if i == 0 else 2))
        cin = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def case(name, make, channels=3, size=32, **kw):
    torch.manual_seed(0)
    model = make().eval()  # built after seeding: the same weights whichever cases came before
    x = torch.rand(1, channels, size, size) * 2 - 1  # the range the checks' mean and normal map pixels to
    return Case(name, model, (x,), ["input"], ["output"], opset=13, dynamo=False, **kw)


def cases():
    # One convolution on a 3-channel (RGB) input: the smallest model that crashes.
    yield case("conv", lambda: nn.Conv2d(3, 8, 3, padding=1))
    # A gray (1-channel) input.
    yield case("conv-gray", lambda: nn.Conv2d(1, 8, 3, padding=1), channels=1)
    # The thread's kind of model: a ResNet-like classifier on 224x224 RGB images.
    yield case("resnet-224", resnet, size=224)
    # A 4-channel (RGBA) input: each image fills exactly its slot of the batch (see the page).
    yield case("conv-rgba", lambda: nn.Conv2d(4, 8, 3, padding=1), channels=4, trigger=False)

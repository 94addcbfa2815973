"""KB159: mnnquant with "feature_quantize_method": "ADMM" on MNN 3.0.0.

Each model is converted to a float .mnn with mnnconvert, then quantized offline with mnnquant (int8 weights
and features, MAX_ABS weights), calibrated with ADMM on 4 to 64 samples (the bug) or with KL on the same
samples (the workaround). The error is the largest difference from the float model's torch output, as a
fraction of that output's largest magnitude.
"""

import torch
from torch import nn

from kb.export import Case

C = 16
SHAPE = (1, 3, 32, 32)


class Net(nn.Module):
    """A few convolutions: conv 3x3 -> ReLU -> conv 3x3 -> ReLU -> conv 1x1 (or the near-miss shapes)."""

    def __init__(self, kind="convs", cin=3):
        super().__init__()
        self.kind = kind
        if kind == "convs":
            self.body = nn.Sequential(nn.Conv2d(cin, C, 3, padding=1), nn.ReLU(), nn.Conv2d(C, C, 3, padding=1),
                                      nn.ReLU(), nn.Conv2d(C, 8, 1))
        elif kind == "conv":
            self.body = nn.Conv2d(cin, C, 3, padding=1)
        elif kind == "depthwise":  # MobileNet's depthwise-separable block on a stem
            self.body = nn.Sequential(nn.Conv2d(cin, C, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(C, C, 3, padding=1, groups=C), nn.ReLU(), nn.Conv2d(C, 2 * C, 1))
        elif kind == "residual":
            self.stem = nn.Conv2d(cin, C, 3, padding=1)
            self.body = nn.Sequential(nn.Conv2d(C, C, 3, padding=1), nn.ReLU(), nn.Conv2d(C, C, 3, padding=1))
        else:
            raise ValueError(kind)

    def forward(self, x):
        if self.kind == "residual":
            x = torch.relu(self.stem(x))
            return torch.relu(x + self.body(x))
        return self.body(x)


def case(name, kind="convs", opset=13, dynamo=False, shape=SHAPE, **kw):
    torch.manual_seed(0)
    model = Net(kind, shape[1]).eval()  # built after seeding: the same weights whichever cases came before
    x = torch.randn(*shape) * 0.5  # the scale of the other calibration samples (sequence_calibration)
    return Case(name, model, (x,), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    # The thread's setting: a small CNN, calibrated with ADMM (the checks vary the number of samples).
    yield case("convs", "convs")


def variants():
    yield case("convs-opset17", "convs", 17)
    yield case("convs-dynamo", "convs", 18, True)
    yield case("convs-onnxsim", "convs", 13, simplify=True)
    yield case("conv", "conv")
    yield case("depthwise", "depthwise")
    yield case("residual", "residual")
    yield case("convs-gray", "convs", shape=(1, 1, 32, 32))  # one input channel
    yield case("convs-4ch", "convs", shape=(1, 4, 32, 32))  # four input channels
    yield case("convs-64px", "convs", shape=(1, 3, 64, 64))

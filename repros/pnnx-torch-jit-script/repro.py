"""KB058: a torch.jit.script module given to pnnx, which reads only torch.jit.trace output."""

import torch
from torch import nn

from kb.export import Case


class ConvReLU(nn.Module):
    """The smallest model: nothing in it needs scripting."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class ConvBranch(nn.Module):
    """A branch on the input's shape, the reason users reach for torch.jit.script (Tencent/ncnn#3949)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        if x.shape[-1] > 8:  # true for the 16x16 input: tracing keeps this branch
            y = torch.relu(y)
        else:
            y = -y
        return y


def case(name, model, **kw):
    torch.manual_seed(0)  # the same weights and input here and when test_checks.py scripts the module
    model = model()
    # No ONNX graph pattern is involved (no trigger): the mistake is in how the file is saved.
    return Case(name, model, (torch.randn(1, 3, 16, 16),), ["in0"], ["out0"], opset=17, dynamo=False,
                torchscript=True, **kw)


def cases():
    yield case("conv-relu", ConvReLU)  # test_checks.py scripts it
    yield case("conv-branch", ConvBranch)

"""KB096: a per-channel PReLU (nn.PReLU(C)) in a model quantized offline by mnnquant.

Each model is converted to a float .mnn with mnnconvert, quantized with mnnquant (int8 weights and
features, KL calibration on 16 samples) and run on x86. The PReLU then runs in int8, and its output is
far from the float model's: on 3.6.1 its positive values come out multiplied by the slope.
"""

import torch
from torch import nn

from kb.export import Case

C = 16
SHAPE = (1, 3, 32, 32)


class PReLUTrick(nn.Module):
    """The workaround: the same PReLU written as relu(x) - a * relu(-x), with the same slopes."""

    def __init__(self, prelu):
        super().__init__()
        self.weight = prelu.weight

    def forward(self, x):
        a = self.weight.view(1, -1, *([1] * (x.dim() - 2)))
        return torch.relu(x) - a * torch.relu(-x)


class Net(nn.Module):
    """conv 3x3 -> activation -> conv 1x1, as a CNN or an audio model's conv block (dim=1)."""

    def __init__(self, act="prelu", slopes=C, dim=2, pre=None, depthwise=False, head=True, blocks=1):
        super().__init__()
        conv = nn.Conv2d if dim == 2 else nn.Conv1d
        self.dim, self.pre = dim, pre
        self.conv = conv(3, C, 3, padding=1)
        self.dw = conv(C, C, 3, padding=1, groups=C) if depthwise else None
        self.acts = nn.ModuleList()
        self.mids = nn.ModuleList([conv(C, C, 3, padding=1) for _ in range(blocks - 1)])
        for _ in range(blocks):
            if act == "prelu":
                self.acts.append(nn.PReLU(slopes))
            elif act == "leaky":
                self.acts.append(nn.LeakyReLU(0.25))
            else:
                self.acts.append(nn.ReLU())
        self.head = conv(C, C, 1) if head else None

    def forward(self, x):
        if self.dim == 1:
            x = x.flatten(2)
        y = self.conv(x)
        if self.dw is not None:
            y = self.dw(y)
        if self.pre is not None:
            y = self.pre(y)
        for i, act in enumerate(self.acts):
            y = act(y)
            if i < len(self.mids):
                y = self.mids[i](y)
        return self.head(y) if self.head is not None else y


def seeded(model):
    """Weights from seed 1 whatever was built before, PReLU slopes as trained ones look (0.05 to 0.4, one per
    channel); eval mode."""
    torch.manual_seed(1)
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d)):
            m.reset_parameters()
        if isinstance(m, nn.PReLU):
            with torch.no_grad():
                m.weight.uniform_(0.05, 0.4)
    return model.eval()


def rewritten(model):
    """The same model, every PReLU replaced by PReLUTrick (same weights)."""
    for i, act in enumerate(model.acts):
        if isinstance(act, nn.PReLU):
            model.acts[i] = PReLUTrick(act)
    return model


def case(name, model, opset=13, dynamo=False, **kw):
    torch.manual_seed(0)
    x = torch.randn(*SHAPE) * 0.5  # the scale of the other calibration samples (sequence_calibration)
    return Case(name, model, (x,), ["x"], ["y"], opset=opset, dynamo=dynamo, **kw)


def cases():
    yield case("conv-prelu", seeded(Net()))
    yield case("conv-prelu-rewrite", rewritten(seeded(Net())), trigger=False, rewrites="conv-prelu")
    # Controls on the same path (mnnquant KL, int8): a ReLU, and a LeakyReLU with PReLU's default slope.
    yield case("conv-relu", seeded(Net(act="relu")), trigger=False)
    yield case("conv-leaky", seeded(Net(act="leaky")), trigger=False)
    # The second workaround: the same model exported by the dynamo exporter (slope shape [1, C, 1, 1]).
    yield case("conv-prelu-dynamo", seeded(Net()), opset=18, dynamo=True, trigger=False, rewrites="conv-prelu")


def variants():
    yield case("prelu-opset17", seeded(Net()), opset=17)
    yield case("prelu-onnxsim", seeded(Net()), opset=17, simplify=True)
    yield case("prelu-conv1d", seeded(Net(dim=1)))
    yield case("prelu-after-relu", seeded(Net(pre=torch.relu)))  # the PReLU only sees values >= 0
    yield case("prelu-depthwise", seeded(Net(depthwise=True)))
    yield case("prelu-output", seeded(Net(head=False)))
    yield case("prelu-two-blocks", seeded(Net(blocks=2)))
    # near misses: one slope shared by all channels (nn.PReLU()), a LeakyReLU, a ReLU
    yield case("prelu-shared-slope-near-miss", seeded(Net(slopes=1)))
    yield case("leaky-dynamo-near-miss", seeded(Net(act="leaky")), opset=18, dynamo=True)
    yield case("relu-conv1d-near-miss", seeded(Net(act="relu", dim=1)))

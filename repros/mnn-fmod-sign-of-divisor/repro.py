"""KB088: torch.fmod exports to ONNX Mod with fmod=1 (C fmod: the remainder takes the dividend's sign);
mnnconvert maps it to MNN's FLOORMOD (Python's %: the divisor's sign). Every element whose sign differs
from the divisor's comes out off by the divisor."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case

DIVISOR = 2.5


class Fmod(nn.Module):
    """Linear, then torch.fmod by a constant (or by a second input), as angle or phase wrapping does."""

    def __init__(self, divisor=DIVISOR, rewrite=False, integer=False, by_input=False):
        super().__init__()
        self.fc = nn.Linear(12, 16)
        self.divisor, self.rewrite, self.integer, self.by_input = divisor, rewrite, integer, by_input

    def forward(self, x, *rest):
        y = self.fc(x) * 4
        d = rest[0] if self.by_input else self.divisor
        if self.rewrite:  # the workaround: C fmod written out, x - trunc(x / d) * d
            return y - torch.trunc(y / d) * d
        if self.integer:  # an integer tensor: Mod with fmod=1 on int64
            return torch.fmod(y.round().to(torch.int64), 3).float()
        return torch.fmod(y, d)


class Phase(nn.Module):
    """Wrap a predicted angle into (-2*pi, 2*pi) with fmod, then take its sine and cosine."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 8)

    def forward(self, x):
        a = torch.fmod(self.fc(x) * 10, 2 * torch.pi)
        return torch.cat([a, torch.sin(a), torch.cos(a)], -1)


def tokens(seed=1, shape=(2, 5, 12)):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def cases():
    x = tokens()
    model = seeded(Fmod)
    yield Case("fmod", model, (x,), ["x"], ["y"], opset=18, dynamo=True)
    rewrite = seeded(Fmod, rewrite=True)
    rewrite.load_state_dict(model.state_dict())
    yield Case("fmod-trunc", rewrite, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False, rewrites="fmod")
    # Control: torch.remainder, which the exporter writes with Div, Floor, Mul and Sub (no Mod node).
    yield Case("remainder", seeded(Remainder), (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False)


class Remainder(Fmod):
    def forward(self, x):
        return torch.remainder(self.fc(x) * 4, self.divisor)


def variants():
    x = tokens()
    yield Case("constant-divisor", seeded(Fmod, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("divisor-negative", seeded(Fmod, seed=3, divisor=-2.5), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("divisor-one", seeded(Fmod, seed=3, divisor=1.0), (x,), ["x"], ["y"], opset=18, dynamo=True)
    torch.manual_seed(5)
    d = torch.rand(16) * 3 + 0.5
    yield Case("divisor-input", seeded(Fmod, seed=3, by_input=True), (x, d), ["x", "d"], ["y"], opset=18, dynamo=True)
    yield Case("opset17", seeded(Fmod, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=True)
    yield Case("opset20", seeded(Fmod, seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("torchscript", seeded(Fmod, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("onnxsim", seeded(Fmod, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("phase-wrap", seeded(Phase, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    # Near misses: torch.remainder (no Mod node), and fmod on an int64 tensor (Mod with fmod=1 on integers,
    # which MNN computes as torch does).
    yield Case("remainder-near-miss", seeded(Remainder, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("integer-near-miss", seeded(Fmod, seed=3, integer=True), (x,), ["x"], ["y"], opset=18, dynamo=True)

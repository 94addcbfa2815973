"""KB086: MNN's Where (Select) broadcasts its third input only when its second needs it too. A
torch.where(cond, x, fill) whose `fill` is smaller than x (a per-channel parameter, a row) and whose x has
the output's full shape reads `fill` past its end: the output is garbage (values near 1e30) wherever cond
is false. GeometrySelect.cpp sizes input 2 by input 1's element count."""

import torch
from torch import nn

from kb.blocks import seeded
from kb.export import Case

C, H, W = 8, 9, 11


class Net(nn.Module):
    """Conv, torch.where(y > 0.5, y, fill) with a learned fill of shape `shape` (y has the full shape), ReLU.
    The ReLU keeps the measurement stable: the garbage MNN reads past the end of `fill` holds a NaN on some
    runs and not on others, and MNN's ReLU maps NaN to 0, so the verdict is always a plain mismatch."""

    def __init__(self, shape=(C, 1, 1), swap=False, act=True):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.fill = nn.Parameter(torch.randn(*shape))
        self.swap, self.act = swap, act

    def forward(self, x):
        y = self.conv(x)
        if self.swap:  # the small tensor in the second slot: torch.where(y <= 0, fill, y)
            z = torch.where(y <= 0.5, self.fill, y)
        else:
            z = torch.where(y > 0.5, y, self.fill)
        return torch.relu(z) if self.act else z


class Expanded(Net):
    """The workaround: fill.expand_as(y), so that both branches have the output's shape."""

    def forward(self, x):
        y = self.conv(x)
        return torch.relu(torch.where(y > 0.5, y, self.fill.expand_as(y)))


class Swapped(Net):
    """The workaround: invert the condition and swap the branches, so the small tensor is the second input."""

    def forward(self, x):
        y = self.conv(x)
        return torch.relu(torch.where(y <= 0.5, self.fill, y))


class Sequence(nn.Module):
    """A token model: Linear over (batch, tokens, features), then where(mask, h, default) with a default row."""

    def __init__(self, d=16):
        super().__init__()
        self.fc = nn.Linear(12, d)
        self.default = nn.Parameter(torch.randn(d))

    def forward(self, x):
        h = self.fc(x)
        return torch.relu(torch.where(h > 0.3, h, self.default))


class InputFill(nn.Module):
    """Conv, then torch.where(y > 0.5, y, fill) with `fill` a second model input (not a constant), ReLU."""

    def __init__(self, swap=False):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.swap = swap

    def forward(self, x, fill):
        y = self.conv(x)
        z = torch.where(y <= 0.5, fill, y) if self.swap else torch.where(y > 0.5, y, fill)
        return torch.relu(z)


class InputExpanded(InputFill):
    """The workaround on an input fill: fill.expand_as(y) (an Expand node, as the fill is not a constant)."""

    def forward(self, x, fill):
        y = self.conv(x)
        return torch.relu(torch.where(y > 0.5, y, fill.expand_as(y)))


class ComputedFill(nn.Module):
    """Conv, then torch.where(y > 0.5, y, fill) with `fill` computed from y by a reduction that keeps its
    axes: the channel means [1, C, 1, 1] (`dims=(2, 3)`) or the channel maximum [1, 1, H, W] (`dims=(1,)`)."""

    def __init__(self, dims=(2, 3), swap=False):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.dims, self.swap = dims, swap

    def forward(self, x):
        y = self.conv(x)
        fill = y.mean(dim=self.dims, keepdim=True) if len(self.dims) > 1 else y.amax(dim=self.dims, keepdim=True)
        fill = fill - 1.0
        z = torch.where(y <= 0.5, fill, y) if self.swap else torch.where(y > 0.5, y, fill)
        return torch.relu(z)


def image(seed=1):
    torch.manual_seed(seed)
    return torch.randn(1, 3, H, W)


def cases():
    x = image()
    model = seeded(Net)
    yield Case("where-channel", model, (x,), ["x"], ["y"], opset=18, dynamo=True)
    # Workarounds on the same weights: the fill expanded to the output's shape, or the branches swapped.
    expanded = seeded(Expanded)
    expanded.load_state_dict(model.state_dict())
    yield Case("where-expanded", expanded, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="where-channel")
    swapped = seeded(Swapped)
    swapped.load_state_dict(model.state_dict())
    yield Case("where-swapped", swapped, (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False,
               rewrites="where-channel")
    # Control: a scalar-like fill (one element), which MNN's kernel reads as a scalar.
    yield Case("where-one-element", seeded(Net, shape=(1,)), (x,), ["x"], ["y"], opset=18, dynamo=True, trigger=False)
    # The fill as a second model input, or computed by a node. The trigger pattern tests the shapes of
    # constants only (a pattern can state a non-constant input's rank, not its dims, and the full-shape and
    # one-element fills that work have the same rank as those that fail), so `kb scan` does not flag these:
    # trigger=False here, and the bug rows measure them.
    torch.manual_seed(5)
    yield Case("input-row", seeded(InputFill, seed=3), (x, torch.randn(1, 1, 1, W)), ["x", "fill"], ["y"],
               opset=18, dynamo=True, trigger=False)
    torch.manual_seed(5)
    yield Case("input-channel", seeded(InputFill, seed=3), (x, torch.randn(1, C, 1, 1)), ["x", "fill"], ["y"],
               opset=18, dynamo=True, trigger=False)
    torch.manual_seed(5)
    yield Case("input-column", seeded(InputFill, seed=3), (x, torch.randn(1, 1, H, 1)), ["x", "fill"], ["y"],
               opset=18, dynamo=True, trigger=False)
    torch.manual_seed(5)
    yield Case("input-plane", seeded(InputFill, seed=3), (x, torch.randn(1, 1, H, W)), ["x", "fill"], ["y"],
               opset=18, dynamo=True, trigger=False)
    torch.manual_seed(5)
    yield Case("input-c11", seeded(InputFill, seed=3), (x, torch.randn(C, 1, 1)), ["x", "fill"], ["y"],
               opset=18, dynamo=True, trigger=False)
    torch.manual_seed(5)
    yield Case("input-row-torchscript", seeded(InputFill, seed=3), (x, torch.randn(1, 1, 1, W)), ["x", "fill"],
               ["y"], opset=17, dynamo=False, trigger=False)
    yield Case("computed-channel-mean", seeded(ComputedFill, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True,
               trigger=False)
    yield Case("computed-channel-max", seeded(ComputedFill, seed=3, dims=(1,)), (x,), ["x"], ["y"], opset=18,
               dynamo=True, trigger=False)
    # Controls on an input fill: the output's full shape, and one element.
    torch.manual_seed(5)
    yield Case("input-full", seeded(InputFill, seed=3), (x, torch.randn(1, C, H, W)), ["x", "fill"], ["y"],
               opset=18, dynamo=True, trigger=False)
    torch.manual_seed(5)
    yield Case("input-one-element", seeded(InputFill, seed=3), (x, torch.randn(1, 1, 1, 1)), ["x", "fill"], ["y"],
               opset=18, dynamo=True, trigger=False)
    # Workarounds on the input and computed fills (the same weights and inputs).
    torch.manual_seed(5)
    yield Case("input-row-swapped", seeded(InputFill, seed=3, swap=True), (x, torch.randn(1, 1, 1, W)),
               ["x", "fill"], ["y"], opset=18, dynamo=True, trigger=False, rewrites="input-row")
    torch.manual_seed(5)
    yield Case("input-row-expanded", seeded(InputExpanded, seed=3), (x, torch.randn(1, 1, 1, W)), ["x", "fill"],
               ["y"], opset=18, dynamo=True, trigger=False, rewrites="input-row")
    yield Case("computed-mean-swapped", seeded(ComputedFill, seed=3, swap=True), (x,), ["x"], ["y"], opset=18,
               dynamo=True, trigger=False, rewrites="computed-channel-mean")


def variants():
    x = image()
    yield Case("channel-c11", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("channel-1c11", seeded(Net, seed=3, shape=(1, C, 1, 1)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("last-axis", seeded(Net, seed=3, shape=(W,)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("height-width", seeded(Net, seed=3, shape=(H, W)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("opset17", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=True)
    yield Case("opset20", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=20, dynamo=True)
    yield Case("torchscript", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("onnxsim", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    torch.manual_seed(4)
    yield Case("token-default", Sequence(), (torch.randn(2, 5, 12),), ["x"], ["y"], opset=18, dynamo=True)
    # Near misses: a one-element fill (read as a scalar), the small tensor in the second slot, both
    # branches expanded to the full shape.
    yield Case("one-element-near-miss", seeded(Net, seed=3, shape=(1,)), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("swapped-near-miss", seeded(Net, seed=3, swap=True), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("expanded-near-miss", seeded(Expanded, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)

"""known-bug: alibaba/MNN#2916 -- grouped ConvTranspose + BatchNorm/Scale folded wrongly by mnnconvert."""

import copy

import torch
from torch import nn

from kb.export import Case


class DeconvBN(nn.Module):
    def __init__(self, cin: int, cout: int, groups: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(cin, cout, 3, stride=2, padding=1, output_padding=1, groups=groups)
        self.bn = nn.BatchNorm2d(cout)
        # Non-trivial statistics, so a wrongly folded BN shows in the output.
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.25, 2)
            self.bn.weight.uniform_(0.5, 2)
            self.bn.bias.uniform_(-1, 1)

    def forward(self, x):
        return self.bn(self.deconv(x))


class ScaleFirst(DeconvBN):
    """The Scale written as `s * x + b`: the constant in the other operand of the Mul."""

    def __init__(self, cin: int, cout: int, groups: int):
        super().__init__(cin, cout, groups)
        self.scale = nn.Parameter(torch.rand(1, cout, 1, 1) + 0.5)
        self.shift = nn.Parameter(torch.rand(1, cout, 1, 1) - 0.5)

    def forward(self, x):
        return self.shift + self.scale * self.deconv(x)


class DeconvScale(DeconvBN):
    """The same deconvolution followed by a per-channel Mul and Add (MNN's "Scale")."""

    def __init__(self, cin: int, cout: int, groups: int):
        super().__init__(cin, cout, groups)
        self.scale = nn.Parameter(torch.rand(1, cout, 1, 1) + 0.5)
        self.shift = nn.Parameter(torch.rand(1, cout, 1, 1) - 0.5)

    def forward(self, x):
        return self.deconv(x) * self.scale + self.shift


def case(name: str, model: nn.Module, cin: int, trigger: bool = True, dynamo: bool = False, opset: int = 13,
         x: torch.Tensor | None = None, rewrites: str | None = None) -> Case:
    x = torch.randn(1, cin, 7, 9) if x is None else x
    # dynamo=True folds BN into the ConvTranspose and hides the pattern: only the workaround uses it.
    return Case(name, model, (x,), ["x"], ["y"], opset=18 if dynamo else opset, dynamo=dynamo, trigger=trigger,
                rewrites=rewrites)


def cases():
    torch.manual_seed(0)
    original = case("grouped-bn", DeconvBN(8, 16, groups=4), 8)
    yield original
    yield case("grouped-bn-uneven", DeconvBN(8, 12, groups=2), 8)
    yield case("grouped-scale", DeconvScale(8, 16, groups=4), 8)
    yield case("depthwise-bn", DeconvBN(16, 16, groups=16), 16, trigger=False)  # control: never affected
    yield case("ungrouped-bn", DeconvBN(8, 16, groups=1), 8, trigger=False)  # control
    # The workaround: the same module (same weights and BN statistics) on the same input, exported with dynamo=True.
    yield case("grouped-bn-folded", copy.deepcopy(original.module), 8, trigger=False, dynamo=True,
               x=original.inputs[0], rewrites="grouped-bn")


def variants():
    """Grouped deconvolutions as decoders write them; every one is fixed on the MNN 3.x measured."""
    torch.manual_seed(0)
    yield case("v-grouped-bn-g2", DeconvBN(8, 16, groups=2), 8)
    yield case("v-grouped-bn-g8", DeconvBN(16, 32, groups=8), 16)
    yield case("v-grouped-bn-opset17", DeconvBN(8, 16, groups=4), 8, opset=17)
    yield case("v-grouped-scale-first", ScaleFirst(8, 16, groups=4), 8)
    yield case("v-grouped-scale", DeconvScale(8, 12, groups=2), 8)
    yield case("v-depthwise-bn", DeconvBN(8, 8, groups=8), 8)
    yield case("v-ungrouped-bn", DeconvBN(8, 16, groups=1), 8)
    yield case("v-folded-dynamo", DeconvBN(8, 16, groups=4), 8, dynamo=True)

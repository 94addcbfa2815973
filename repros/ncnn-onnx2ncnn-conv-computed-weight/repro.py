"""KB049: a Conv whose weight is computed in the graph (weight norm exported without constant folding)
makes onnx2ncnn abort: it reads the weight as an initializer, finds none, and protobuf aborts.
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm

from kb.export import Case

C, H = 4, 8
NOFOLD = {"do_constant_folding": False}  # what many training scripts pass, or what training-mode export implies


def wn_conv(cin=C, cout=6, conv=nn.Conv2d, seed=0, **kw):
    torch.manual_seed(seed)
    return weight_norm(conv(cin, cout, 3, **kw))


class Block(nn.Module):
    """A TCN / vocoder-style block: weight-normed conv, ReLU, weight-normed conv, residual add."""

    def __init__(self):
        super().__init__()
        self.c1 = wn_conv(C, C, padding=1, seed=1)
        self.c2 = wn_conv(C, C, padding=1, seed=2)

    def forward(self, x):
        return x + self.c2(torch.relu(self.c1(x)))


class Modulated(nn.Module):
    """A weight computed from the input (StyleGAN-like modulation): no tool can fold it away."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.w = nn.Parameter(torch.randn(6, C, 3, 3) * 0.2)

    def forward(self, x):
        return F.conv2d(x, self.w * torch.sigmoid(x.mean()), padding=1)


def removed(**kw):
    """The workaround: the same layer (same seed, same weights) with its weight norm removed before export."""
    m = wn_conv(**kw)
    parametrize.remove_parametrizations(m, "weight")
    return m


def x2d(seed=0):
    torch.manual_seed(seed)
    return torch.randn(1, C, H, H)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    conv = wn_conv(padding=1)
    yield Case("weight-norm-conv", conv, (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD, **IO)
    # Workarounds: the same weights, the same input.
    yield Case("weight-norm-removed", removed(padding=1), (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD,
               trigger=False, rewrites="weight-norm-conv", **IO)
    yield Case("weight-norm-onnxsim", conv, (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD, simplify=True,
               trigger=False, rewrites="weight-norm-conv", **IO)
    yield Case("weight-norm-folded", conv, (x2d(),), opset=13, dynamo=False, trigger=False,
               rewrites="weight-norm-conv", **IO)
    # Control: a plain Conv exported the same way (no constant folding).
    torch.manual_seed(0)
    yield Case("plain-conv", nn.Conv2d(C, 6, 3, padding=1), (x2d(),), opset=13, dynamo=False, export_kwargs=NOFOLD,
               trigger=False, **IO)


def variants():
    torch.manual_seed(4)
    x1 = torch.randn(1, C, 16)
    yield Case("wn-opset13", wn_conv(padding=1), (x2d(1),), IO["input_names"], IO["output_names"], opset=13,
               dynamo=False, export_kwargs=NOFOLD)
    yield Case("wn-opset17", wn_conv(padding=1), (x2d(1),), IO["input_names"], IO["output_names"], opset=17,
               dynamo=False, export_kwargs=NOFOLD)
    torch.manual_seed(0)
    legacy = torch.nn.utils.weight_norm(nn.Conv2d(C, 6, 3, padding=1))
    yield Case("legacy-weight-norm", legacy, (x2d(1),), IO["input_names"], IO["output_names"], opset=13,
               dynamo=False, export_kwargs=NOFOLD)
    yield Case("conv1d-wn", wn_conv(conv=nn.Conv1d, padding=1), (x1,), IO["input_names"], IO["output_names"],
               opset=13, dynamo=False, export_kwargs=NOFOLD)
    yield Case("convtranspose-wn", wn_conv(conv=nn.ConvTranspose2d, stride=2, padding=1), (x2d(1),),
               IO["input_names"], IO["output_names"], opset=13, dynamo=False, export_kwargs=NOFOLD)
    yield Case("training-mode-near-miss", wn_conv(padding=1), (x2d(1),), IO["input_names"], IO["output_names"],
               opset=13, dynamo=False, export_kwargs={"training": torch.onnx.TrainingMode.TRAINING})
    yield Case("residual-block", Block(), (x2d(1),), IO["input_names"], IO["output_names"], opset=13, dynamo=False,
               export_kwargs=NOFOLD)
    yield Case("modulated-weight", Modulated(), (x2d(1),), IO["input_names"], IO["output_names"], opset=13,
               dynamo=False)
    yield Case("folded-near-miss", wn_conv(padding=1), (x2d(1),), IO["input_names"], IO["output_names"], opset=13,
               dynamo=False)
    yield Case("dynamo-near-miss", wn_conv(padding=1), (x2d(1),), IO["input_names"], IO["output_names"], opset=18,
               dynamo=True, export_kwargs={"external_data": False})
    yield Case("onnxsim-near-miss", Block(), (x2d(1),), IO["input_names"], IO["output_names"], opset=13,
               dynamo=False, export_kwargs=NOFOLD, simplify=True)

"""KB222: mnnconvert writes an ONNX Softplus as Log(Add(Exp(x), 1)) (Express's _Softplus). With precision low on an
ARMv8.2 CPU that Exp's output is stored in fp16, where anything past 65504 is clamped, so softplus(x) stops growing at
log(65505) = 11.09 for every x above about 11.09, although x and the right output are both far inside fp16's range.
The same .mnn is right with precision normal, on an ARMv8.0 CPU and on x86."""

import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import Fn
from kb.export import Case


def logits(lo, hi, shape=(1, 8, 16, 16), seed=1):
    """Values spread evenly over [lo, hi) (a head's raw outputs), seeded."""
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=g) * (hi - lo) + lo,)


# Raw values in [-30, 30): half of them above 11.09, every softplus output under 30.
WIDE = logits(-30.0, 30.0)
# Just below the cap: exp(10.5) = 36316 < 65504.
BELOW = logits(-30.0, 10.5)


class StableSoftplus(nn.Module):
    """softplus(x) = max(x, 0) + log(1 + exp(-|x|)): exp never sees a positive argument, so nothing passes 1."""

    def forward(self, x):
        return F.relu(x) + torch.log(1 + torch.exp(-x.abs()))


class VarianceHead(nn.Module):
    """A 1x1 conv whose output goes through softplus to make a positive scale (uncertainty, size or density head)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(8, 4, 1)
        with torch.no_grad():
            self.conv.weight.mul_(20.0)

    def forward(self, x):
        return F.softplus(self.conv(x))


def cases():
    yield Case("softplus", nn.Softplus(), WIDE, opset=17, dynamo=False, ways=True)
    # The workaround: the same function written without Softplus, judged against softplus's torch output.
    yield Case("stable-softplus", StableSoftplus(), WIDE, opset=17, dynamo=False, trigger=False,
               rewrites="softplus")
    # Control: every value under 10.5, so exp stays under 65504.
    yield Case("softplus-below", nn.Softplus(), BELOW, opset=17, dynamo=False, trigger=False)


def variants():
    # All converted on x86 and run with the Module API on an emulated cortex-a76, precision low.
    yield Case("softplus-beta2", nn.Softplus(beta=2.0), WIDE, opset=17, dynamo=False)
    yield Case("variance-head", VarianceHead(), logits(-1.0, 1.0), opset=17, dynamo=False)
    # log(1 + exp(x)) written out by hand: the same Exp, in the user's own graph.
    yield Case("log-one-plus-exp", Fn(lambda x: torch.log(1 + torch.exp(x))), WIDE, opset=17, dynamo=False)
    # Near misses and rewrites.
    yield Case("softplus-below", nn.Softplus(), BELOW, opset=17, dynamo=False)
    yield Case("stable-softplus", StableSoftplus(), WIDE, opset=17, dynamo=False)
    # Mish = x * tanh(softplus(x)): tanh of the capped 11.09 is 1 to fp16's precision, as is tanh of x.
    yield Case("mish", nn.Mish(), WIDE, opset=17, dynamo=False)
    yield Case("mish-opset18", nn.Mish(), WIDE, opset=18, dynamo=False)
    yield Case("sigmoid", nn.Sigmoid(), WIDE, opset=17, dynamo=False)

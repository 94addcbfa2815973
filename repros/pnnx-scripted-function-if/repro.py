"""KB123: a @torch.jit.script function inside a traced model: pnnx writes its control flow through unconverted."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


def signed(x):  # a data-dependent branch (pnnx/pnnx#166's _abs, with the tensor's own truth value)
    if bool(x.sum()):
        return x
    return -x


def scaled(x):
    if bool(x.mean()):
        y = x * 2
    else:
        y = x + 1
    return y


def positive(x):  # pnnx/pnnx#166 as written: x.sum() > 0, which pnnx leaves as torch.gt
    if x.sum() > 0:
        return x
    return -x


def looped(x):
    for _ in range(2):
        x = x * 2
    return x


def twice(x):  # no control flow
    return x * 2


FNS = {f.__name__: f for f in (signed, scaled, positive, looped, twice)}


class Net(nn.Module):
    """A Linear with a function before or after it, scripted (kept as a TorchScript function) or plain (traced)."""

    def __init__(self, fn="signed", script=True, after=False):
        super().__init__()
        self.fn = torch.jit.script(FNS[fn]) if script else FNS[fn]
        self.after = after
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        if self.after:
            return self.fn(self.linear(x))
        return torch.relu(self.linear(self.fn(x)))


def case(name, *args, trigger=True, rewrites=None, **kw):
    return Case(name, seeded(Net, *args, **kw), (randn(1, 4),), opset=17, dynamo=False, torchscript=True,
                trigger=trigger, rewrites=rewrites)


def cases():
    yield case("script-if", "signed")
    yield case("traced-if", "signed", script=False, trigger=False, rewrites="script-if")  # the workaround


def variants():
    yield case("script-if-else", "scaled")
    yield case("script-if-after-linear", "signed", after=True)
    yield case("script-if-else-after-linear", "scaled", after=True)
    yield case("script-if-gt", "positive")  # torch.gt comes first in the .param
    yield case("script-loop", "looped")  # its condition is left as a pnnx.Expression
    yield case("script-no-flow", "twice", trigger=False)  # near miss: a scripted function with no branch
    yield case("traced-if-else", "scaled", script=False, trigger=False)  # near miss: traced
    yield case("traced-loop", "looped", script=False, trigger=False)  # near miss: traced, unrolled

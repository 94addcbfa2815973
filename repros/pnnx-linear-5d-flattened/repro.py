"""KB173: nn.Linear applied to a 5-D tensor that the graph makes itself (x.unsqueeze(1) of a 4-D input), traced and
converted by pnnx with no op that gives it a batch axis: pnnx writes ExpandDims then an InnerProduct with no Reshape
around it, and ncnn returns one (out_features,) vector instead of torch's 5-D tensor."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Lift(nn.Module):
    """A Linear over the last axis of a tensor that gains an axis inside the graph."""

    def __init__(self, op, cin=3, cout=4, bias=True):
        super().__init__()
        self.op = op
        self.fc = nn.Linear(cin, cout, bias=bias)
        self.conv = nn.Conv2d(2, 2, 1)

    def forward(self, x):
        op, fc = self.op, self.fc
        if op == "unsqueeze":  # (1, 2, 2, 3) -> (1, 1, 2, 2, 3) -> Linear
            return fc(x.unsqueeze(1))
        if op == "unsqueeze-2":  # the new axis elsewhere
            return fc(x.unsqueeze(2))
        if op == "unsqueeze-last":  # the new axis just before the features
            return fc(x.unsqueeze(-2))
        if op == "index-none":  # x[:, None], the indexing spelling of unsqueeze
            return fc(x[:, None])
        if op == "then-relu":  # an op after the Linear
            return torch.relu(fc(x.unsqueeze(1)))
        if op == "then-squeeze":  # the axis taken away again after the Linear: a 4-D output
            return fc(x.unsqueeze(1)).squeeze(1)
        if op == "conv-unsqueeze":  # near miss: a conv first gives pnnx the batch axis
            return fc(self.conv(x).unsqueeze(1))
        if op == "linear-then-unsqueeze":  # the workaround: the Linear on the 4-D tensor, the axis added after it
            return fc(x).unsqueeze(1)
        raise ValueError(op)


def cases():
    x = randn(1, 2, 2, 3)
    yield Case("linear-unsqueeze", seeded(Lift, "unsqueeze"), (x,), ["in0"], ["out0"], opset=17, dynamo=False,
               torchscript=True)
    # The workaround: the same weights and input, the Linear applied before the unsqueeze (the same values).
    yield Case("linear-then-unsqueeze", seeded(Lift, "linear-then-unsqueeze"), (x,), ["in0"], ["out0"], opset=17,
               dynamo=False, torchscript=True, trigger=False, rewrites="linear-unsqueeze")


def variants():
    io = dict(input_names=["in0"], output_names=["out0"], opset=17, dynamo=False, torchscript=True)
    yield Case("square-3x3", seeded(Lift, "unsqueeze", 3, 3), (randn(1, 2, 2, 3, seed=2),), **io)
    yield Case("wide", seeded(Lift, "unsqueeze", 8, 16), (randn(1, 3, 5, 8, seed=3),), **io)
    yield Case("no-bias", seeded(Lift, "unsqueeze", 3, 4, False), (randn(1, 2, 2, 3, seed=4),), **io)
    yield Case("unsqueeze-dim2", seeded(Lift, "unsqueeze-2"), (randn(1, 2, 2, 3, seed=5),), **io)
    yield Case("unsqueeze-last", seeded(Lift, "unsqueeze-last"), (randn(1, 2, 2, 3, seed=6),), **io)
    yield Case("index-none", seeded(Lift, "index-none"), (randn(1, 2, 2, 3, seed=7),), **io)
    yield Case("then-relu", seeded(Lift, "then-relu"), (randn(1, 2, 2, 3, seed=8),), **io)
    yield Case("then-squeeze", seeded(Lift, "then-squeeze"), (randn(1, 2, 2, 3, seed=9),), **io)
    yield Case("batch2", seeded(Lift, "unsqueeze"), (randn(2, 2, 2, 3, seed=10),), **io)
    yield Case("conv-unsqueeze", seeded(Lift, "conv-unsqueeze"), (randn(1, 2, 2, 3, seed=11),), **io)  # near miss
    yield Case("unsqueeze-3d", seeded(Lift, "unsqueeze"), (randn(1, 5, 3, seed=12),), **io)  # near miss: 4-D inside

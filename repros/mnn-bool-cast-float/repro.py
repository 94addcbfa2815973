import torch
from kb.blocks import Fn
from kb.export import Case


def cases():
    x = torch.tensor([0.0, 0.3, -0.2, 1.5, -2.0, 0.0])
    yield Case("bool-cast", Fn(lambda t: t.bool().float()), (x,), dynamo=False, ways=True)
    yield Case("compare-to-zero", Fn(lambda t: (t != 0).float()), (x,), dynamo=False, trigger=False, rewrites="bool-cast")

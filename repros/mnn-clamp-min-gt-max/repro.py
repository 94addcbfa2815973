import torch
from kb.blocks import Fn, randn
from kb.export import Case


def cases():
    x = randn(2, 8)
    yield Case("clamp", Fn(lambda t: torch.clamp(t, 1.0, -1.0)), (x,), dynamo=False, ways=True)
    yield Case("min-of-max", Fn(lambda t: torch.minimum(torch.maximum(t, torch.tensor(1.0)), torch.tensor(-1.0))), (x,),
               dynamo=False, trigger=False, rewrites="clamp")


def variants():  # near miss: min < max, as clamps usually are
    yield Case("clamp-ordered", Fn(lambda t: torch.clamp(t, -1.0, 1.0)), (randn(2, 8),), dynamo=False)

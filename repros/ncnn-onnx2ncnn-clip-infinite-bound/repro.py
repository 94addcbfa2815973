import math

import torch
from kb.blocks import Fn
from kb.export import Case


def power_to_db(t):
    """torchlibrosa's power_to_db: the power clamped to [amin, inf), then 10 log10."""
    return 10.0 * torch.log10(torch.clamp(t, min=1e-10, max=math.inf))


def cases():
    torch.manual_seed(0)
    x = torch.rand(1, 2, 8, 8)
    yield Case("clamp-max-inf", Fn(power_to_db), (x,), opset=13, dynamo=False)
    yield Case("clamp-min-neg-inf", Fn(lambda t: torch.clamp(t, min=-math.inf, max=0.5)), (x,), opset=13,
               dynamo=False, ways=True)
    # Workarounds: the same clamps with the infinite bound left out.
    yield Case("clamp-min-only", Fn(lambda t: 10.0 * torch.log10(torch.clamp(t, min=1e-10))), (x,), opset=13,
               dynamo=False, trigger=False, rewrites="clamp-max-inf")
    yield Case("clamp-max-only", Fn(lambda t: torch.clamp(t, max=0.5)), (x,), opset=13, dynamo=False,
               trigger=False, rewrites="clamp-min-neg-inf")


def variants():
    torch.manual_seed(2)
    x = torch.rand(1, 2, 8, 8)
    yield Case("finite-bounds-near-miss", Fn(lambda t: torch.clamp(t, min=-1e30, max=0.5)), (x,), opset=13,
               dynamo=False)

"""KB138: F.normalize(dim=1) straight on a model input; no op gives pnnx the batch axis."""
import torch
import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("normalize", Fn(lambda t: F.normalize(t, dim=1)), (x,), dynamo=False, torchscript=True, ways=True)
    yield Case("written-out", Fn(lambda t: t / torch.linalg.vector_norm(t, dim=1, keepdim=True).clamp(min=1e-12)),
               (x,), dynamo=False, torchscript=True, trigger=False, rewrites="normalize")


def variants():
    yield Case("embedding-2d", Fn(lambda t: F.normalize(t, dim=1)), (randn(1, 16),), dynamo=False)
    yield Case("tokens-3d", Fn(lambda t: F.normalize(t, dim=1)), (randn(1, 8, 16),), dynamo=False)
    yield Case("conv-before-near-miss", seeded(lambda: ConvThen(nn.Conv2d(8, 8, 1), lambda t: F.normalize(t, dim=1))),
               (randn(1, 8, 6, 10),), dynamo=False)

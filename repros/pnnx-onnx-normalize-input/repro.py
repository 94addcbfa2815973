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
    # Other ways of writing the norm out: pnnx fuses each back into F.normalize (limits of `written-out`).
    yield Case("pow-sum-sqrt", Fn(lambda t: t / t.pow(2).sum(1, keepdim=True).sqrt().clamp_min(1e-12)),
               (x,), dynamo=False, torchscript=True, trigger=False, rewrites="normalize")
    yield Case("mul-sum-sqrt", Fn(lambda t: t / (t * t).sum(1, keepdim=True).sqrt().clamp_min(1e-12)),
               (x,), dynamo=False, torchscript=True, trigger=False, rewrites="normalize")
    yield Case("rsqrt", Fn(lambda t: t * torch.rsqrt((t * t).sum(1, keepdim=True).clamp_min(1e-24))),
               (x,), dynamo=False, torchscript=True, trigger=False, rewrites="normalize")


def variants():
    yield Case("embedding-2d", Fn(lambda t: F.normalize(t, dim=1)), (randn(1, 16),), dynamo=False)
    yield Case("tokens-3d", Fn(lambda t: F.normalize(t, dim=1)), (randn(1, 8, 16),), dynamo=False)
    yield Case("conv-before-near-miss", seeded(lambda: ConvThen(nn.Conv2d(8, 8, 1), lambda t: F.normalize(t, dim=1))),
               (randn(1, 8, 6, 10),), dynamo=False)
    # Elementwise ops between the input and the normalize give pnnx no batch axis either.
    yield Case("affine-before", Fn(lambda t: F.normalize(t * 2 + 1, dim=1)), (randn(1, 8, 6, 10),), dynamo=False)
    yield Case("relu-before", Fn(lambda t: F.normalize(torch.relu(t), dim=1)), (randn(1, 8, 6, 10),), dynamo=False)
    yield Case("affine-before-ts", Fn(lambda t: F.normalize(t * 2 + 1, dim=1)), (randn(1, 8, 6, 10),),
               dynamo=False, torchscript=True)
    yield Case("relu-before-ts", Fn(lambda t: F.normalize(torch.relu(t), dim=1)), (randn(1, 8, 6, 10),),
               dynamo=False, torchscript=True)

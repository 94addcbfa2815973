"""KB192: an Einsum whose equation repeats a letter within one operand (a trace or a diagonal), converted to MNN."""

import torch
from torch import nn

from kb.blocks import Fn, randn
from kb.export import Case


class Ein(nn.Module):
    def __init__(self, eq):
        super().__init__()
        self.eq = eq

    def forward(self, *xs):
        return torch.einsum(self.eq, *xs)


def ein(eq):
    return Ein(eq)


def cases():
    x = randn(2, 3, 3)
    eye = torch.eye(3)
    # The trace of each matrix of a batch: 'bii->b'.
    yield Case("batched-trace", ein("bii->b"), (x,), dynamo=False,
               ways=["opset15", "opset17", "opset18", "dynamo", "opset17-onnxsim"])
    # The diagonal of each matrix: 'bii->bi'.
    yield Case("batched-diagonal", ein("bii->bi"), (x,), dynamo=False)
    # The workarounds: the same values without a repeated letter.
    yield Case("eye-mask", Fn(lambda t: (t * eye).sum((-2, -1))), (x,), dynamo=False, trigger=False,
               rewrites="batched-trace")
    yield Case("diagonal-sum", Fn(lambda t: t.diagonal(dim1=-2, dim2=-1).sum(-1)), (x,), dynamo=False,
               trigger=False, rewrites="batched-trace")
    yield Case("eye-mask-diagonal", Fn(lambda t: (t * eye).sum(-1)), (x,), dynamo=False, trigger=False,
               rewrites="batched-diagonal")


def variants():
    yield Case("trace-2d", ein("ii->"), (randn(4, 4),), dynamo=False)
    yield Case("heads-trace", ein("bhii->bh"), (randn(2, 2, 3, 3),), dynamo=False)
    yield Case("repeated-first", ein("iij->j"), (randn(3, 3, 2),), dynamo=False)
    yield Case("diagonal-2d", ein("ii->i"), (randn(4, 4),), dynamo=False)
    # The trace of a matrix the model computes (a Gram matrix), as a regulariser or an attention score writes it.
    yield Case("gram-trace", Fn(lambda t: torch.einsum("bii->b", t @ t.transpose(1, 2))), (randn(2, 3, 4),),
               dynamo=False)
    # Near misses: every letter once per operand.
    yield Case("sum-near-miss", ein("bij->b"), (randn(2, 3, 3),), dynamo=False)
    yield Case("transpose-near-miss", ein("bij->bji"), (randn(2, 3, 4),), dynamo=False)
    yield Case("bmm-near-miss", ein("bij,bjk->bik"), (randn(2, 3, 4), randn(2, 4, 5, seed=2)), dynamo=False)

"""KB146: an ONNX Einsum (torch.einsum, as LoFTR's linear attention writes it) through pnnx before 20250530: pnnx
prints "todo Einsum", writes an Einsum layer without its equation, and ncnn's load_param fails on it."""

import torch
from torch import nn

from kb.blocks import randn
from kb.export import Case


class Einsum(nn.Module):
    def __init__(self, eq):
        super().__init__()
        self.eq = eq

    def forward(self, a, b):
        return torch.einsum(self.eq, a, b)



def cases():
    yield Case("einsum-kv", Einsum("nshd,nshv->nhdv"), (randn(1, 6, 2, 4), randn(1, 6, 2, 4, seed=2)), dynamo=False,
               ways=["opset15", "opset17", "opset18", "dynamo", "opset13-onnxsim", "opset17-onnxsim", "dynamo-onnxsim"])
    yield Case("matmul-kv", Fn2(), (randn(1, 6, 2, 4), randn(1, 6, 2, 4, seed=2)), dynamo=False, rewrites="einsum-kv",
               trigger=False)


class Fn2(nn.Module):
    """The same contraction as nshd,nshv->nhdv written with permute and matmul."""

    def forward(self, k, v):
        return k.permute(0, 2, 3, 1) @ v.permute(0, 2, 1, 3)


def variants():
    yield Case("einsum-qkv", Einsum("nlhd,nhdv->nlhv"), (randn(1, 5, 2, 4), randn(1, 2, 4, 4, seed=2)), dynamo=False)
    yield Case("einsum-ijm-imkl", Einsum("ijm,imkl->ijkl"), (randn(1, 3, 4), randn(1, 4, 5, 6, seed=2)), dynamo=False)

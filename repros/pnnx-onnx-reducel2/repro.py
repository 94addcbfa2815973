"""KB144: torch.norm(x, dim=1) exported to ONNX is a ReduceL2 (p=1: ReduceL1); pnnx before 20250424 prints
"todo ReduceL2" and writes it through, and ncnn stops at "layer ReduceL2 not exists or registered"."""

import torch

from kb.blocks import Fn, randn
from kb.export import Case


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("l2-normalize", Fn(lambda t: t / torch.norm(t, dim=1, keepdim=True)), (x,), dynamo=False,
               torchscript=True, ways=True)


def variants():
    x = randn(1, 8, 6, 10)
    yield Case("l1-normalize", Fn(lambda t: t / torch.norm(t, p=1, dim=1, keepdim=True)), (x,), dynamo=False)
    yield Case("l2-spatial", Fn(lambda t: t / torch.norm(t, dim=(2, 3), keepdim=True)), (x,), dynamo=False)

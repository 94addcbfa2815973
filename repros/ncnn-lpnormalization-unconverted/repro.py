"""KB147: onnxsim fuses x / torch.norm(x, dim=1, keepdim=True) into one ONNX LpNormalization; neither pnnx nor
onnx2ncnn converts it, and ncnn stops at "layer LpNormalization not exists or registered"."""

import torch
from torch import nn

from kb.blocks import Fn, randn, seeded
from kb.export import Case


def l2(dim=1, p=2):
    return Fn(lambda t: t / torch.norm(t, p=p, dim=dim, keepdim=True))


def cases():
    x = randn(1, 8, 6, 10)
    yield Case("l2-normalize-onnxsim", l2(), (x,), dynamo=False, simplify=True,
               ways=["opset17-onnxsim", "dynamo-onnxsim"])
    yield Case("l2-normalize", l2(), (x,), dynamo=False, trigger=False, rewrites="l2-normalize-onnxsim")


def variants():
    x = randn(1, 8, 6, 10)
    yield Case("l2-opset11-onnxsim", l2(), (x,), opset=11, dynamo=False, simplify=True)
    yield Case("l2-opset15-onnxsim", l2(), (x,), opset=15, dynamo=False, simplify=True)
    yield Case("l2-opset18-onnxsim", l2(), (x,), opset=18, dynamo=False, simplify=True)
    yield Case("l1-onnxsim", l2(p=1), (x,), dynamo=False, simplify=True)
    yield Case("l2-last-axis-onnxsim", l2(-1), (x,), dynamo=False, simplify=True)
    yield Case("embedding-onnxsim", seeded(lambda: nn.Sequential(nn.Linear(16, 32), l2())), (randn(1, 16),),
               dynamo=False, simplify=True)
    yield Case("l2-spatial-onnxsim-near-miss", l2((2, 3)), (x,), dynamo=False, simplify=True)

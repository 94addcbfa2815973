"""KB155: F.lp_pool2d / F.lp_pool1d (and nn.LPPool2d / nn.LPPool1d) through pnnx. pnnx recognises the op (from the
traced TorchScript, and from torch's ONNX export of it: Pow, AveragePool, Sign, Abs, Relu, Mul, Mul, Pow) but has no
rule that lowers it to ncnn; it prints "ignore F.lp_pool2d ... param norm_type=..." and writes the op through, and
ncnn stops at "layer F.lp_pool2d not exists or registered"."""

import torch.nn.functional as F
from torch import nn

from kb.blocks import ConvThen, Fn, randn, seeded
from kb.export import Case


def lp_pool2d(p, k=2, stride=None, ceil_mode=False):
    return Fn(lambda x: F.lp_pool2d(x, p, k, stride=stride, ceil_mode=ceil_mode))


def lp_pool1d(p, k=3):
    return Fn(lambda x: F.lp_pool1d(x, p, k))


def rewritten(p, form="pow", relu=False):
    """lp_pool2d(x, p, 2) as torch computes it, without sign(out) * relu(abs(out)) (an identity for a real out):
    (avg_pool2d(x ** p, 2) * 4) ** (1 / p). form="pow" writes both powers as pow; form="mul" multiplies x out and
    takes the root with sqrt (p=2) or with pow on a sum clamped to 1e-30 (p=3), so that ncnn's BinaryOp pow never
    meets a zero or negative base. relu=True: on relu(x), as the original case does."""
    def f(x):
        x = F.relu(x) if relu else x
        if form == "pow":
            return (F.avg_pool2d(x.pow(p), 2) * 4).pow(1.0 / p)
        if p == 2:
            return (F.avg_pool2d(x * x, 2) * 4).sqrt()
        return (F.avg_pool2d(x * x * x, 2) * 4).clamp(min=1e-30).pow(1.0 / 3)
    return Fn(f)


def lp_pool2d_relu(p):
    """F.lp_pool2d on relu(x): a ReLU's output has windows of zeros. x ** 3 of a negative x is negative, and torch's
    own lp_pool2d(p=3) is NaN where a window's sum of cubes is negative, so p=3 is measured on non-negative inputs."""
    return Fn(lambda x: F.lp_pool2d(F.relu(x), p, 2))


class Gate(nn.Module):
    """CBAM's channel gate with pool_type 'lp': a global lp_pool2d (the kernel is the whole 16x16 map), an MLP, a
    sigmoid that scales the channels."""

    def __init__(self, c=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(c, c // 2), nn.ReLU(), nn.Linear(c // 2, c))

    def forward(self, x):
        att = self.mlp(F.lp_pool2d(x, 2, 16, stride=16))
        return x * att.sigmoid().unsqueeze(-1).unsqueeze(-1)


IO = dict(input_names=["in0"], output_names=["out0"], torchscript=True)


def cases():
    x = randn(1, 8, 16, 16)
    yield Case("lp-pool2d-p2", lp_pool2d(2), (x,), opset=17, dynamo=False, ways=True, **IO)
    yield Case("lp-pool2d-p2-relu", lp_pool2d_relu(2), (x,), opset=17, dynamo=False, **IO)
    yield Case("lp-pool2d-p3", lp_pool2d_relu(3), (x,), opset=17, dynamo=False, **IO)
    # Workarounds: the same function, judged against the original case's torch output.
    yield Case("rewritten-p2-mul", rewritten(2, "mul"), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="lp-pool2d-p2", **IO)
    yield Case("rewritten-p2-pow", rewritten(2, "pow"), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="lp-pool2d-p2", **IO)
    yield Case("rewritten-p2-relu-mul", rewritten(2, "mul", relu=True), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="lp-pool2d-p2-relu", **IO)
    yield Case("rewritten-p2-relu-pow", rewritten(2, "pow", relu=True), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="lp-pool2d-p2-relu", **IO)
    yield Case("rewritten-p3-mul", rewritten(3, "mul", relu=True), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="lp-pool2d-p3", **IO)
    yield Case("rewritten-p3-pow", rewritten(3, "pow", relu=True), (x,), opset=17, dynamo=False, trigger=False,
               rewrites="lp-pool2d-p3", **IO)
    yield Case("avg-pool2d", Fn(lambda x: F.avg_pool2d(x, 2)), (x,), opset=17, dynamo=False, trigger=False, **IO)


def variants():
    x, seq = randn(1, 8, 16, 16), randn(1, 8, 30)
    yield Case("p1", lp_pool2d(1), (x,), opset=17, dynamo=False, **IO)
    yield Case("p4-stride1", lp_pool2d(4, 3, stride=1), (x,), opset=17, dynamo=False, **IO)
    yield Case("k3-stride2-ceil", lp_pool2d(2, 3, stride=2, ceil_mode=True), (x,), opset=17, dynamo=False, **IO)
    yield Case("lp-pool1d-p2", lp_pool1d(2), (seq,), opset=17, dynamo=False, **IO)
    yield Case("module-lppool2d", seeded(nn.LPPool2d, 2, 2), (x,), opset=17, dynamo=False, **IO)
    # nn.LPPool2d / nn.LPPool1d inside a model: pnnx keeps the module, as nn.LPPool2d
    yield Case("conv-module-lppool2d", seeded(lambda: nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                                                                    nn.LPPool2d(2, 2))), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("conv-module-lppool1d", seeded(lambda: nn.Sequential(nn.Conv1d(8, 8, 3, padding=1),
                                                                    nn.LPPool1d(2, 3))), (seq,),
               opset=17, dynamo=False, **IO)
    yield Case("conv-then-p3", seeded(lambda: ConvThen(nn.Conv2d(8, 8, 3, padding=1), lp_pool2d_relu(3))), (x,),
               opset=17, dynamo=False, **IO)
    yield Case("cbam-lp-gate", seeded(Gate), (x,), opset=17, dynamo=False, **IO)
    # Near misses: the pools pnnx lowers to ncnn's Pooling, lp_pool with p=inf (torch: max_pool2d of abs),
    # and the rewrite.
    yield Case("avg-pool2d-near-miss", Fn(lambda x: F.avg_pool2d(x, 2)), (x,), opset=17, dynamo=False, **IO)
    yield Case("max-pool2d-near-miss", Fn(lambda x: F.max_pool2d(x, 2)), (x,), opset=17, dynamo=False, **IO)
    yield Case("p-inf-near-miss", lp_pool2d(float("inf")), (x,), opset=17, dynamo=False, **IO)
    yield Case("rewritten-mul-near-miss", rewritten(2, "mul"), (x,), opset=17, dynamo=False, **IO)

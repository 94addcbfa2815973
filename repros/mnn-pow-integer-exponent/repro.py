"""KB154: a p-norm with an integer p (torch.linalg.vector_norm(x, ord=3)) exported with dynamo=True, in MNN.

The dynamo exporter writes |x| ** p as Pow(|x|, int64 p); the TorchScript exporter writes a float exponent."""

import numpy as np
import torch
from onnx import numpy_helper
from torch.nn import functional as F

from kb.blocks import ONE_FILE, Fn, randn
from kb.export import Case

SHAPE = (1, 8, 6, 10)


def exponent_as(dtype):
    """An edit that makes every constant exponent of a Pow a `dtype` tensor: int64 as dynamo writes an integer
    power; float32 is the workaround on the ONNX file."""

    def edit(model):
        consts = {i.name: i for i in model.graph.initializer}
        consts.update({n.output[0]: n.attribute[0].t for n in model.graph.node if n.op_type == "Constant"})
        for node in model.graph.node:
            if node.op_type == "Pow" and node.input[1] in consts:
                t = consts[node.input[1]]
                t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(dtype), t.name))

    return edit


def norm(ord, dim=1, keepdim=True):
    return Fn(lambda t: torch.linalg.vector_norm(t, ord=ord, dim=dim, keepdim=keepdim))


def cases():
    x = randn(*SHAPE)
    yield Case("ord3-dynamo", norm(3), (x,), ["x"], ["y"], opset=18, dynamo=True, export_kwargs=ONE_FILE, ways=True)
    # The workarounds, on the same input: p as a float (dynamo then writes a float exponent), or the TorchScript exporter.
    yield Case("ord3-float", norm(3.0), (x,), ["x"], ["y"], opset=18, dynamo=True, export_kwargs=ONE_FILE,
               trigger=False, rewrites="ord3-dynamo")
    yield Case("ord3-torchscript", norm(3), (x,), ["x"], ["y"], opset=17, dynamo=False,
               trigger=False, rewrites="ord3-dynamo")
    # The dynamo export itself, its int64 exponent cast to float32 in the ONNX file.
    yield Case("ord3-cast-exponent", norm(3), (x,), ["x"], ["y"], opset=18, dynamo=True, export_kwargs=ONE_FILE,
               trigger=False, rewrites="ord3-dynamo", edit=exponent_as(np.float32))


def variants():
    x = randn(*SHAPE)
    io = dict(input_names=["x"], output_names=["y"], opset=18, dynamo=True, export_kwargs=ONE_FILE)
    yield Case("ord4", norm(4), (x,), **io)  # even p: no Abs, Pow(x, 4) straight on the input
    yield Case("ord-minus1", norm(-1), (x,), **io)
    yield Case("last-axis-no-keepdim", norm(3, dim=-1, keepdim=False), (x,), **io)
    yield Case("all-axes", norm(3, dim=None, keepdim=False), (x,), **io)
    yield Case("torch-norm-p3", Fn(lambda t: torch.norm(t, p=3, dim=1)), (x,), **io)
    yield Case("normalize-p3", Fn(lambda t: F.normalize(t, p=3, dim=1)), (x,), **io)
    yield Case("pow-int-tensor", Fn(lambda t: torch.pow(t.abs(), torch.tensor(3))), (x,), **io)
    # The TorchScript export with its float exponent made int64: the exponent's type, not the exporter, decides.
    yield Case("torchscript-int-exponent", Fn(lambda t: t ** 3), (x,), ["x"], ["y"], opset=17, dynamo=False,
               edit=exponent_as(np.int64))
    # near misses: float exponents, or no Pow
    yield Case("ord-half", norm(0.5), (x,), **io)
    yield Case("ord-inf", norm(float("inf")), (x,), **io)
    yield Case("cube", Fn(lambda t: t ** 3), (x,), **io)  # x ** 3: dynamo writes Pow(x, 3.0)
    yield Case("torch-norm-p3-float", Fn(lambda t: torch.norm(t, p=3.0, dim=1)), (x,), **io)
    yield Case("normalize-p3-float", Fn(lambda t: F.normalize(t, p=3.0, dim=1)), (x,), **io)
    yield Case("pow-float-tensor", Fn(lambda t: torch.pow(t.abs(), torch.tensor(3.0))), (x,), **io)

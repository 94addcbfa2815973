"""KB179 (regression guard, Tencent/ncnn#5660): an ONNX Unsqueeze that inserts two axes at once, as
onnx-simplifier merges torch's two single-axis Unsqueezes of y[:, :, None, None] and as the dynamo exporter writes
it, converted by pnnx from the ONNX file. pnnx 20240815 to 20250912 write an ncnn ExpandDims with one axis (the
wrong one): ncnn refuses to load it, or the unsqueezed tensor broadcasts the wrong way; 20240603 leaves the op
unconverted; fixed from 20250924. pnnx before 20240603 cannot read ONNX."""

import torch
from torch import nn

from kb.blocks import Fn, randn
from kb.export import Case

SIM = dict(opset=17, dynamo=False, simplify=True)  # torch.onnx.export, then onnxsim: one Unsqueeze, axes [2, 3]


def to_4d(y):
    """(1, C) -> (1, C, 1, 1): two Unsqueezes from torch, one with axes [2, 3] after onnxsim."""
    return y[:, :, None, None]


def reshaped(y):
    """The workaround: the same (1, C, 1, 1) as a Reshape."""
    return y.reshape(y.shape[0], y.shape[1], 1, 1)


class Gate(nn.Module):
    """A squeeze-excitation gate: the channel means, a sigmoid, unsqueezed back to (1, C, 1, 1) to scale x."""

    def __init__(self, unsqueeze):
        super().__init__()
        self.unsqueeze = unsqueeze

    def forward(self, x):
        return x * self.unsqueeze(torch.sigmoid(x.mean(dim=(2, 3))))


def negative_axes(model):
    """The same Unsqueeze with its axes written negative ([-2, -1]), as other exporters write them."""
    import onnx

    names = {n.input[1] for n in model.graph.node if n.op_type == "Unsqueeze"}
    for init in model.graph.initializer:
        if init.name in names:
            axes = onnx.numpy_helper.to_array(init)
            init.CopyFrom(onnx.numpy_helper.from_array(axes - 4, init.name))


def cases():
    x = randn(1, 8, 4, 4)
    yield Case("se-gate", Gate(to_4d), (x,), opset=17, dynamo=False, simplify=True,
               ways=["opset11", "opset13", "opset18", "dynamo", "opset13-onnxsim", "dynamo-onnxsim"])
    # the thread's shape: the unsqueeze is the model's last op
    yield Case("two-axes", Fn(to_4d), (randn(1, 8, seed=2),), **SIM)
    # torch.onnx.export(..., dynamo=False) without onnxsim: one Unsqueeze per axis
    yield Case("one-axis-each", Gate(to_4d), (x,), opset=17, dynamo=False, trigger=False, rewrites="se-gate")
    yield Case("reshape", Gate(reshaped), (x,), **SIM, trigger=False, rewrites="se-gate")
    # pnnx's own path: the traced model (aten::unsqueeze twice)
    yield Case("torchscript", Gate(to_4d), (x,), opset=17, dynamo=False, trigger=False, torchscript=True)


def variants():
    yield Case("axes-1-2", Fn(lambda y: y[:, None, None, :]), (randn(1, 8, seed=3),), **SIM)
    yield Case("axes-1-3", Fn(lambda y: y[:, None, :, None]), (randn(1, 8, seed=4),), **SIM)
    yield Case("axes-2-3-of-3d", Fn(lambda y: y[:, :, None, None]), (randn(1, 4, 6, seed=5),), **SIM)
    yield Case("negative-axes", Fn(to_4d), (randn(1, 8, seed=6),), **SIM, edit=negative_axes)
    yield Case("then-relu", Fn(lambda y: torch.relu(y[:, :, None, None])), (randn(1, 8, seed=7),), **SIM)
    yield Case("opset11-attribute", Fn(to_4d), (randn(1, 8, seed=8),), opset=11, dynamo=False, simplify=True)

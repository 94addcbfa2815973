"""KB091: an ONNX MaxPool / AveragePool with no `strides` attribute (ONNX's default: stride 1 on every axis)
kills MNN: SIGFPE for a 1-D or 2-D pool, SIGSEGV for a 3-D one. torch's exporters always write `strides`, so
the cases delete it from torch's export (Case.edit), as a graph written by hand or by another tool leaves it out."""

import torch
from onnx import helper
from torch import nn

from kb.blocks import seeded
from kb.export import Case

POOLS = ("AveragePool", "MaxPool")


class Net(nn.Module):
    """Conv -> ReLU -> a pool (max or average; 1-D, 2-D or 3-D)."""

    def __init__(self, kind="avg", dim=2, kernel=3, stride=1, padding=1):
        super().__init__()
        conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dim]
        pool = {("avg", 1): nn.AvgPool1d, ("avg", 2): nn.AvgPool2d, ("avg", 3): nn.AvgPool3d,
                ("max", 1): nn.MaxPool1d, ("max", 2): nn.MaxPool2d, ("max", 3): nn.MaxPool3d}[kind, dim]
        self.conv = conv(3, 8, 3, padding=1)
        self.pool = pool(kernel, stride, padding)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


class Adaptive(nn.Module):
    """Conv -> ReLU -> AdaptiveAvgPool2d(4), which torch writes as an AveragePool (kernel and strides 4)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(4)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def image(seed=1, dim=2):
    torch.manual_seed(seed)
    return torch.randn(*{1: (1, 3, 20), 2: (1, 3, 16, 16), 3: (1, 3, 6, 8, 8)}[dim])


def without_strides(model):
    """Delete `strides` from every pool, as a graph written without it has none."""
    for node in model.graph.node:
        if node.op_type in POOLS:
            kept = [a for a in node.attribute if a.name != "strides"]
            del node.attribute[:]
            node.attribute.extend(kept)


def strides_stated(model):
    """The workaround: the same graph with ONNX's default written back, strides=[1, ...] per kernel axis."""
    without_strides(model)
    for node in model.graph.node:
        if node.op_type in POOLS:
            rank = len(next(a.ints for a in node.attribute if a.name == "kernel_shape"))
            node.attribute.append(helper.make_attribute("strides", [1] * rank))


def cases():
    no, io = dict(edit=without_strides), dict(input_names=["x"], output_names=["y"], opset=18, dynamo=True)
    yield Case("avgpool-no-strides", seeded(Net), (image(),), **io, **no)
    yield Case("maxpool-no-strides", seeded(Net, kind="max"), (image(),), **io, **no)
    yield Case("avgpool1d-no-strides", seeded(Net, dim=1), (image(dim=1),), **io, **no)
    yield Case("maxpool3d-no-strides", seeded(Net, kind="max", dim=3), (image(dim=3),), **io, **no)
    # Control: the AveragePool as torch exports it, strides written.
    yield Case("avgpool", seeded(Net), (image(),), **io, trigger=False)
    # The workaround's models: the same exports with strides=[1, ...] written back.
    yield Case("avgpool-explicit", seeded(Net), (image(),), **io, trigger=False, rewrites="avgpool-no-strides",
               edit=strides_stated)
    yield Case("maxpool3d-explicit", seeded(Net, kind="max", dim=3), (image(dim=3),), **io, trigger=False,
               rewrites="maxpool3d-no-strides", edit=strides_stated)


def variants():
    # Near misses: every torch export of a pool, whatever the exporter, opset or pool, writes `strides`.
    x = image()
    yield Case("avg-k3-s1", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-default-stride", seeded(Net, seed=3, kernel=2, stride=None, padding=0), (x,), ["x"], ["y"],
               opset=18, dynamo=True)
    yield Case("max-k3-s1", seeded(Net, seed=3, kind="max"), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("avg-opset13", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=13, dynamo=False)
    yield Case("avg-torchscript", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("avg-onnxsim", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False, simplify=True)
    yield Case("adaptive-avg", seeded(Adaptive, seed=3), (x,), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("adaptive-avg-torchscript", seeded(Adaptive, seed=3), (x,), ["x"], ["y"], opset=17, dynamo=False)
    yield Case("avg1d", seeded(Net, seed=3, dim=1), (image(dim=1),), ["x"], ["y"], opset=18, dynamo=True)
    yield Case("max3d", seeded(Net, seed=3, kind="max", dim=3), (image(dim=3),), ["x"], ["y"], opset=18, dynamo=True)
    # The same graphs without strides, as another tool writes them: these reproduce.
    yield Case("avg-opset13-no-strides", seeded(Net, seed=3), (x,), ["x"], ["y"], opset=13, dynamo=False,
               edit=without_strides)
    yield Case("max-onnxsim-no-strides", seeded(Net, seed=3, kind="max"), (x,), ["x"], ["y"], opset=17, dynamo=False,
               simplify=True, edit=without_strides)

"""KB057: ncnn's Python Mat(array) does not own the array's memory, nor read its strides."""

import torch
from torch import nn

from kb.blocks import ConvThen
from kb.export import Case


def case(name, **kw):
    torch.manual_seed(0)
    # Any model will do: the hazard is in how the input is handed to ncnn, not in the graph.
    model = ConvThen(nn.Conv2d(3, 8, 3, padding=1), torch.relu)
    # No ONNX graph pattern is involved (no trigger); pnnx converts the traced model (torchscript=True).
    return Case(name, model, (torch.randn(1, 3, 16, 16),), ["in0"], ["out0"], opset=17, dynamo=False,
                torchscript=True, **kw)


def cases():
    yield case("conv-relu")  # fed by test_checks.feed the ways users write it, and the right way

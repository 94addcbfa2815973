"""KB228: the model whose .param the checks write by hand (test_checks.py), with a quoted string value that is
only an opening quote; the graph itself is not the cause."""

import torch
from torch import nn

from kb.blocks import randn
from kb.export import Case


class ReluSigmoid(nn.Module):
    """Two weightless layers, as a hand-written .param holds them: a ReLU, then a Sigmoid."""

    def forward(self, x):
        return torch.sigmoid(torch.relu(x))


def cases():
    yield Case("relu-sigmoid", ReluSigmoid(), (randn(1, 3, 8, 8),), ["in0"], ["out0"], opset=13, dynamo=False)

"""KB085: torch's dynamo exporter writes the weights of model.onnx to model.onnx.data. mnnconvert given
model.onnx without model.onnx.data beside it prints "Can't open file", says "Converted Success!" and writes a
model whose weights are whatever memory held."""

import torch
from torch import nn

from kb.export import Case


class Net(nn.Module):
    """Conv -> ReLU -> pool -> Linear: every weight is larger than 256 bytes, so the dynamo export puts each in
    model.onnx.data."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


class Recurrent(nn.Module):
    """A GRU over a sequence, then a Linear: its weights go to model.onnx.data as well."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(12, 16, batch_first=True)
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        return self.fc(self.gru(x)[0])


def cases():
    torch.manual_seed(0)
    net, x = Net(), torch.randn(1, 3, 16, 16)
    yield Case("conv", net, (x,), ["x"], ["y"], opset=18, dynamo=True)  # torch 2.13's default: external data
    yield Case("conv-inline", net, (x,), ["x"], ["y"], opset=18, dynamo=True, rewrites="conv",
               export_kwargs={"external_data": False})
    torch.manual_seed(1)
    yield Case("gru", Recurrent(), (torch.randn(1, 6, 12),), ["x"], ["y"], opset=18, dynamo=True)

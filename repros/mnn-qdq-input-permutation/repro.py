"""known-bug: alibaba/MNN#3239 -- onnxruntime QDQ models get their NCHW input permuted to (C, N, H, W) by MNN.

The float model is exported here; the checks quantize it with onnxruntime.quantization, as users do.
"""

import torch
from torch import nn

from kb.export import Case


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x))


def cases():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 32, 32)
    # The float model has no Q/DQ nodes yet: the trigger appears once onnxruntime quantizes it.
    net = Net()
    yield Case("float-conv", net, (x,), ["input"], ["output"], opset=13, dynamo=False, trigger=False)
    # Batch 3 == 3 channels: the permuted shape is valid, so nothing fails loudly.
    yield Case("float-conv-batch3", net, (torch.randn(3, 3, 32, 32),), ["input"], ["output"], opset=13,
               dynamo=False, trigger=False)

"""KB184 (pnnx/pnnx#130): a model with two outputs, the second computed before the first (as a YOLOv8-seg head
computes its mask prototypes before the detections it returns first). pnnx writes the ncnn layers in the order the
traced graph computes them from 20240410 on, so ncnn's Net.output_names() lists out1 before out0; code that takes
the outputs in that order gets them swapped. pnnx 20240226 wrote them the other way round."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

IO = dict(input_names=["in0"], opset=13, dynamo=False, torchscript=True)


class TwoHeads(nn.Module):
    """A stem, then two 1x1 heads on its output: `order` says which head the forward computes first; the model
    returns (head, proto) whatever the order, as YOLOv8-seg returns (detections, prototypes)."""

    def __init__(self, order="proto-first"):
        super().__init__()
        self.order = order
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 6, 1)
        self.proto = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = torch.relu(self.stem(x))
        if self.order == "proto-first":  # YOLOv8-seg: p = self.proto(x[0]) before the detect branches
            p = self.proto(a)
            y = self.head(a)
        else:  # the outputs computed in the order they are returned
            y = self.head(a)
            p = self.proto(a)
        return y, p


class ThreeHeads(nn.Module):
    """Three outputs, computed last to first."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.heads = nn.ModuleList(nn.Conv2d(8, c, 1) for c in (6, 4, 2))

    def forward(self, x):
        a = torch.relu(self.stem(x))
        c = self.heads[2](a)
        b = self.heads[1](a)
        return self.heads[0](a), b, c


class ManyHeads(nn.Module):
    """Twelve outputs of 1 to 12 channels, computed in the order they are returned."""

    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList(nn.Conv2d(3, c, 1) for c in range(1, 13))

    def forward(self, x):
        return tuple(h(x) for h in self.heads)


def cases():
    # pnnx's TorchScript path, as Ultralytics' NCNN export takes it; no ONNX op says anything about output order
    yield Case("proto-first", seeded(TwoHeads, "proto-first"), (randn(1, 3, 8, 8),), **IO)
    # sorted(output_names()) with more than ten outputs: 'out10' sorts before 'out2'
    yield Case("twelve-outputs", seeded(ManyHeads), (randn(1, 3, 4, 4, seed=4),), trigger=False, **IO)


def variants():
    yield Case("in-return-order", seeded(TwoHeads, "in-order"), (randn(1, 3, 8, 8, seed=2),), **IO)
    yield Case("three-reversed", seeded(ThreeHeads), (randn(1, 3, 8, 8, seed=3),), **IO)

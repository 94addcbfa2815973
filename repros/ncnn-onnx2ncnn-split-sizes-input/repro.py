"""known-bug: Tencent/ncnn#5508 -- onnx2ncnn reads a Split's sizes only from the `split` attribute (opset <= 12).
From opset 13 they are the Split's second input: onnx2ncnn splits equally instead, keeps the int64 sizes as a
MemoryData blob, and writes them as twice as many floats as the .param declares, so every later weight is shifted."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case

C_IN, C, C_OUT = 4, 8, 3
SIZES = [2, 6]  # torch.split(y, [2, 6], dim=1): unequal sizes, as a detection head's split((box, classes))


class SplitBlock(nn.Module):
    """conv, torch.split along channels, a 1x1 conv on each piece, summed."""

    def __init__(self, sizes=SIZES):
        super().__init__()
        self.sizes = list(sizes)
        self.conv = nn.Conv2d(C_IN, C, 1)
        self.heads = nn.ModuleList(nn.Conv2d(n, C_OUT, 1) for n in self.sizes)

    def pieces(self, y):
        return torch.split(y, self.sizes, dim=1)

    def forward(self, x):
        y = self.conv(x)
        return sum(h(p) for h, p in zip(self.heads, self.pieces(y)))


class DeepSplitBlock(nn.Module):
    """Four 3x3 convs (4-32-32-64-64), torch.split(y, [16, 48], dim=1), a 1x1 conv on each piece, summed: about
    70k weights after the sizes constant, where SplitBlock has about 90."""

    def __init__(self, widths=(C_IN, 32, 32, 64, 64), sizes=(16, 48)):
        super().__init__()
        self.sizes = list(sizes)
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3, padding=1) for a, b in zip(widths[:-1], widths[1:]))
        self.heads = nn.ModuleList(nn.Conv2d(n, C_OUT, 1) for n in self.sizes)

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x))
        return sum(h(p) for h, p in zip(self.heads, torch.split(x, self.sizes, dim=1)))


class SlicedBlock(SplitBlock):
    """The workaround (and a near miss): the same block, its pieces cut by slicing instead of torch.split."""

    def pieces(self, y):
        out, start = [], 0
        for n in self.sizes:
            out.append(y[:, start:start + n])
            start += n
        return out


def sliced(block: SplitBlock) -> SlicedBlock:
    new = SlicedBlock(block.sizes)
    new.load_state_dict(block.state_dict())
    return new


class ChunkBlock(nn.Module):
    """torch.chunk(y, 2, dim=1): equal halves."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C_IN, C, 1)
        self.a, self.b = nn.Conv2d(C // 2, C_OUT, 1), nn.Conv2d(C // 2, C_OUT, 1)

    def forward(self, x):
        p, q = torch.chunk(self.conv(x), 2, dim=1)
        return self.a(p) * self.b(q)


class C2f(nn.Module):
    """YOLOv8's C2f block (ReLU for SiLU): cv1, cut in two halves, a bottleneck on the second, concat, cv2.
    Its forward() cuts with chunk(2, 1), its forward_split() with split((c, c), 1): `split=True` picks the latter."""

    def __init__(self, split=False):
        super().__init__()
        self.cv1 = nn.Conv2d(C_IN, C, 1)
        self.m = nn.Sequential(nn.Conv2d(C // 2, C // 2, 3, padding=1), nn.ReLU(), nn.Conv2d(C // 2, C // 2, 3, padding=1))
        self.cv2 = nn.Conv2d(C + C // 2, C_OUT, 1)
        self.use_split = split

    def forward(self, x):
        y = torch.relu(self.cv1(x))
        a, b = y.split((C // 2, C // 2), 1) if self.use_split else y.chunk(2, 1)
        return self.cv2(torch.cat([a, b, b + self.m(b)], 1))


class DetectSplit(nn.Module):
    """A detection head's output split into box and class parts (YOLOv8: split((4 * reg_max, nc), 1)), sigmoid on
    the classes, concatenated back."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C_IN, 16 + 5, 1)

    def forward(self, x):
        box, cls = self.conv(x).split((16, 5), 1)
        return torch.cat([box, cls.sigmoid()], 1)


class WeightlessSplit(nn.Module):
    """No weight after the split: only the sizes are lost (the pieces come out equal)."""

    def forward(self, x):
        a, b = torch.split(x, [1, 3], dim=1)
        return torch.cat([b * 2, a], 1)


IO = dict(input_names=["in0"], output_names=["out0"])


def cases():
    block = seeded(SplitBlock)
    x = randn(1, C_IN, 6, 6)
    yield Case("split-block", block, (x,), opset=13, dynamo=False, torchscript=True, **IO)
    # Workarounds: the same weights and input, exported at opset 11 (sizes as an attribute) or cut by slicing.
    yield Case("split-block-opset11", block, (x,), opset=11, dynamo=False, trigger=False, rewrites="split-block",
               **IO)
    yield Case("split-block-sliced", sliced(block), (x,), opset=13, dynamo=False, trigger=False,
               rewrites="split-block", **IO)
    yield Case("weightless-split", WeightlessSplit(), (x,), opset=13, dynamo=False, **IO)
    yield Case("deep-split-block", seeded(DeepSplitBlock), (x,), opset=13, dynamo=False, **IO)


def variants():
    x = randn(1, C_IN, 6, 6)
    yield Case("split-opset13", seeded(SplitBlock), (x,), opset=13, dynamo=False, **IO)
    yield Case("split-opset17", seeded(SplitBlock), (x,), opset=17, dynamo=False, **IO)
    yield Case("split-opset18", seeded(SplitBlock), (x,), opset=18, dynamo=False, **IO)
    yield Case("split-dynamo", seeded(SplitBlock), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False}, **IO)  # inline weights: not ncnn-onnx2ncnn-external-data
    yield Case("split-onnxsim", seeded(SplitBlock), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("three-way-split", seeded(SplitBlock, [2, 2, 4]), (x,), opset=13, dynamo=False, **IO)
    yield Case("yolov8-c2f-split", seeded(C2f, split=True), (x,), opset=13, dynamo=False, **IO)
    yield Case("detect-head-split", seeded(DetectSplit), (x,), opset=13, dynamo=False, **IO)
    # Near misses: the sizes as an attribute (opset 11); slicing instead of torch.split; torch.chunk, which the
    # TorchScript exporter writes as two Slices (with Shape arithmetic that onnxsim folds, as onnx2ncnn users do).
    yield Case("split-opset11-near-miss", seeded(SplitBlock), (x,), opset=11, dynamo=False, **IO)
    yield Case("chunk-near-miss", seeded(ChunkBlock), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("yolov8-c2f-chunk-near-miss", seeded(C2f), (x,), opset=13, dynamo=False, simplify=True, **IO)
    yield Case("slicing-near-miss", sliced(seeded(SplitBlock)), (x,), opset=13, dynamo=False, **IO)

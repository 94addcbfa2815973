"""KB176: ONNX TopK on tied values. ONNX's TopK resolves ties by index (the lower index first); MNN's CPU TopK
(k > 1) sorts by value only, so equal values come out in another order, and at the cut another of the tied
elements may be kept. torch.topk does not promise an order for ties either, so the reference here is ONNX's
rule, computed in torch by a stable sort: a small autograd Function whose forward is that sort and whose
export is the TopK node (onnxruntime gives the same indices on every case)."""

import torch
from torch import nn

from kb.export import Case


class OnnxTopK(torch.autograd.Function):
    """TopK with ONNX's tie rule (sorted, lower index first among equal values); exported as one TopK node."""

    @staticmethod
    def forward(ctx, x, k, axis, largest):
        v, i = torch.sort(x, dim=axis, descending=bool(largest), stable=True)
        return v.narrow(axis, 0, k), i.narrow(axis, 0, k)

    @staticmethod
    def symbolic(g, x, k, axis, largest):
        kk = g.op("Constant", value_t=torch.tensor([k], dtype=torch.int64))
        return g.op("TopK", x, kk, axis_i=axis, largest_i=largest, sorted_i=1, outputs=2)


class TopIdx(nn.Module):
    """The indices of the k largest (smallest) values along `axis`."""

    def __init__(self, k, axis=-1, largest=1, how="onnx"):
        super().__init__()
        self.k, self.axis, self.largest, self.how = k, axis, largest, how

    def forward(self, x):
        if self.how == "onnx":
            return OnnxTopK.apply(x, self.k, self.axis, self.largest)[1]
        # The workaround: make every key distinct, favouring the lower index (an offset far below the gap
        # between distinct values), and take TopK of the keys.
        n = x.shape[self.axis]
        shape = [1] * x.dim()
        shape[self.axis] = n
        offset = (torch.arange(n, dtype=x.dtype) * 1e-3).reshape(shape)
        key = x - offset if self.largest else x + offset
        return torch.topk(key, self.k, dim=self.axis, largest=bool(self.largest))[1]


class Argmax(nn.Module):
    """Near miss: torch.argmax on the same tied values (MNN returns the first index, as ONNX asks)."""

    def forward(self, x):
        return x.argmax(-1, keepdim=True)


class V10Head(nn.Module):
    """YOLOv10's end-to-end head (ultralytics' v10postprocess): TopK over the anchors' best class score, gather
    their boxes and scores, TopK again over the flattened scores, then boxes, score and label per detection."""

    def __init__(self, nc=4, max_det=6):
        super().__init__()
        self.nc, self.max_det = nc, max_det

    def forward(self, preds):
        boxes, scores = preds.split([4, self.nc], dim=-1)
        _, index = OnnxTopK.apply(scores.amax(dim=-1), self.max_det, -1, 1)
        index = index.unsqueeze(-1)
        boxes = torch.gather(boxes, 1, index.repeat(1, 1, 4))
        scores = torch.gather(scores, 1, index.repeat(1, 1, self.nc))
        scores, index = OnnxTopK.apply(scores.flatten(1), self.max_det, -1, 1)
        labels = index % self.nc
        index = index // self.nc
        boxes = boxes.gather(1, index.unsqueeze(-1).repeat(1, 1, 4))
        return torch.cat([boxes, scores.unsqueeze(-1), labels.unsqueeze(-1).to(boxes.dtype)], dim=-1)


def tied(*shape, seed=0, dtype=torch.float32):
    """Values drawn from -2..2: many equal values in every row."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-2, 3, shape, generator=g).to(dtype)


def preds(seed=0, anchors=16, nc=4):
    """Detector outputs: distinct box coordinates, class scores on a coarse grid (saturated or rounded
    scores tie, as an fp16 or quantized sigmoid's do)."""
    g = torch.Generator().manual_seed(seed)
    boxes = torch.rand(1, anchors, 4, generator=g) * 100
    scores = torch.randint(0, 4, (1, anchors, nc), generator=g).float() / 4
    return torch.cat([boxes, scores], -1)


def case(name, module, x, opset=13, **kw):
    return Case(name, module, (x,), ["in0"], ["out0"], opset=opset, dynamo=False, **kw)


def cases():
    x = tied(4, 16)
    yield case("topk-ties", TopIdx(5), x)
    yield case("v10-head", V10Head(), preds(), opset=17)
    # Workaround: distinct keys, the lower index first among equal values; the same input.
    yield case("topk-ties-offset", TopIdx(5, how="offset"), x, rewrites="topk-ties")
    # Control: k = 1 on the same tied values (MNN's one-element path keeps the first maximum).
    yield case("topk-k1", TopIdx(1), x, trigger=False)


def variants():
    yield case("k2", TopIdx(2), tied(3, 8, seed=1))
    yield case("smallest", TopIdx(5, largest=0), tied(4, 16, seed=2))
    yield case("axis0", TopIdx(4, axis=0), tied(16, 3, seed=3))
    yield case("rank3", TopIdx(5, axis=2), tied(2, 3, 12, seed=4))
    yield case("full-sort", TopIdx(12), tied(2, 12, seed=5))
    yield case("opset11", TopIdx(5), tied(4, 16, seed=6), opset=11)
    yield case("opset17", TopIdx(5), tied(4, 16, seed=7), opset=17)
    yield case("int64", TopIdx(5), tied(4, 16, seed=8, dtype=torch.int64))
    yield case("v10-head-opset13", V10Head(), preds(seed=1), opset=13)
    # Near misses: k = 1, and ArgMax, on tied values.
    yield case("k1-near-miss", TopIdx(1, axis=0), tied(16, 3, seed=3))
    yield case("argmax-near-miss", Argmax(), tied(4, 16, seed=9))

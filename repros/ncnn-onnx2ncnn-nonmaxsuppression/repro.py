"""KB195: a detector's post-processing with torchvision.ops.nms (an ONNX NonMaxSuppression) through onnx2ncnn.

torchvision is not a dependency of this project, so `Nms` is written here: its forward is the greedy NMS
torchvision's nms computes, and its symbolic writes the NonMaxSuppression node as torchvision's ONNX symbolic
for nms does for the TorchScript exporter (dynamo=False): boxes (1, N, 4), scores (1, 1, N), a constant box limit
and IoU threshold; the box index (column 2 of its (K, 3) output) is read with one Gather, where torchvision
selects the column and squeezes it. The head keeps the batch axis first, as onnx2ncnn assumes."""

import torch
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


def greedy_nms(boxes, scores, iou_threshold):
    """The indices of the boxes kept, by decreasing score: each box drops the lower-scored ones it overlaps by
    more than `iou_threshold` (intersection over union)."""
    area = (boxes[:, 2] - boxes[:, 0]).clamp(min=0) * (boxes[:, 3] - boxes[:, 1]).clamp(min=0)
    dropped = torch.zeros(boxes.shape[0], dtype=torch.bool)
    keep = []
    for i in scores.argsort(descending=True).tolist():
        if dropped[i]:
            continue
        keep.append(i)
        size = (torch.minimum(boxes[i, 2:], boxes[:, 2:]) - torch.maximum(boxes[i, :2], boxes[:, :2])).clamp(min=0)
        inter = size[:, 0] * size[:, 1]
        dropped |= inter / (area[i] + area - inter) > iou_threshold
    return torch.tensor(keep, dtype=torch.int64)


class Nms(torch.autograd.Function):
    """torchvision.ops.nms for the TorchScript exporter, on one image's boxes (1, N, 4) and scores (1, N)."""

    @staticmethod
    def forward(ctx, boxes, scores, iou_threshold):
        return greedy_nms(boxes[0], scores[0], iou_threshold)

    @staticmethod
    def symbolic(g, boxes, scores, iou_threshold):
        from torch.onnx import symbolic_helper as sh

        selected = g.op("NonMaxSuppression", boxes, sh._unsqueeze_helper(g, scores, [1]),
                        g.op("Constant", value_t=torch.tensor([1 << 30], dtype=torch.int64)),
                        g.op("Constant", value_t=torch.tensor([iou_threshold], dtype=torch.float32)))
        return g.op("Gather", selected, g.op("Constant", value_t=torch.tensor(2, dtype=torch.int64)), axis_i=1)


class RpnHead(nn.Module):
    """As Faster R-CNN's region proposals: a box delta and a score for each of 16 anchors, decoded, then NMS;
    the kept boxes are the output. `post` names what sits around the NMS:
    - "nms": the boxes the NMS keeps;
    - "threshold": the boxes scoring over 0.3 first (torch.where, as torchvision's remove of low scores);
    - "batched": torchvision's batched_nms (each of two classes offset by its own distance);
    - "decode": no NMS, every decoded box (a near miss);
    - "clip": no NMS, every box clipped to the image (torchvision's clip_boxes_to_image; a near miss);
    - "outside": the NMS outside the exported graph (exported: the (1, 16, 5) boxes and scores; in torch: the
      same kept boxes as "nms"), the workaround."""

    def __init__(self, post="nms"):
        super().__init__()
        self.reg, self.cls, self.post = nn.Conv2d(8, 4, 1), nn.Conv2d(8, 1, 1), post
        self.register_buffer("anchors", torch.rand(1, 16, 2) * 8)

    def forward(self, x):
        delta = self.reg(x).reshape(1, 4, 16).permute(0, 2, 1)
        scores = torch.sigmoid(self.cls(x).reshape(1, 16))
        centre, half = self.anchors + delta[:, :, :2], torch.exp(delta[:, :, 2:]) * 2
        boxes = torch.cat([centre - half, centre + half], 2)
        if self.post == "decode":
            return boxes
        if self.post == "clip":
            return boxes.clamp(0, 16)
        if self.post == "outside" and torch.onnx.is_in_onnx_export():
            return torch.cat([boxes, scores.reshape(1, 16, 1)], 2)
        if self.post == "threshold":
            high = torch.where(scores[0] > 0.3)[0]
            boxes, scores = boxes[:, high], scores[:, high]
        if self.post == "batched":
            label = (torch.arange(16) % 2).to(boxes.dtype)
            return boxes[:, Nms.apply(boxes + (label * 100)[None, :, None], scores, 0.3)]
        return boxes[:, Nms.apply(boxes, scores, 0.3)]


def cases():
    x = randn(1, 8, 4, 4)
    yield Case("rpn-nms", seeded(RpnHead), (x,), dynamo=False,
               ways=["opset11", "opset17", "opset18", "opset17-onnxsim"])
    yield Case("nms-outside", seeded(RpnHead, "outside"), (x,), dynamo=False, trigger=False, rewrites="rpn-nms")


def variants():
    x = randn(1, 8, 4, 4, seed=2)
    yield Case("score-threshold", seeded(RpnHead, "threshold"), (x,), dynamo=False)
    yield Case("batched-nms", seeded(RpnHead, "batched"), (x,), dynamo=False)
    yield Case("decode-near-miss", seeded(RpnHead, "decode"), (x,), dynamo=False)
    yield Case("clip-near-miss", seeded(RpnHead, "clip"), (x,), dynamo=False)

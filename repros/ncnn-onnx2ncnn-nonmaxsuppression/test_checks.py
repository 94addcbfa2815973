import numpy as np

from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)


def greedy_nms(boxes, scores, iou_threshold):
    """The user's own NMS after the ncnn run: the indices kept, by decreasing score (as torchvision.ops.nms)."""
    area = np.clip(boxes[:, 2] - boxes[:, 0], 0, None) * np.clip(boxes[:, 3] - boxes[:, 1], 0, None)
    dropped = np.zeros(len(boxes), dtype=bool)
    keep = []
    for i in np.argsort(-scores, kind="stable"):
        if dropped[i]:
            continue
        keep.append(i)
        size = np.clip(np.minimum(boxes[i, 2:], boxes[:, 2:]) - np.maximum(boxes[i, :2], boxes[:, :2]), 0, None)
        inter = size[:, 0] * size[:, 1]
        dropped |= inter / (area[i] + area - inter) > iou_threshold
    return np.array(keep, dtype=np.int64)


@checks.workaround("ncnn", "nms-outside", needs=["onnx2ncnn"])
def onnx2ncnn_nms_outside(s):
    """The head exported without its NMS ((1, 16, 5): boxes and scores), onnx2ncnn, the ncnn runtime, then the NMS
    in numpy on ncnn's output; judged against the kept boxes torch gives."""
    dets = s.onnx2ncnn.run("nms-outside")
    d = dets.arrays["out0"].reshape(-1, 5)
    return Outputs(dets.case, {"out0": d[None, greedy_nms(d[:, :4], d[:, 4], 0.3), :4]}, f"{dets.source}, then NMS in numpy")
